"""Tier 1 of the context builder: the memories message (pinned, then retrieved for the query) and the
summary-and-topics message, each grown within its cap and costed exactly; and message token costs.

Kept apart from `store.context.builder` so the budget logic there reads on its own; nothing here decides a
budget, it only fills the room it is given.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from embeddings.tokens import TOKENS_PER_MESSAGE
from store.secrets import redact_text
from store.truth.current import CURRENT, only_current

if TYPE_CHECKING:
    from store.store import Store

TRUNCATED = "... (truncated)"
RETRIEVE_K = 5  # memories retrieved for the query


class Costs:
    """Token costs of messages, with the per-role overhead computed once."""

    def __init__(self, store: Store) -> None:
        self.tokens = store.tokens
        self._role: dict[str, int] = {}

    def overhead(self, role: str) -> int:
        if role not in self._role:
            self._role[role] = TOKENS_PER_MESSAGE + self.tokens.count(role)
        return self._role[role]

    def cost(self, role: str, content: str, content_tokens: int | None = None) -> int:
        return self.overhead(role) + (
            self.tokens.count(content) if content_tokens is None else content_tokens
        )

    def fit(self, role: str, content: str, room: int) -> tuple[str, int] | None:
        """`content` cut (with the truncation marker) so the message costs at most `room`, or None."""
        marker = "\n" + TRUNCATED
        keep = room - self.overhead(role) - self.tokens.count(marker)
        while keep > 0:
            # A cut inside a multi-byte character decodes as U+FFFD: drop it.
            text = self.tokens.truncate(content, keep).rstrip("\ufffd").rstrip() + marker
            cost = self.cost(role, text)
            if cost <= room:
                return text, cost
            keep -= max(1, cost - room)
        return None


def query_vector(store: Store, message_id: int) -> np.ndarray | None:
    """A stored message's chunk vectors, averaged, as a query vector (no model call), or None."""
    if store.vector_problem is not None or not store.vectors.tables_exist():
        return None
    vecs = []
    for (chunk_id,) in store.con.execute("SELECT id FROM message_chunks WHERE message_id = ?", (message_id,)):
        vec = store.vectors.vector("chunks", int(chunk_id))
        if vec is not None:
            vecs.append(vec)
    if not vecs:
        return None
    mean = np.mean(vecs, axis=0)
    return np.asarray(mean / max(float(np.linalg.norm(mean)), 1e-12), dtype=np.float32)


def retrieve_memories(
    store: Store, text: str, *, exclude: set[int], k: int = RETRIEVE_K, qvec: np.ndarray | None = None
) -> list[tuple[int, str, str]]:
    """(id, category, content) of up to k active memories relevant to `text`, best first.

    Keyword and semantic candidates come from the search engine and are fused and floored the same way
    as a search: a memory is pulled in only with evidence (docs/guide/search.md), never just because
    something has to be nearest.
    """
    from store.search.filters import Filters
    from store.search.query import parse_query
    from store.search.rank import fuse, order

    kinds = ("memory",)
    depth = k * 4
    parsed = parse_query(text)
    if not parsed.phrases:
        return []
    fusion = store.fusion()
    kw = store.keyword_hits(parsed, kinds, Filters(), depth, fusion)
    if qvec is None and store.vector_problem is None and store.vectors.tables_exist() and text.strip():
        qvec = store.query_vector(text)  # the search engine's cache: a preview repeats its query
    sem = (
        [(key, s) for key, s, _ in store.semantic_candidates(qvec, kinds, Filters(), depth)]
        if qvec is not None
        else []
    )
    ranked = order(fuse(kw, sem, fusion, parsed))
    current = only_current(store, [r.key[1] for r in ranked])  # store.truth.current: what may go out
    chosen = [mid for mid in current if mid not in exclude][:k]
    if not chosen:
        return []
    rows = {
        int(r[0]): (str(r[1]), str(r[2]))
        for r in store.con.execute(
            f"SELECT id, category, content FROM long_term_memories WHERE {CURRENT} "
            "AND id IN (SELECT value FROM json_each(?))",
            (str(chosen),),
        )
    }
    return [(mid, *rows[mid]) for mid in chosen if mid in rows]


def memory_text(lines: list[str]) -> str:
    return "[Long-term memories about the user]\n" + "\n".join(lines)


def memory_line(category: str, content: str, pinned: bool) -> str:
    """A memory as a context or profile shows it, its detected secrets replaced (issue 31.7)."""
    return f"- ({category}{', pinned' if pinned else ''}) {' '.join(redact_text(content).split())}"


def summary_text(summary: str, topics: list[str]) -> str:
    parts = []
    if summary.strip():
        parts.append("[Conversation summary]\n" + summary.strip())
    if topics:
        parts.append("[Topics]: " + ", ".join(topics))
    return redact_text("\n\n".join(parts))


def pinned_memories(store: Store) -> list[tuple[int, str, str]]:
    return [
        (int(i), str(c), str(t))
        for i, c, t in store.con.execute(
            f"SELECT id, category, content FROM long_term_memories WHERE {CURRENT} AND pinned "
            "ORDER BY importance DESC, updated_at DESC, id"
        )
    ]


def has_unpinned(store: Store) -> bool:
    return (
        store.con.execute(
            f"SELECT 1 FROM long_term_memories WHERE {CURRENT} AND NOT pinned LIMIT 1"
        ).fetchone()
        is not None
    )


class MemoryBlock:
    """The tier-1 memories message, grown line by line within a cap, costed exactly."""

    def __init__(self, counter: Costs) -> None:
        self.counter = counter
        self.lines: list[str] = []
        self.ids: list[int] = []
        self.cost = 0

    def add(self, memory_id: int, line: str, cap: int) -> bool:
        cost = self.counter.cost("system", memory_text([*self.lines, line]))
        if cost > cap:
            return False
        self.lines.append(line)
        self.ids.append(memory_id)
        self.cost = cost
        return True

    @property
    def text(self) -> str:
        return memory_text(self.lines) if self.lines else ""


def summary_block(store: Store, counter: Costs, thread_id: int, room: int) -> tuple[str, int, bool]:
    """(text, cost, used_summary) of the summary-and-topics message that fits in `room`."""
    summary = store.get_summary(thread_id)
    content = summary.content if summary is not None else ""
    topics = [t for t, _ in store.get_topics(thread_id, 12)]
    lines = [ln for ln in content.splitlines() if ln.strip()]
    for with_topics in (True, False):
        shown = list(lines)
        while True:
            text = summary_text("\n".join(shown), topics if with_topics else [])
            if not text:
                break
            cost = counter.cost("system", text)
            if cost <= room:
                return text, cost, bool(shown)
            if not shown:
                break
            shown.pop(0)  # the oldest part of the summary goes first
    return "", 0, False
