"""Importing chat histories: pure parsers per format, and the pipeline that writes what they yield.

- formats/: one parser per export format (pure: they never touch the database).
- pipeline.py: import_paths, restore of memapp exports.
- demo.py: load_demo (data/demo.json and its shipped vectors); demo_vectors.py writes those vectors.
- run.py: one import run (batches, embedding, token counts, progress and the report).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from store.lazy import exports

if TYPE_CHECKING:
    from store.importing.demo import load_demo
    from store.importing.formats import (
        FORMATS,
        ImportFormatError,
        ImportProblem,
        detect_format,
        read_export,
        session_files,
    )
    from store.importing.formats.lines import session_id_from_name
    from store.importing.pipeline import (
        count_export,
        import_paths,
        is_memapp_export,
        summaries_due,
        summarize_due,
        unsummarised_messages,
    )
    from store.importing.run import ImportProgress, ImportReport, ImportTotals
    from store.importing.sessions import is_session_path

_WHERE = {
    "count_export": "store.importing.pipeline",
    "import_paths": "store.importing.pipeline",
    "is_memapp_export": "store.importing.pipeline",
    "summaries_due": "store.importing.pipeline",
    "summarize_due": "store.importing.pipeline",
    "unsummarised_messages": "store.importing.pipeline",
    "load_demo": "store.importing.demo",
    "ImportProgress": "store.importing.run",
    "ImportReport": "store.importing.run",
    "ImportTotals": "store.importing.run",
    "is_session_path": "store.importing.sessions",
    "FORMATS": "store.importing.formats",
    "ImportFormatError": "store.importing.formats",
    "ImportProblem": "store.importing.formats",
    "detect_format": "store.importing.formats",
    "read_export": "store.importing.formats",
    "session_files": "store.importing.formats",
    "session_id_from_name": "store.importing.formats.lines",
}

__all__ = [
    "FORMATS",
    "ImportFormatError",
    "ImportProblem",
    "ImportProgress",
    "ImportReport",
    "ImportTotals",
    "count_export",
    "detect_format",
    "import_paths",
    "is_memapp_export",
    "is_session_path",
    "load_demo",
    "read_export",
    "session_files",
    "session_id_from_name",
    "summaries_due",
    "summarize_due",
    "unsummarised_messages",
]

__getattr__, __dir__ = exports(__name__, _WHERE, globals())
