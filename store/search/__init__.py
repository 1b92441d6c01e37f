"""Hybrid search: keyword (FTS5) and semantic (vector) retrieval over memories, messages and summaries,
fused into one ranked list.

- engine.py: the SearchMixin on the Store (retrievers, filters, hydration of results).
- rank.py: the pure half (query expressions, fusion, neighbour expansion, snippets).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from store.lazy import exports

if TYPE_CHECKING:
    from store.search.filters import KINDS, SCOPES, Filters
    from store.search.results import SearchResponse, SearchResult

_WHERE = {
    "KINDS": "store.search.filters",
    "SCOPES": "store.search.filters",
    "Filters": "store.search.filters",
    "SearchResponse": "store.search.results",
    "SearchResult": "store.search.results",
}

__all__ = ["Filters", "KINDS", "SCOPES", "SearchResponse", "SearchResult"]

__getattr__, __dir__ = exports(__name__, _WHERE, globals())
