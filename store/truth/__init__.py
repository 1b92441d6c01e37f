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

from __future__ import annotations

from typing import TYPE_CHECKING

from store.lazy import exports

if TYPE_CHECKING:
    from store.truth.conflicts import (
        HEADLINES,
        KEEPS,
        OPTION_WORDS,
        Conflict,
        count_open,
        get_conflict,
        list_conflicts,
        open_conflict_ids,
        resolve_conflict,
    )
    from store.truth.current import current_memories, only_current
    from store.truth.timeline import Source

_WHERE = {
    "HEADLINES": "store.truth.conflicts",
    "KEEPS": "store.truth.conflicts",
    "OPTION_WORDS": "store.truth.conflicts",
    "Conflict": "store.truth.conflicts",
    "count_open": "store.truth.conflicts",
    "get_conflict": "store.truth.conflicts",
    "list_conflicts": "store.truth.conflicts",
    "open_conflict_ids": "store.truth.conflicts",
    "resolve_conflict": "store.truth.conflicts",
    "current_memories": "store.truth.current",
    "only_current": "store.truth.current",
    "Source": "store.truth.timeline",
}

__all__ = [
    "Conflict",
    "HEADLINES",
    "KEEPS",
    "OPTION_WORDS",
    "Source",
    "count_open",
    "current_memories",
    "get_conflict",
    "list_conflicts",
    "only_current",
    "open_conflict_ids",
    "resolve_conflict",
]

__getattr__, __dir__ = exports(__name__, _WHERE, globals())
