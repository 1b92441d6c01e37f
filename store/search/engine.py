"""Hybrid search over memories, messages and summaries: FTS5 BM25 and sqlite-vec KNN, fused.

`Store.search(query, scope=, k=, filters=, keyword_only=, touch=, prefix=, weak=)` -> SearchResponse.

- The query is parsed once (store.search.query.ParsedQuery): its searchable words, its CJK share.
- Two retrievers, each asked for a deep list (`DEPTH` candidates) with the filters applied *inside* the
  query (vec0 metadata columns in the KNN; a join to the canonical rows before LIMIT in FTS), so `k=10`
  with a filter still returns 10 when 10 exist. Trashed memories are never candidates.
- A long message is searched through its chunks and scores as its best chunk; results are messages.
- The lists are fused, smoothed over neighbouring turns and threads, and (hybrid only) floored by store.search.rank
  (why: see there, and README "Search"); what passes no floor is never returned, and an empty answer
  carries a notice that says so. A hybrid search whose results pass the per-hit floor is then asked
  whether they answer the query at all (store.search.answer); when not, they are no results: with
  `weak=True` (the CLI and TUI) they come back apart, marked weak; MCP never asks for them.
- The keyword-only path never touches the model: the TUI calls it on every keystroke while the model is
  still loading, and every search falls back to it, with a one-line notice, when no model is usable.
- Access counts mean use: the memories returned get access_count + 1 in one statement per search;
  `touch=False` lets the TUI count only what the user settles on (it then calls `touch_memories` itself).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from store.core import StoreCore
from store.db import id_table
from store.search.answer import answers
from store.search.filters import KINDS, SCOPES, Filters
from store.search.keyword import Key, KeywordHit, keyword_hits, memory_where, message_where
from store.search.query import ParsedQuery, parse_query
from store.search.rank import SMOOTH_DEPTH, Context, Fusion, Ranked, fuse, order, smooth, snippet
from store.search.results import SearchResponse, SearchResult
from store.vectors import rows as vectors

NOTICE_NOTHING = "no good match: nothing in the archive is close enough to the query"
NOTICE_UNSURE = "no good match: nothing in the archive clearly answers the query"
NOTICE_WEAK = NOTICE_UNSURE + "; the closest matches are listed below as weak"
NOTICE_STOP_ONLY = "no good match: the query has only common words (like 'what' or 'should') to search for"

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
        weak: bool = False,
    ) -> SearchResponse:
        """Search memories, messages and/or summaries. Never raises on any query text.

        keyword_only: skip the model entirely (fast; for search-as-you-type). prefix: the last word also
        matches as a prefix. touch: count an access for every memory returned. query_vector: the query's
        embedding when the caller already has it (batch evaluation embeds all queries at once).
        Only results above the relevance floor are returned; with none, `notice` says so. When the
        results pass the per-hit floor but the answer floor (store.search.answer) judges that none of
        them answers the query, `results` is empty and, with `weak`, they come back in `weak` instead
        (never counted as used).
        """
        filters = filters or Filters()
        filters.validate()
        if filters.as_of is not None and (filters.until is None or filters.until > filters.as_of):
            filters = replace(filters, until=filters.as_of + 1e-3)
        kinds = filters.kinds(scope)
        k = max(0, min(int(k), vectors.K_MAX))
        fusion = fusion or self.fusion()
        parsed = parse_query(query, prefix_last=prefix)
        if not k or not parsed.phrases:
            notice = NOTICE_STOP_ONLY if parsed.stop_only else NOTICE_NOTHING if query.strip() else None
            return SearchResponse(query, "keyword", [], notice)
        notice = None
        semantic = not keyword_only and kinds != ("summary",)
        keyword = self._keyword_soon(parsed, kinds, filters, fusion, parallel=semantic)
        mode = "keyword"
        sem: list[tuple[Key, float, int | None]] = []
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
        ranked = fuse(kw, [(key, s) for key, s, _ in sem], fusion, parsed)
        context = Context()
        if "message" in kinds and (fusion.neighbours > 0 or fusion.thread > 0):
            best = sorted((r for r in ranked.values() if r.key[0] == "message"), key=lambda r: -r.score)
            context = self.message_context([r.key[1] for r in best[:SMOOTH_DEPTH]], filters)
            ranked = smooth(ranked, context, fusion, parsed)
        if filters.as_of is None and "memory" in kinds:
            self._rank_down_superseded(ranked)
        chunk_of = {key: chunk for key, _, chunk in sem if chunk is not None}
        # The keyword half alone ranks and never judges: every row that shares a word with the query is a
        # result (stop words never count). Its floor used to empty 39-45 % of real questions, with their
        # answers in the archive (docs/benchmarks/search.md); "no good match" is the hybrid's to say.
        kept = order(ranked, floor=mode == "hybrid")
        unsure = (
            bool(kept)
            and mode == "hybrid"
            and not answers(self.con, kw, sem, kept, context, parsed, kinds, fusion)
        )
        results = [] if unsure else self._hydrate(kept[:k], parsed, chunk_of)
        below = (
            [replace(r, weak=True) for r in self._hydrate(kept[:k], parsed, chunk_of)]
            if unsure and weak
            else []
        )
        if unsure:
            head = NOTICE_WEAK if below else NOTICE_UNSURE
            notice = head if notice is None else f"{head}; {notice}"
        elif not results:
            notice = NOTICE_NOTHING if notice is None else f"{NOTICE_NOTHING}; {notice}"
        if touch:
            self.touch_memories([r.id for r in results if r.kind == "memory"])
        return SearchResponse(query, mode, results, notice, below)

    def fusion(self) -> Fusion:
        """The ranking settings from the configuration's [search] table."""
        c = self.config.search
        return Fusion(
            keyword_weight=c.keyword_weight,
            semantic_weight=c.semantic_weight,
            k1=c.bm25_k1,
            b=c.bm25_b,
            neighbours=c.neighbours,
            thread=c.thread_boost,
            floor=c.floor,
            keyword_floor=c.keyword_floor,
            answer_floor=c.answer_floor,
        )

    def _keyword_soon(
        self, parsed: ParsedQuery, kinds: Sequence[str], filters: Filters, fusion: Fusion, *, parallel: bool
    ) -> Callable[[], list[KeywordHit]]:
        """Start the keyword retriever; call the result for its candidates.

        Why a second thread: FTS5 scores every row that matches any query word (a common word in a big
        archive is tens of thousands of rows), and that work is independent of embedding the query and
        of the KNN. It runs beside them (SQLite and numpy release the GIL), so a hybrid search costs
        about the slower retriever instead of both (README "Benchmarks"). Not inside the caller's
        transaction, nor on `:memory:`.
        """
        if not parallel or self.vector_helper() is None:
            found = self.keyword_hits(parsed, kinds, filters, DEPTH, fusion)
            return lambda: found
        return _pool().submit(self.keyword_hits, parsed, kinds, filters, DEPTH, fusion).result

    def vector_helper(self) -> vectors.Helper | None:
        """Lets store.vectors split a KNN over two connections (two cores); None where `_keyword_soon`
        would not run in the background either."""
        if self.con.in_transaction or str(self.path) == ":memory:":
            return None
        return lambda fn: _pool().submit(lambda: fn(self.con))

    # -- retrievers (public for the evaluation) ------------------------------------------------------

    def keyword_hits(
        self,
        parsed: ParsedQuery,
        kinds: Sequence[str],
        filters: Filters,
        n: int,
        fusion: Fusion | None = None,
    ) -> list[KeywordHit]:
        """The best `n` keyword hits over every kind in `kinds` (our BM25, best first), filters applied."""
        fusion = fusion or self.fusion()
        out: list[KeywordHit] = []
        for kind in kinds:
            out += keyword_hits(
                self.con, parsed, kind, filters, n, k1=fusion.k1, b=fusion.b, held=self.held_keywords()
            )
        out.sort(key=lambda h: (-h.bm25, h.key))
        return out[:n]

    def keyword_candidates(
        self, query: str, kinds: Sequence[str], filters: Filters, n: int, *, prefix: bool = False
    ) -> list[tuple[Key, float]]:
        """(key, BM25) best first, over every kind in `kinds`, filters applied before the LIMIT."""
        hits = self.keyword_hits(parse_query(query, prefix_last=prefix), kinds, filters, n)
        return [(h.key, h.bm25) for h in hits]

    def semantic_candidates(
        self, qvec: np.ndarray, kinds: Sequence[str], filters: Filters, n: int
    ) -> list[tuple[Key, float, int | None]]:
        """(key, cosine, best chunk id) best first; messages score as their best chunk.

        The n best messages are the messages of the best chunks, so chunks are fetched until n distinct
        messages are among them: first n + n/2 (most messages have one or two chunks), then 3n when a
        long message's chunks crowd that list. For an exact search both give the same n best (the
        messages whose best chunk is among the first m chunks are exactly the m' best messages); the
        approximate KNN of big tables may pick slightly different deep candidates (the evaluation's
        recall is unchanged, README "Search"). The first costs what a top-10 search costs at 200k
        chunks (bench/search.py), the second twice that."""
        out: list[tuple[Key, float, int | None]] = []
        if "message" in kinds:
            fetch = min(vectors.K_MAX, n + n // 2)
            best, every = self._best_chunks(qvec, filters, fetch)
            if len(best) < n and not every and fetch < min(vectors.K_MAX, n * 3):
                best, _ = self._best_chunks(qvec, filters, min(vectors.K_MAX, n * 3))
            out += [(("message", mid), sim, cid) for mid, (cid, sim) in best.items()]
        if "memory" in kinds:
            out += [(("memory", mid), sim, None) for mid, sim in self._knn_memories(qvec, filters, n)]
        out.sort(key=lambda h: -h[1])
        return out[:n]

    def _best_chunks(
        self, qvec: np.ndarray, filters: Filters, k: int
    ) -> tuple[dict[int, tuple[int, float]], bool]:
        """message id -> (its best chunk id, cosine) over the k nearest chunks that pass the filters, and
        whether that was every chunk that passes them."""
        held = self.code_table("chunks")
        equal = {"thread_id": filters.thread_id, "role": filters.role}
        chunks = None
        if held is not None:
            chunks = held.search(self.con, qvec, k, equal=equal, since=filters.since, until=filters.until)
        if chunks is None:
            chunks = self.vectors.knn_chunks(
                qvec,
                k,
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
        return best, len(chunks) < k

    # -- helpers ---------------------------------------------------------------------------------------

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
        where, args = memory_where(f)
        return self.vectors.rank_memories(" AND ".join(where), args, qvec, n)

    def _rank_down_superseded(self, ranked: dict[Key, Ranked]) -> None:
        """A memory a newer one replaced stays findable, below what is current (SUPERSEDED_WEIGHT)."""
        ids = [key[1] for key in ranked if key[0] == "memory"]
        if not ids:
            return
        listed, param = id_table(ids)
        for (mid,) in self.con.execute(
            f"SELECT id FROM long_term_memories WHERE valid_until IS NOT NULL AND id IN (SELECT value FROM {listed})",
            (param,),
        ):
            r = ranked[("memory", int(mid))]
            r.score *= SUPERSEDED_WEIGHT

    def message_context(self, message_ids: Sequence[int], filters: Filters) -> Context:
        """Each message's thread, and the turns right before and after it that pass the filters (one
        query; a neighbour is in its message's thread by definition)."""
        if not message_ids:
            return Context()
        where, args = message_where(filters, "n")
        listed, param = id_table(message_ids)
        rows = self.con.execute(
            "SELECT m.id, m.thread_id, n.id FROM messages m LEFT JOIN messages n ON n.thread_id = m.thread_id "
            f"AND n.seq IN (m.seq - 1, m.seq + 1) AND {' AND '.join(where)} "
            f"WHERE m.id IN (SELECT value FROM {listed})",
            [*args, param],
        )
        thread_of: dict[int, int] = {}
        near: dict[int, list[int]] = {}
        for mid, tid, nid in rows:
            thread_of[int(mid)] = int(tid)
            if nid is not None:
                thread_of[int(nid)] = int(tid)
                near.setdefault(int(mid), []).append(int(nid))
        return Context(thread_of, near)

    def _hydrate(
        self, ranked: Sequence[Ranked], parsed: ParsedQuery, chunk_of: dict[Key, int]
    ) -> list[SearchResult]:
        """The rows behind the ranked keys, with their thread's title, in one query per kind; a message
        found by meaning has its snippet around its best chunk (read for the results only)."""
        ids: dict[str, list[int]] = {kind: [] for kind in KINDS}
        for r in ranked:
            ids[r.key[0]].append(r.key[1])
        rows: dict[Key, tuple[Any, ...]] = {}
        for kind, sql in _HYDRATE.items():
            if ids[kind]:
                listed, param = id_table(ids[kind])
                for row in self.con.execute(sql.format(ids=listed), (param,)):
                    rows[(kind, int(row[0]))] = row
        extras: dict[int, tuple[Any, ...]] = {}
        if ids["memory"]:
            listed, param = id_table(ids["memory"])
            for row in self.con.execute(
                "SELECT id, superseded_by, valid_until, source_message_id, origin FROM long_term_memories "
                f"WHERE id IN (SELECT value FROM {listed})",
                (param,),
            ):
                extras[int(row[0])] = tuple(row[1:])
        chunks = {chunk_of[r.key]: r.key for r in ranked if r.key in chunk_of}
        spans: dict[Key, tuple[int, int]] = {}
        if chunks:
            listed, param = id_table(list(chunks))
            for cid, a, b in self.con.execute(
                f"SELECT id, start_char, end_char FROM message_chunks WHERE id IN (SELECT value FROM {listed})",
                (param,),
            ):
                spans[chunks[int(cid)]] = (int(a), int(b))
        out = []
        for r in ranked:
            row = rows.get(r.key)
            if row is None:
                continue
            tid, ext, role, category, content, title, at = row[1:]
            extra = extras.get(r.key[1], (None, None, None, None)) if r.key[0] == "memory" else (None,) * 4
            out.append(
                SearchResult(
                    r.key[0],
                    r.key[1],
                    tid,
                    ext,
                    role,
                    category,
                    snippet(content, parsed, spans.get(r.key)),
                    r.score,
                    r.matched,
                    title,
                    at,
                    *extra,
                )
            )
        return out


# -- SQL ----------------------------------------------------------------------------------------------

_Hit = TypeVar("_Hit")

# (id, thread_id, external_id, role, category, content, thread title, time) of each kind; {ids}: the
# table store.db.id_table names.
_HYDRATE = {
    "message": "SELECT m.id, m.thread_id, m.external_id, m.role, NULL, m.content, t.title, m.created_at "
    "FROM messages m JOIN threads t ON t.id = m.thread_id WHERE m.id IN (SELECT value FROM {ids})",
    "memory": "SELECT m.id, m.source_thread_id, NULL, NULL, m.category, m.content, t.title, m.created_at "
    "FROM long_term_memories m LEFT JOIN threads t ON t.id = m.source_thread_id "
    "WHERE m.id IN (SELECT value FROM {ids})",
    "summary": "SELECT s.thread_id, s.thread_id, NULL, NULL, NULL, s.content, t.title, s.updated_at "
    "FROM thread_summaries s JOIN threads t ON t.id = s.thread_id WHERE s.thread_id IN (SELECT value FROM {ids})",
}


def _thread_scoped(con: Any, hits: list[_Hit], f: Filters) -> list[_Hit]:
    """Drop from retriever hits (KeywordHit, or tuples starting with the (kind, id) key) the messages and summaries of threads the filters leave
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
    keys = [_key(h) for h in hits]
    listed, param = id_table([key[1] for key in keys if key[0] == "message"])
    hidden_messages = {
        int(r[0])
        for r in con.execute(
            f"SELECT id FROM messages WHERE id IN (SELECT value FROM {listed}) AND thread_id IN ({excluded})",
            (param, *args),
        )
    }
    return [
        h
        for h, key in zip(hits, keys, strict=True)
        if not (key[0] == "message" and key[1] in hidden_messages)
        and not (key[0] == "summary" and key[1] in hidden_threads)
    ]


def _key(hit: Any) -> Key:
    return hit.key if isinstance(hit, KeywordHit) else hit[0]


__all__ = ["DEPTH", "SCOPES", "Filters", "Fusion", "SearchMixin", "SearchResponse", "SearchResult"]
