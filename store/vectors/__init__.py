"""Vector rows in chat.db (sqlite-vec) and the nearest-neighbour search over them.

- layout.py: the tables and why they are shaped so, the recorded model, creating/converting/dropping.
- rows.py: `VectorIndex`, one per connection (Store.vectors): writes, deletes and the KNN entry points,
  with the layout read once per write transaction.
- knn.py: the coarse 1-bit Hamming scan and the exact re-scoring behind them.
"""
