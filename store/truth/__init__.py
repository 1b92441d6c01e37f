"""Keeping memories true: is a new memory the same fact, an update, or a contradiction of an old one?

- features.py: what two texts disagree about, from the words (negation, antonyms, numbers, names…).
- classify.py: one new memory against one neighbour -> merge, supersede, review or add.
- conflicts.py: the review queue (memory_conflicts) and its resolutions.
- timeline.py: superseding (valid_from / valid_until / superseded_by) and provenance of a memory.
"""
