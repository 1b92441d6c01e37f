"""Hybrid search over memories, messages and summaries: FTS5 BM25 and sqlite-vec KNN, fused.

`Store.search(query, scope=, k=, filters=, keyword_only=, touch=, prefix=)` -> SearchResponse.

- Two retrievers, each asked for a deep list (`DEPTH` candidates) with the filters applied *inside* the
  query (vec0 metadata columns in the KNN; a join to the canonical rows before LIMIT in FTS), so `k=10`
  with a filter still returns 10 when 10 exist. Trashed memories are never candidates.
- A long message is searched through its chunks and scores as its best chunk; results are messages.
- The lists are fused by store.search.rank.fuse (why that fusion: see there, and README "Search").
- The keyword-only path never touches the model: the TUI calls it on every keystroke while the model is
  still loading, and every search falls back to it, with a one-line notice, when no model is usable.
- Access tracking: memories returned get access_count + 1 in one statement per search; `touch=False`
  lets the TUI count only what it actually shows (it then calls `touch_memories` itself).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from store.core import StoreCore
from store.db import json_ids
from store.errors import InvalidInputError
from store.records import CATEGORIES, ROLES
from store.search.rank import (
    NEIGHBOUR_SOURCES,
    Fused,
    Fusion,
    Key,
    expand_neighbours,
    fuse,
    keyword_expression,
    snippet,
)
from store.vectors import rows as vectors

SCOPES = ("all", "memories", "messages", "summaries", "conversations")
KINDS = ("memory", "message", "summary")
# "conversations" is messages and summaries together: searched as one, so k results come back when k
# exist (searching "all" and dropping the memories afterwards returned fewer).
_SCOPE_KINDS = {
    "all": KINDS,
    "memories": ("memory",),
    "messages": ("message",),
    "summaries": ("summary",),
    "conversations": ("message", "summary"),
}

DEPTH = 100  # candidates fetched from each retriever before fusion
SUPERSEDED_WEIGHT = 0.5  # a superseded memory's fused score is multiplied by this
_CACHE_LOCK = threading.Lock()
_POOL: ThreadPoolExecutor | None = None


def _pool() -> ThreadPoolExecutor:
    """Two threads for the work a search can do beside the caller's: keyword retrieval, half a KNN."""
    global _POOL
    with _CACHE_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(2, thread_name_prefix="memapp-search")
        return _POOL


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
    matched: tuple[str, ...]  # ("keyword",), ("semantic",) or ("keyword", "semantic"); ("neighbour",)
    # only with Fusion(neighbours > 0): a turn next to a hit, matched by neither retriever
    # Memories (store.truth): replaced by a newer memory (ranked down), and where the memory came from.
    superseded_by: int | None = None
    valid_until: float | None = None
    source_message_id: int | None = None
    origin: str | None = None

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
    notice: str | None = None  # one line for the user, e.g. why results are keyword-only

    def to_json(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "mode": self.mode,
            "notice": self.notice,
            "results": [r.to_json() for r in self.results],
        }


@dataclass(frozen=True, slots=True)
class Filters:
    """Restrictions applied inside both retrievers. A filter that a kind has no field for excludes that
    kind: `category`/`pinned` keep memories only, `role` messages only, `thread_id` messages and
    summaries; `since`/`until` (epoch seconds, half-open) apply to every kind. `as_of` keeps the memories
    valid at that moment (valid_from <= as_of < valid_until) and what was written by then."""

    thread_id: int | None = None
    category: str | None = None
    role: str | None = None
    since: float | None = None
    until: float | None = None
    pinned: bool | None = None
    include_archived: bool = False  # messages and summaries of archived threads are left out unless True
    source: str | None = None  # only messages and summaries of threads imported from this source
    as_of: float | None = None  # what was true then: memories valid at that time, messages said by then

    def kinds(self, scope: str) -> tuple[str, ...]:
        if scope not in SCOPES:
            raise InvalidInputError(f"unknown scope {scope!r}: use one of {', '.join(SCOPES)}")
        kinds = set(_SCOPE_KINDS[scope])
        if self.category is not None or self.pinned is not None:
            kinds &= {"memory"}
        if self.role is not None:
            kinds &= {"message"}
        if self.thread_id is not None or self.source is not None:
            kinds &= {"message", "summary"}
        if not kinds:
            raise InvalidInputError(
                f"no {scope if scope != 'all' else 'item'} can match these filters together "
                "(--category/--pinned apply to memories, --role to messages, --thread and --source to messages "
                "and summaries)"
            )
        return tuple(k for k in KINDS if k in kinds)


# -- the Store mixin -----------------------------------------------------------------------------------


class SearchMixin(StoreCore):
    if TYPE_CHECKING:

        def touch_memories(self, memory_ids: Sequence[int]) -> None: ...

    def search(
        self,
        query: str,
        *,
        scope: str = "all",
        k: int = 10,
        filters: Filters | None = None,
        keyword_only: bool = False,
        touch: bool = True,
        prefix: bool = False,
        fusion: Fusion | None = None,
        query_vector: np.ndarray | None = None,
    ) -> SearchResponse:
        """Search memories, messages and/or summaries. Never raises on any query text.

        keyword_only: skip the model entirely (fast; for search-as-you-type). prefix: the last word also
        matches as a prefix. touch: count an access for every memory returned. query_vector: the query's
        embedding when the caller already has it (batch evaluation embeds all queries at once).
        """
        filters = filters or Filters()
        self._validate_filters(filters)
        if filters.as_of is not None and (filters.until is None or filters.until > filters.as_of):
            filters = replace(filters, until=filters.as_of + 1e-3)
        kinds = filters.kinds(scope)
        k = max(0, min(int(k), vectors.K_MAX))
        fusion = fusion or Fusion(rrf_k=self.config.search.rrf_k)
        notice = None
        semantic = not keyword_only and k and query.strip() and kinds != ("summary",)
        keyword = self._keyword_soon(query, kinds, filters, prefix, parallel=bool(semantic)) if k else list
        mode = "keyword"
        sem: list[tuple[Key, float, tuple[int, int] | None]] = []
        if semantic:
            problem = self._semantic_problem()
            if problem is None:
                qvec = self.query_vector(query) if query_vector is None else query_vector
                if qvec is None:
                    problem = self.vector_problem or "the query could not be embedded"
                else:
                    sem = self.semantic_candidates(qvec, kinds, filters, DEPTH)
                    mode = "hybrid"
            if problem is not None:
                notice = f"semantic search unavailable: {problem}; keyword results only"
        kw = keyword()
        if not filters.include_archived or filters.source is not None:
            kw, sem = _thread_scoped(self.con, kw, filters), _thread_scoped(self.con, sem, filters)
        fused = fuse([(key, s) for key, s in kw], [(key, s) for key, s, _ in sem], fusion, query)
        if fusion.neighbours > 0 and "message" in kinds:
            top = [key[1] for key, _, _ in fused[:NEIGHBOUR_SOURCES] if key[0] == "message"]
            fused = expand_neighbours(fused, self.message_neighbours(top, filters), fusion.neighbours)
        if filters.as_of is None and "memory" in kinds:
            fused = self._rank_down_superseded(fused)
        spans = {key: span for key, _, span in sem}
        results = self._hydrate(fused[:k], query, spans)
        if touch:
            self.touch_memories([r.id for r in results if r.kind == "memory"])
        return SearchResponse(query, mode, results, notice)

    def _keyword_soon(
        self, query: str, kinds: Sequence[str], filters: Filters, prefix: bool, *, parallel: bool
    ) -> Callable[[], list[tuple[Key, float]]]:
        """Start the keyword retriever; call the result for its candidates.

        Why a second thread: FTS5 scores every row that matches any query word (a common word in a big
        archive is tens of thousands of rows), and that work is independent of embedding the query and
        of the KNN. On its own connection it runs beside them (SQLite and numpy release the GIL), so a
        hybrid search costs about the slower retriever instead of both (README "Benchmarks"). Not inside
        the caller's transaction, whose writes another connection could not see, nor on `:memory:`.
        """
        if not parallel or self.vector_helper() is None:
            found = self.keyword_candidates(query, kinds, filters, DEPTH, prefix=prefix)
            return lambda: found
        return _pool().submit(self.keyword_candidates, query, kinds, filters, DEPTH, prefix=prefix).result

    def vector_helper(self) -> vectors.Helper | None:
        """Lets store.vectors split a KNN over two connections (two cores); None where `_keyword_soon`
        would not run in the background either."""
        if self.con.in_transaction or str(self.path) == ":memory:":
            return None
        return lambda fn: _pool().submit(lambda: fn(self.con))

    # -- retrievers (public for the evaluation) ------------------------------------------------------

    def keyword_candidates(
        self, query: str, kinds: Sequence[str], filters: Filters, n: int, *, prefix: bool = False
    ) -> list[tuple[Key, float]]:
        """(key, -bm25) best first, over every kind in `kinds`, filters applied before the LIMIT."""
        expr = keyword_expression(query, prefix_last=prefix)
        if expr is None or n <= 0:
            return []
        out: list[tuple[Key, float]] = []
        for kind in kinds:
            sql, args = _keyword_sql(kind, filters)
            out += [((kind, int(rid)), -float(r)) for rid, r in self.con.execute(sql, [expr, *args, n])]
        out.sort(key=lambda h: -h[1])
        return out[:n]

    def semantic_candidates(
        self, qvec: np.ndarray, kinds: Sequence[str], filters: Filters, n: int
    ) -> list[tuple[Key, float, tuple[int, int] | None]]:
        """(key, cosine, best chunk span) best first; messages score as their best chunk."""
        out: list[tuple[Key, float, tuple[int, int] | None]] = []
        if "message" in kinds:
            held = self.code_table("chunks")
            chunks = None
            if held is not None:
                chunks = held.search(
                    self.con,
                    qvec,
                    min(vectors.K_MAX, n * 3),
                    equal={"thread_id": filters.thread_id, "role": filters.role},
                    since=filters.since,
                    until=filters.until,
                )
            if chunks is None:
                chunks = self.vectors.knn_chunks(
                    qvec,
                    min(vectors.K_MAX, n * 3),
                    thread_id=filters.thread_id,
                    role=filters.role,
                    since=filters.since,
                    until=filters.until,
                    helper=self.vector_helper(),
                )
            best: dict[int, tuple[int, float]] = {}
            for chunk_id, mid, sim in chunks:
                if mid not in best:
                    best[mid] = (chunk_id, sim)
            span_rows = self.con.execute(
                "SELECT id, start_char, end_char FROM message_chunks WHERE id IN (SELECT value FROM json_each(?))",
                (json_ids([c for c, _ in best.values()]),),
            )
            spans = {int(i): (int(a), int(b)) for i, a, b in span_rows}
            out += [(("message", mid), sim, spans.get(cid)) for mid, (cid, sim) in best.items()]
        if "memory" in kinds:
            out += [(("memory", mid), sim, None) for mid, sim in self._knn_memories(qvec, filters, n)]
        out.sort(key=lambda h: -h[1])
        return out[:n]

    # -- helpers ---------------------------------------------------------------------------------------

    @staticmethod
    def _validate_filters(f: Filters) -> None:
        if f.category is not None and f.category not in CATEGORIES:
            raise InvalidInputError(f"unknown category {f.category!r}: use one of {', '.join(CATEGORIES)}")
        if f.role is not None and f.role not in ROLES:
            raise InvalidInputError(f"unknown role {f.role!r}: use one of {', '.join(ROLES)}")
        if f.since is not None and f.until is not None and f.since >= f.until:
            raise InvalidInputError("--since must be before --until")

    def _semantic_problem(self) -> str | None:
        problem = self.vector_problem
        if problem is None and not self.vectors.tables_exist():
            problem = "nothing has been embedded yet (run `memapp embed`)"
        return problem

    def query_vector(self, query: str) -> np.ndarray | None:
        """The query's embedding, remembered for the last few queries (typing repeats them)."""
        assert self.embedder is not None
        key = (self.embedder.name, query)
        with _CACHE_LOCK:
            cache: dict[tuple[str, str], np.ndarray] = self.__dict__.setdefault("_query_vectors", {})
            if key in cache:
                return cache[key]
        vec = self.embed_query(query)
        if vec is not None:
            with _CACHE_LOCK:
                if len(cache) >= 64:
                    cache.pop(next(iter(cache)))
                cache[key] = vec
        return vec

    def _knn_memories(self, qvec: np.ndarray, f: Filters, n: int) -> list[tuple[int, float]]:
        """Category and trash are vec0 metadata, filtered inside the KNN. Pinned and dates are not: then
        the memories that pass the filter are ranked exactly, by distance, among themselves."""
        if f.pinned is None and f.since is None and f.until is None and f.as_of is None:
            held = self.code_table("memories")
            hits = None
            if held is not None:
                hits = held.search(self.con, qvec, n, equal={"category": f.category, "deleted": 0})
            if hits is not None:
                return [(mid, sim) for mid, _, sim in hits]
            return self.vectors.knn_memories(qvec, n, category=f.category, helper=self.vector_helper())
        if not self.vectors.tables_exist():
            return []
        where, args = _memory_where(f)
        rows = self.con.execute(
            "SELECT v.memory_id, vec_distance_cosine(v.embedding, ?) AS d FROM long_term_memories m "
            f"JOIN vec_memories v ON v.memory_id = m.id WHERE {' AND '.join(where)} ORDER BY d LIMIT ?",
            [np.ascontiguousarray(qvec, dtype=np.float32).tobytes(), *args, n],
        )
        return [(int(mid), 1.0 - float(d)) for mid, d in rows]

    def _rank_down_superseded(self, fused: list[Fused]) -> list[Fused]:
        """A memory a newer one replaced stays findable, below what is current (SUPERSEDED_WEIGHT)."""
        ids = [key[1] for key, _, _ in fused if key[0] == "memory"]
        if not ids:
            return fused
        old = {
            int(r[0])
            for r in self.con.execute(
                "SELECT id FROM long_term_memories WHERE valid_until IS NOT NULL "
                "AND id IN (SELECT value FROM json_each(?))",
                (json_ids(ids),),
            )
        }
        if not old:
            return fused
        out = [
            (key, score * SUPERSEDED_WEIGHT if key[0] == "memory" and key[1] in old else score, m)
            for key, score, m in fused
        ]
        out.sort(key=lambda f: -f[1])
        return out

    def message_neighbours(self, message_ids: Sequence[int], filters: Filters) -> dict[int, list[int]]:
        """The turns right before and after each message (that pass the filters)."""
        where, args = _message_where(filters, "n")
        rows = self.con.execute(
            "SELECT m.id, n.id FROM messages m JOIN messages n ON n.thread_id = m.thread_id "
            "AND n.seq IN (m.seq - 1, m.seq + 1) WHERE m.id IN (SELECT value FROM json_each(?)) "
            f"AND {' AND '.join(where)}",
            [json_ids(message_ids), *args],
        )
        out: dict[int, list[int]] = {}
        for mid, nid in rows:
            out.setdefault(int(mid), []).append(int(nid))
        return out

    def _hydrate(
        self, fused: Sequence[Fused], query: str, spans: dict[Key, tuple[int, int] | None]
    ) -> list[SearchResult]:
        ids: dict[str, list[int]] = {kind: [] for kind in KINDS}
        for (kind, rid), _, _ in fused:
            ids[kind].append(rid)
        rows: dict[Key, tuple[Any, ...]] = {}
        for kind, sql in (
            ("message", "SELECT id, thread_id, external_id, role, NULL, content FROM messages"),
            ("memory", "SELECT id, source_thread_id, NULL, NULL, category, content FROM long_term_memories"),
            ("summary", "SELECT thread_id, thread_id, NULL, NULL, NULL, content FROM thread_summaries"),
        ):
            if ids[kind]:
                id_col = "thread_id" if kind == "summary" else "id"
                for row in self.con.execute(
                    f"{sql} WHERE {id_col} IN (SELECT value FROM json_each(?))", (json_ids(ids[kind]),)
                ):
                    rows[(kind, int(row[0]))] = row
        extras: dict[int, tuple[Any, ...]] = {}
        if ids["memory"]:
            for row in self.con.execute(
                "SELECT id, superseded_by, valid_until, source_message_id, origin FROM long_term_memories "
                "WHERE id IN (SELECT value FROM json_each(?))",
                (json_ids(ids["memory"]),),
            ):
                extras[int(row[0])] = tuple(row[1:])
        out = []
        for key, score, matched in fused:
            row = rows.get(key)
            if row is None:
                continue
            extra = (
                extras.get(key[1], (None, None, None, None))
                if key[0] == "memory"
                else (None, None, None, None)
            )
            out.append(
                SearchResult(
                    key[0],
                    key[1],
                    row[1],
                    row[2],
                    row[3],
                    row[4],
                    snippet(row[5], query, spans.get(key)),
                    score,
                    matched,
                    *extra,
                )
            )
        return out


# -- SQL builders -------------------------------------------------------------------------------------


def _thread_scoped(con: Any, hits: list[Any], f: Filters) -> list[Any]:
    """Drop from retriever hits ((kind, id), …) the messages and summaries of threads the filters leave
    out: archived threads (unless `include_archived`) and, with `source`, threads from other sources.
    Applied before fusion, so `k` results still come back; nothing to do in the common case (no thread
    archived, no source asked for)."""
    if not hits:
        return hits
    conditions = []
    args: list[Any] = []
    if (
        not f.include_archived
        and con.execute("SELECT 1 FROM threads WHERE archived_at IS NOT NULL LIMIT 1").fetchone() is not None
    ):
        conditions.append("archived_at IS NOT NULL")
    if f.source is not None:
        conditions.append("source != ?")
        args.append(f.source)
    if not conditions:
        return hits
    excluded = f"SELECT id FROM threads WHERE {' OR '.join(conditions)}"
    hidden_threads = {int(r[0]) for r in con.execute(excluded, args)}
    messages = [key[1] for key, *_ in hits if key[0] == "message"]
    hidden_messages = {
        int(r[0])
        for r in con.execute(
            f"SELECT id FROM messages WHERE id IN (SELECT value FROM json_each(?)) AND thread_id IN ({excluded})",
            (json_ids(messages), *args),
        )
    }
    return [
        h
        for h in hits
        if not (h[0][0] == "message" and h[0][1] in hidden_messages)
        and not (h[0][0] == "summary" and h[0][1] in hidden_threads)
    ]


def _message_where(f: Filters, alias: str = "m") -> tuple[list[str], list[Any]]:
    where, args = ["1"], []
    for col, op, value in (
        ("thread_id", "=", f.thread_id),
        ("role", "=", f.role),
        ("created_at", ">=", f.since),
        ("created_at", "<", f.until),
    ):
        if value is not None:
            where.append(f"{alias}.{col} {op} ?")
            args.append(value)
    return where, args


def _memory_where(f: Filters) -> tuple[list[str], list[Any]]:
    where, args = ["m.deleted_at IS NULL"], []
    for col, op, value in (
        ("category", "=", f.category),
        ("pinned", "=", None if f.pinned is None else int(f.pinned)),
        ("created_at", ">=", f.since),
        ("created_at", "<", f.until),
    ):
        if value is not None:
            where.append(f"m.{col} {op} ?")
            args.append(value)
    if f.as_of is not None:
        where.append(
            "coalesce(m.valid_from, m.created_at) <= ? AND (m.valid_until IS NULL OR m.valid_until > ?)"
        )
        args += [f.as_of, f.as_of]
    return where, args


def _keyword_sql(kind: str, f: Filters) -> tuple[str, list[Any]]:
    if kind == "message":
        if f == Filters():  # no join: FTS5 can stop after the best n
            return "SELECT rowid, rank FROM fts_messages WHERE fts_messages MATCH ? ORDER BY rank LIMIT ?", []
        where, args = _message_where(f)
        return (
            f"SELECT m.id, fts_messages.rank FROM fts_messages JOIN messages m ON m.id = fts_messages.rowid "
            f"WHERE fts_messages MATCH ? AND {' AND '.join(where)} ORDER BY fts_messages.rank LIMIT ?",
            args,
        )
    if kind == "memory":
        where, args = _memory_where(f)
        return (
            f"SELECT m.id, fts_memories.rank FROM fts_memories JOIN long_term_memories m "
            f"ON m.id = fts_memories.rowid WHERE fts_memories MATCH ? AND {' AND '.join(where)} "
            "ORDER BY fts_memories.rank LIMIT ?",
            args,
        )
    where, args = ["1"], []
    for col, op, value in (
        ("thread_id", "=", f.thread_id),
        ("updated_at", ">=", f.since),
        ("updated_at", "<", f.until),
    ):
        if value is not None:
            where.append(f"s.{col} {op} ?")
            args.append(value)
    return (
        f"SELECT s.thread_id, fts_summaries.rank FROM fts_summaries JOIN thread_summaries s "
        f"ON s.thread_id = fts_summaries.rowid WHERE fts_summaries MATCH ? AND {' AND '.join(where)} "
        "ORDER BY fts_summaries.rank LIMIT ?",
        args,
    )


__all__ = ["DEPTH", "SCOPES", "Filters", "Fusion", "SearchMixin", "SearchResponse", "SearchResult"]
