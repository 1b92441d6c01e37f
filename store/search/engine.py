"""Hybrid search over memories, messages and summaries: FTS5 BM25 and sqlite-vec KNN, fused.

`Store.search(query, scope=, k=, filters=, keyword_only=, touch=, prefix=, weak=)` -> SearchResponse.

- The query is parsed once (store.search.query.ParsedQuery): its searchable words, its CJK share.
- Two retrievers, each asked for a deep list (`DEPTH` candidates) with the filters applied *inside* the
  query (vec0 metadata columns in the KNN; a join to the canonical rows before LIMIT in FTS), so `k=10`
  with a filter still returns 10 when 10 exist. Trashed memories are never candidates.
- A long message is searched through its chunks and scores as its best chunk; results are messages.
- The lists are fused, smoothed over neighbouring turns and threads, and (hybrid only) floored by store.search.rank
  (why: see there, and docs/guide/search.md); what passes no floor is never returned, and an empty answer
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

from store.db import id_table
from store.search import around, events
from store.search.answer import answers
from store.search.conversation import Cues, read_cues
from store.search.dates import Window, date_window
from store.search.filters import SCOPES, Filters
from store.search.held import HoldingMixin
from store.search.hydrate import hydrate
from store.search.keyword import Key, KeywordHit, keyword_hits, memory_where
from store.search.query import ParsedQuery, parse_query
from store.search.rank import SMOOTH_DEPTH, Context, Fusion, Ranked, arrange, fuse, order, smooth
from store.search.results import SearchResponse, SearchResult
from store.search.succession import after_successors
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


class SearchMixin(HoldingMixin):
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
        qvec: np.ndarray | None = None
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
        cues = self.query_cues(query, kinds, fusion, filters)
        for window in (cues.window, *cues.more)[: events.CANDIDATE_WINDOWS] if cues.window else ():
            kw, sem = self.window_candidates(kw, sem, parsed, window, filters, fusion, qvec)
        if not filters.include_archived or filters.source is not None:
            kw, sem = _thread_scoped(self.con, kw, filters), _thread_scoped(self.con, sem, filters)
        kept, context = self.rank_candidates(
            kw, sem, parsed, kinds, filters, fusion, cues, floor=mode == "hybrid"
        )
        chunk_of = {key: chunk for key, _, chunk in sem if chunk is not None}
        unsure = (
            bool(kept)
            and mode == "hybrid"
            and not answers(self.con, kw, sem, kept, context, parsed, kinds, fusion)
        )
        results = [] if unsure else after_successors(hydrate(self.con, kept[:k], parsed, chunk_of))
        below = (
            [replace(r, weak=True) for r in after_successors(hydrate(self.con, kept[:k], parsed, chunk_of))]
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

    def rank_candidates(
        self,
        kw: Sequence[KeywordHit],
        sem: Sequence[tuple[Key, float, int | None]],
        parsed: ParsedQuery,
        kinds: Sequence[str],
        filters: Filters,
        fusion: Fusion,
        cues: Cues,
        *,
        floor: bool,
    ) -> tuple[list[Ranked], Context]:
        """The retrievers' lists -> the ranked results (and the context read for them): fused, re-scored
        by the conversation rules, superseded memories down, floored (`floor`: the hybrid's relevance
        floor; the keyword half alone ranks every row sharing a word and never judges: its floor used to
        empty 39-45 % of real questions whose answers were there, docs/benchmarks/search.md), and spread
        over sessions for a list question. Public so the tuning (bench/tune/tune_conversation.py) re-ranks
        cached lists with exactly this code."""
        ranked = fuse(kw, [(key, s) for key, s, _ in sem], fusion, parsed)
        context = Context()
        if "message" in kinds:
            best = sorted((r for r in ranked.values() if r.key[0] == "message"), key=lambda r: -r.score)
            context = self.message_context(
                [r.key[1] for r in best[:SMOOTH_DEPTH]],
                filters,
                fusion.window,
                fusion.session_gap,
                told=cues.window is not None and fusion.told > 0,
            )
            ranked = smooth(ranked, context, fusion, parsed, cues)
        if filters.as_of is None and "memory" in kinds:
            self._rank_down_superseded(ranked)
        kept = order(ranked, floor=floor, per_hit=fusion.per_hit_floor)
        return arrange(kept, context, fusion, cues), context

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
            window=c.window,
            session_gap=c.session_gap,
            reply=c.reply,
            join_replies=c.join_replies,
            role=c.role,
            author=c.author,
            date=c.date,
            event=c.event_date,
            told=c.told,
            diverse=c.diverse,
            per_hit_floor=c.per_hit_floor,
            floor=c.floor,
            keyword_floor=c.keyword_floor,
            answer_floor=c.answer_floor,
            # The semantic side fades for CJK queries because MiniLM reads English only; a multilingual
            # model's vectors are as good there as anywhere (docs/benchmarks/search.md, per language).
            cjk_adaptive=not getattr(self.embedder, "multilingual", False),
            cjk_smoothing=bool(getattr(self.embedder, "multilingual", False)),
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
        recall is unchanged, docs/guide/search.md). The first costs what a top-10 search costs at 200k
        chunks (bench/perf/search.py), the second twice that."""
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

    def message_context(
        self,
        message_ids: Sequence[int],
        filters: Filters,
        window: int = 1,
        gap_hours: float = 3.0,
        *,
        told: bool = False,
    ) -> Context:
        """Each message's thread and the turns around it (store.search.around)."""
        return around.message_context(self.con, message_ids, filters, window, gap_hours, told=told)

    def _newest_message_time(self) -> float | None:
        """What relative dates in a query count back from (store.search.dates): the newest message's time
        (the messages_created index: one seek)."""
        at = self.scalar("SELECT max(created_at) FROM messages")
        return None if at is None else float(at)

    def query_cues(
        self, query: str, kinds: Sequence[str], fusion: Fusion, filters: Filters | None = None
    ) -> Cues:
        """What the query says about who and when (store.search.conversation), for message searches: a
        date it names, or one relative to an event the archive talks about (store.search.events)."""
        if "message" not in kinds or (fusion.date <= 0 and fusion.event <= 0):
            return read_cues(query) if "message" in kinds else Cues()
        now = self._newest_message_time()
        window = date_window(query, now)
        found = [window] if window is not None else []
        if window is None and fusion.event > 0:
            f = filters or Filters()
            found = events.event_windows(
                query,
                now,
                lambda words: events.timed(
                    self.con, self.keyword_hits(parse_query(words), ("message",), f, events.MATCHES, fusion)
                ),
            )
        found = [w for w in found if (fusion.event if w.kind == "event" else fusion.date) > 0]
        return read_cues(query, found[0] if found else None, found[1:])

    def window_candidates(
        self,
        kw: list[KeywordHit],
        sem: list[tuple[Key, float, int | None]],
        parsed: ParsedQuery,
        window: Window,
        filters: Filters,
        fusion: Fusion,
        qvec: np.ndarray | None,
    ) -> tuple[list[KeywordHit], list[tuple[Key, float, int | None]]]:
        """Each retriever's best messages inside the query's date window, added to its list: an answer from
        that day that ranked below `DEPTH` in the whole archive still becomes a candidate."""
        since = window.since if filters.since is None else max(window.since, filters.since)
        until = window.until if filters.until is None else min(window.until, filters.until)
        if since >= until:
            return kw, sem
        inside = replace(filters, since=since, until=until)
        seen = {h.key for h in kw}
        kw = kw + [
            h
            for h in self.keyword_hits(parsed, ("message",), inside, DEPTH // 2, fusion)
            if h.key not in seen
        ]
        if qvec is not None:
            have = {key for key, _, _ in sem}
            extra = self.semantic_candidates(qvec, ("message",), inside, DEPTH // 2)
            sem = sem + [h for h in extra if h[0] not in have]
        return kw, sem


# -- SQL ----------------------------------------------------------------------------------------------

_Hit = TypeVar("_Hit")


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
