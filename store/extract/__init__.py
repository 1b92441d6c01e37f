"""Offline text understanding, no LLM: sentences, extractive summaries, topics, memory suggestions.

- sentences.py: splitting and scoring sentences.
- summaries.py: incremental thread summaries within a token cap.
- topics.py: key terms per thread.
- suggestions.py + patterns.py: candidate long-term memories found in a thread.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from store.lazy import exports

if TYPE_CHECKING:
    from store.extract.suggestions import (
        STATUSES,
        AcceptResult,
        BulkResult,
        ExtractResult,
        Suggestion,
        accept_all,
        accept_suggestion,
        count_pending,
        extract_suggestions,
        get_suggestion,
        imported_suggestions,
        list_suggestions,
        reject_suggestion,
        reject_suggestions,
        source_messages,
    )
    from store.extract.summaries import (
        SummaryResult,
        compression_history,
        maybe_summarize,
        summarize_thread,
        threads_to_summarize,
        unsummarised_count,
    )

_WHERE = {
    "STATUSES": "store.extract.suggestions",
    "AcceptResult": "store.extract.suggestions",
    "BulkResult": "store.extract.suggestions",
    "ExtractResult": "store.extract.suggestions",
    "Suggestion": "store.extract.suggestions",
    "accept_all": "store.extract.suggestions",
    "accept_suggestion": "store.extract.suggestions",
    "count_pending": "store.extract.suggestions",
    "extract_suggestions": "store.extract.suggestions",
    "get_suggestion": "store.extract.suggestions",
    "imported_suggestions": "store.extract.suggestions",
    "list_suggestions": "store.extract.suggestions",
    "reject_suggestion": "store.extract.suggestions",
    "reject_suggestions": "store.extract.suggestions",
    "source_messages": "store.extract.suggestions",
    "SummaryResult": "store.extract.summaries",
    "compression_history": "store.extract.summaries",
    "maybe_summarize": "store.extract.summaries",
    "summarize_thread": "store.extract.summaries",
    "threads_to_summarize": "store.extract.summaries",
    "unsummarised_count": "store.extract.summaries",
}

__all__ = [
    "AcceptResult",
    "BulkResult",
    "ExtractResult",
    "STATUSES",
    "Suggestion",
    "SummaryResult",
    "accept_all",
    "accept_suggestion",
    "compression_history",
    "count_pending",
    "extract_suggestions",
    "get_suggestion",
    "imported_suggestions",
    "list_suggestions",
    "maybe_summarize",
    "reject_suggestion",
    "reject_suggestions",
    "source_messages",
    "summarize_thread",
    "threads_to_summarize",
    "unsummarised_count",
]

__getattr__, __dir__ = exports(__name__, _WHERE, globals())
