"""Vector rows in chat.db (sqlite-vec) and the nearest-neighbour search over them.

- layout.py: the tables and why they are shaped so, the recorded model, creating/converting/dropping.
- rows.py: `VectorIndex`, one per connection (Store.vectors): writes, deletes and the KNN entry points,
  with the layout read once per write transaction.
- knn.py: the coarse 1-bit Hamming scan and the exact re-scoring behind them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from store.lazy import exports

if TYPE_CHECKING:
    from store.vectors.layout import Facts, mismatch_reason, read_facts
    from store.vectors.rows import VectorIndex

_WHERE = {
    "Facts": "store.vectors.layout",
    "mismatch_reason": "store.vectors.layout",
    "read_facts": "store.vectors.layout",
    "VectorIndex": "store.vectors.rows",
}

__all__ = ["Facts", "VectorIndex", "mismatch_reason", "read_facts"]

__getattr__, __dir__ = exports(__name__, _WHERE, globals())
