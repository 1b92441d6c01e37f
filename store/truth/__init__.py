"""Keeping memories true: is a new memory the same fact, a change of it, a second fact, or unclear?

- lexicon.py: the word lists the rules read with (negations, change cues, people, qualifiers, synonyms).
- slots.py: the kinds of fact a memory states, and whether each holds one value or many at a time.
- reading.py: what one text says (terms and what it denies, subject, slots, numbers, names, cues).
- compare.py: two readings side by side: the evidence (another subject? the same slot? a denial?).
- classify.py: one new memory against one neighbour -> merge, supersede, ask (review) or keep both.
- current.py: the one rule for what an assistant is sent (never a superseded memory).
- conflicts.py: the review queue (memory_conflicts), its plain-words explanation and the decisions.
- timeline.py: finding neighbours, superseding (valid_from / valid_until / superseded_by), provenance.
"""
