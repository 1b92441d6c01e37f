"""What a search returns: one SearchResult per hit, in one SearchResponse (and their JSON).

Apart from store.search.engine (which re-exports them) so the shapes the CLI, TUI and MCP read are in one
short file; `weak` results (below the answer floor, store.search.answer) are a separate list, never mixed
into `results`, so a caller that reads only `results` never shows a weak hit as an answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class SearchResult:
    """One hit. `content` is a snippet around the match; `matched` says which retriever(s) found it."""

    kind: str  # memory | message | summary
    id: int  # memory id, message id, or (summaries) the thread id
    thread_id: int | None
    external_id: str | None  # messages: the id the message had in the imported file
    role: str | None  # messages
    category: str | None  # memories
    content: str
    score: float
    matched: tuple[str, ...]  # ("keyword",), ("semantic",) or ("keyword", "semantic")
    thread_title: str | None = None  # the thread it is in (memories: the thread it came from)
    created_at: float | None = None  # epoch seconds: when it was said / created (summaries: last updated)
    # Memories (store.truth): replaced by a newer memory (ranked down), and where the memory came from.
    superseded_by: int | None = None
    valid_until: float | None = None
    source_message_id: int | None = None
    origin: str | None = None
    weak: bool = False  # below the answer floor: shown apart, never counted as used, never sent by MCP

    def to_json(self) -> dict[str, Any]:
        return {**self._json(), **_memory_extras(self)}

    def _json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "id": self.id,
            "thread_id": self.thread_id,
            "external_id": self.external_id,
            "role": self.role,
            "category": self.category,
            "content": self.content,
            "score": round(self.score, 6),
            "matched": list(self.matched),
            "thread_title": self.thread_title,
            "created_at": self.created_at,
            "weak": self.weak,
        }


def _memory_extras(r: SearchResult) -> dict[str, Any]:
    """Memories only (None for messages and summaries): superseded or not, and where it came from."""
    from store.records import iso

    if r.kind != "memory":
        return {"superseded_by": None, "valid_until": None, "source": None}
    return {
        "superseded_by": r.superseded_by,
        "valid_until": iso(r.valid_until),
        "source": {"origin": r.origin, "thread_id": r.thread_id, "message_id": r.source_message_id},
    }


@dataclass(frozen=True, slots=True)
class SearchResponse:
    query: str
    mode: str  # "hybrid" | "keyword" | "semantic"
    results: list[SearchResult]
    notice: str | None = None  # one line for the user: no good match, or why results are keyword-only
    weak: list[SearchResult] = field(default_factory=list)  # only with search(weak=True): see NOTICE_WEAK

    def to_json(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "mode": self.mode,
            "notice": self.notice,
            "results": [r.to_json() for r in self.results],
            "weak": [r.to_json() for r in self.weak],
        }
