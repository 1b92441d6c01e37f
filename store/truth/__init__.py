"""Keeping memories true: is a new memory the same fact, an update, or a contradiction of an old one?

- lexicon.py: the word lists the rules read with (negations, antonyms, comparisons, change markers…).
- features.py: what one text says, from the words (polarity, preferences, numbers, names, change).
- differences.py: what two texts disagree about (negation, antonym, swapped preference, changed value).
- classify.py: one new memory against one neighbour -> merge, supersede, review or add.
- conflicts.py: the review queue (memory_conflicts) and its resolutions.
- timeline.py: superseding (valid_from / valid_until / superseded_by) and provenance of a memory.
"""
