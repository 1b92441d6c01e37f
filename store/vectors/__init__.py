"""Vector rows in chat.db (sqlite-vec) and the nearest-neighbour search over them.

- rows.py: the tables, their layout and model bookkeeping, writes, and the KNN entry points.
- knn.py: the coarse 1-bit Hamming scan and the exact re-scoring behind them.
"""
