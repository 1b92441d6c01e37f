"""Hybrid search: keyword (FTS5) and semantic (vector) retrieval over memories, messages and summaries,
fused into one ranked list.

- engine.py: the SearchMixin on the Store (retrievers, filters, hydration of results).
- rank.py: the pure half (query expressions, fusion, neighbour expansion, snippets).
"""
