"""Importing chat histories: pure parsers per format, and the pipeline that writes what they yield.

- formats/: one parser per export format (pure: they never touch the database).
- pipeline.py: import_paths, load_demo, restore of memapp exports.
- run.py: one import run (batches, embedding, token counts, progress and the report).
"""
