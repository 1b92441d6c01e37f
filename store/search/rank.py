"""The pure half of search: two scored candidate lists -> one ranked list, the relevance floor, snippets.

Kept apart from the SQL (store/search/engine.py) so the evaluation (bench/quality/eval_search.py) can re-rank the
same candidate lists with every setting, and so the rules can be tested without a database.

Why z-score fusion with about equal weights: BM25 and cosine live on different scales that move from query
to query (a rare word gives BM25 20, a common one 3; MiniLM's cosines sit between 0.1 and 0.7). The old
fixed `0.9 x cosine + 0.1 x BM25/best` was tuned on 86 questions and overfit: on long multi-session
archives it ranked below keyword search alone. Standardising each list over its own candidates (mean 0,
spread 1) and adding them lets whichever retriever is sure of a hit carry it (docs/guide/search.md has the
figures from the evaluation's tuning and test halves).

Why neighbour smoothing and a thread boost: an answer often spans two or three turns (a question and its
reply), and a turn in a conversation that is about the query as a whole is likelier to be the one meant
than a stray turn that happens to share a word. Both only re-order messages; memories and summaries keep
their kinds and their own scores.

Why a floor: the vector retriever always returns its k nearest, related or not. A search answers only
when some result has strong evidence: a cosine of at least `floor`, or keyword coverage (the IDF-weighted
share of the query's words it contains) of at least `keyword_floor`, or enough of both (`evidence`);
otherwise it returns nothing and the caller says so. When it answers, a semantic-only hit below the floor
is still left out (a keyword hit shares a real word, stop words never count), unless it is the turn right
before or after a kept message. Measured: dropping every hit below the evidence line instead cost the answerable
questions 0.03-0.1 recall@10 on the tuning half.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace

from store.search.conversation import Cues, Neighbourhood, Weights, diversify, rescore
from store.search.keyword import Key, KeywordHit
from store.search.query import ParsedQuery

SNIPPET_CHARS = 200
SMOOTH_DEPTH = 50  # the best message candidates that get smoothed (and their neighbours); the rest keep
# their fused score (one ranked below 50 after fusion rarely reaches the top 10), because smoothing all of
# them (~200) took a large share of a hybrid search's time (bench/perf/search.py)
KEYWORD = "keyword"
SEMANTIC = "semantic"
NEIGHBOUR = "neighbour"


@dataclass(frozen=True, slots=True)
class Fusion:
    """How candidates become one ranked list (defaults: chosen on the evaluation's tuning half)."""

    keyword_weight: float = 1.0
    semantic_weight: float = 0.6
    cjk_adaptive: bool = True  # the semantic weight shrinks with the query's CJK share (English-only model)
    k1: float = 1.2  # BM25 term-frequency saturation
    b: float = 0.1  # BM25 length normalisation (FTS5's built-in is 0.75)
    neighbours: float = 0.75  # a message gains this share of its neighbouring turns' (weighted) mean score
    thread: float = 0.4  # a message gains this share of its session's best score (store.search.conversation)
    window: int = 3  # neighbouring turns counted on each side (same session)
    session_gap: float = 3.0  # hours between two turns that start a new session inside a thread
    reply: float = 0.3  # share of the matching turn right before it that a reply by someone else inherits
    reply_plain: float = 0.0  # ... scaled by this when that turn asks nothing (no question mark)
    join_replies: bool = True  # the reply to a matching question joins the list though no retriever found it
    role: float = 1.0  # added to the user's turns for an "I/my" query, the assistant's for a "you" query
    author: float = 4.0  # added to the turns of a speaker the query names (imports that keep authors)
    date: float = 4.0  # added to the turns written inside a date the query names (store.search.dates)
    diverse: float = (
        0.05  # list/count questions: a better result from its session costs this share of the top
    )
    per_hit_floor: bool = False  # when a search answers, a semantic-only hit below the floor is still dropped
    floor: float = 0.3  # cosine a hit needs when its keywords do not carry it
    keyword_floor: float = 0.6  # keyword coverage a hit needs when its meaning does not carry it
    cjk_smoothing: bool = False  # False: smoothing and thread boost shrink with the query's CJK share
    join_neighbours: bool = False  # a neighbour neither retriever found may join the list (measured: no gain)
    cjk_gain: float = 6.0  # how fast the semantic side fades as the query's CJK share grows
    cjk_smooth_gain: float = 8.0  # how fast smoothing and the thread boost fade (cjk_smoothing: never)
    answer_floor: float = 0.0  # the query-level answer floor (store.search.answer): 0 = off


@dataclass(slots=True)
class Ranked:
    """One ranked candidate: `score` is relative (0 = no evidence), comparable within one search."""

    key: Key
    score: float
    matched: tuple[str, ...]
    cosine: float | None = None
    coverage: float | None = None
    passes: bool = False  # may be returned: a keyword match, or a cosine at the floor, or next to one
    strong: bool = False  # evidence enough to answer the query (see `evidence`)


@dataclass(frozen=True, slots=True)
class Context:
    """Where each candidate message sits: its thread and the turns before and after it."""

    thread_of: Mapping[int, int] = field(default_factory=dict)
    neighbours_of: Mapping[int, Sequence[int]] = field(default_factory=dict)
    hood: Neighbourhood | None = None  # sessions, windows, speakers and times (store.search.conversation)

    def subset(self, ids: Sequence[int]) -> Context:
        """The context a search builds for `ids` alone (message_context(ids)), from a bigger one."""
        near = {i: list(self.neighbours_of.get(i, ())) for i in ids}
        keep = set(ids) | {n for ns in near.values() for n in ns}
        hood = None
        if self.hood is not None:
            windows = {i: list(self.hood.window_of.get(i, ())) for i in ids if i in self.hood.turns}
            seen = set(windows) | {n for ns in windows.values() for n, _ in ns}
            hood = Neighbourhood.of(
                {i: self.hood.turns[i] for i in seen},
                {i: k for i, k in self.hood.session_of.items() if i in seen},
                windows,
            )
        return Context(
            {i: t for i, t in self.thread_of.items() if i in keep}, {i: n for i, n in near.items() if n}, hood
        )


def cjk_lean(parsed: ParsedQuery | None, fusion: Fusion) -> float:
    """0 (an English query) .. 1 (enough CJK that the English-only model's side is dropped)."""
    return 0.0 if parsed is None else min(1.0, fusion.cjk_gain * parsed.cjk)


def _zscores(scores: Mapping[Key, float]) -> tuple[dict[Key, float], float]:
    """Each score standardised over the list, and the value for a key missing from it: just below the
    list's worst (so a key the list found never ties with one it did not). A list of one or two carries
    no spread: its hits count 1, a missing key 0."""
    if len(scores) < 3:
        return {k: 1.0 for k in scores}, 0.0
    vals = list(scores.values())
    mean = sum(vals) / len(vals)
    std = math.sqrt(sum((v - mean) ** 2 for v in vals) / len(vals)) or 1.0
    z = {k: (v - mean) / std for k, v in scores.items()}
    return z, min(z.values()) - 1e-6


def fuse(
    keyword: Sequence[KeywordHit],
    semantic: Sequence[tuple[Key, float]],
    fusion: Fusion,
    parsed: ParsedQuery | None = None,
    *,
    unembedded: Collection[str] = ("summary",),
) -> dict[Key, Ranked]:
    """z-score fusion of the keyword and semantic lists. Kinds with no vectors (`unembedded`) use their
    keyword score in place of the missing semantic one, so they are not punished for having none."""
    lean = cjk_lean(parsed, fusion) if fusion.cjk_adaptive else 0.0
    wk = fusion.keyword_weight
    ws = fusion.semantic_weight * (1.0 - lean) if semantic else 0.0
    zk, kmin = _zscores({h.key: h.bm25 for h in keyword})
    zs, smin = _zscores(dict(semantic))
    base = wk * kmin + ws * smin
    out: dict[Key, Ranked] = {}
    for h in keyword:
        out[h.key] = Ranked(h.key, 0.0, (KEYWORD,), coverage=h.coverage)
    for key, cos in semantic:
        r = out.get(key)
        if r is None:
            out[key] = Ranked(key, 0.0, (SEMANTIC,), cosine=cos)
        else:
            r.matched, r.cosine = (KEYWORD, SEMANTIC), cos
    for key, r in out.items():
        if key[0] in unembedded:
            r.score = (wk + ws) * (zk.get(key, kmin) - kmin)
        else:
            r.score = wk * zk.get(key, kmin) + ws * zs.get(key, smin) - base
        r.strong = evidence(r, fusion) >= 1.0
        r.passes = r.strong or r.coverage is not None
    return out


def evidence(r: Ranked, fusion: Fusion) -> float:
    """How sure we are that `r` is about the query: cosine / floor + coverage / keyword_floor (a missing
    half counts 0). At 1 or more the hit passes the floor: by meaning alone, by its words alone, or by
    some of both."""
    sem = max(0.0, r.cosine) / fusion.floor if r.cosine is not None and fusion.floor > 0 else 0.0
    kw = r.coverage / fusion.keyword_floor if r.coverage is not None and fusion.keyword_floor > 0 else 0.0
    return sem + kw


def weights(fusion: Fusion) -> Weights:
    return Weights(
        neighbours=fusion.neighbours,
        window=fusion.window,
        session=fusion.thread,
        reply=fusion.reply,
        reply_plain=fusion.reply_plain,
        join_replies=fusion.join_replies,
        role=fusion.role,
        author=fusion.author,
        date=fusion.date,
        diverse=fusion.diverse,
    )


def smooth(
    ranked: dict[Key, Ranked],
    context: Context,
    fusion: Fusion,
    parsed: ParsedQuery | None = None,
    cues: Cues | None = None,
) -> dict[Key, Ranked]:
    """The conversation rules (store.search.conversation) when the context has the turns around the
    candidates, else neighbour smoothing and the thread boost; for messages only. A turn that neither
    retriever found may join the list (matched "neighbour"), and any turn next to a message that passes
    the floor passes."""
    lean = 0.0 if fusion.cjk_smoothing or parsed is None else min(1.0, fusion.cjk_smooth_gain * parsed.cjk)
    if lean:
        fusion = replace(
            fusion,
            neighbours=fusion.neighbours * (1 - lean),
            thread=fusion.thread * (1 - lean),
            reply=fusion.reply * (1 - lean),
        )
    if context.hood is not None:
        return _converse(ranked, context.hood, fusion, cues or Cues())
    if fusion.neighbours <= 0 and fusion.thread <= 0:
        return ranked
    base = {k[1]: r.score for k, r in ranked.items() if k[0] == "message" and k[1] in context.thread_of}
    passing = {k[1] for k, r in ranked.items() if k[0] == "message" and r.passes}
    best: dict[int, float] = {}
    for mid, s in base.items():
        tid = context.thread_of.get(mid)
        if tid is not None:
            best[tid] = max(best.get(tid, 0.0), s)
    # Adjacency both ways: a neighbour that is no candidate is only listed under the candidates it is next to.
    near_of: dict[int, set[int]] = {}
    for mid, listed in context.neighbours_of.items():
        for n in listed:
            near_of.setdefault(mid, set()).add(n)
            near_of.setdefault(n, set()).add(mid)
    ids = set(base)
    if fusion.neighbours > 0 and fusion.join_neighbours:
        for mid in base:
            ids.update(near_of.get(mid, ()))
    out = {k: r for k, r in ranked.items() if k[0] != "message" or k[1] not in base}
    for mid in ids:
        near = near_of.get(mid, set())
        score = base.get(mid, 0.0)
        if near and fusion.neighbours > 0:
            score += fusion.neighbours * sum([base.get(n, 0.0) for n in near]) / 2.0
        tid = context.thread_of.get(mid)
        if tid is not None and fusion.thread > 0:
            score += fusion.thread * best.get(tid, 0.0)
        key = ("message", mid)
        r = ranked.get(key) or Ranked(key, 0.0, (NEIGHBOUR,))
        r.score = score
        r.passes = r.passes or any(n in passing for n in near)
        out[key] = r
    return out


def _converse(
    ranked: dict[Key, Ranked], hood: Neighbourhood, fusion: Fusion, cues: Cues
) -> dict[Key, Ranked]:
    base = {k[1]: r.score for k, r in ranked.items() if k[0] == "message" and k[1] in hood.turns}
    scores = rescore(base, hood, cues, weights(fusion))
    passing = {k[1] for k, r in ranked.items() if k[0] == "message" and r.passes}
    out = {k: r for k, r in ranked.items() if k[0] != "message" or k[1] not in base}
    for mid, score in scores.items():
        key = ("message", mid)
        r = ranked.get(key) or Ranked(key, 0.0, (NEIGHBOUR,))
        r.score = score
        r.passes = r.passes or any(n in passing and abs(d) == 1 for n, d in hood.window_of.get(mid, ()))
        if not r.passes and r.matched == (NEIGHBOUR,):  # a joined reply passes with the question it answers
            r.passes = hood.after.get(mid) in passing
        out[key] = r
    return out


def arrange(kept: Sequence[Ranked], context: Context, fusion: Fusion, cues: Cues | None) -> list[Ranked]:
    """The ranked list, re-ordered for variety across sessions when the query asks for a list or a count
    (store.search.conversation `diversify`); as it is otherwise."""
    hood = context.hood
    if hood is None or cues is None or not cues.listing or fusion.diverse <= 0 or not kept:
        return list(kept)
    head = list(kept[:SMOOTH_DEPTH])
    by_id = {r.key[1]: r for r in head if r.key[0] == "message"}
    if len(by_id) != len(head):  # other kinds in the list: leave it alone
        return list(kept)
    ids = diversify([r.key[1] for r in head], {i: r.score for i, r in by_id.items()}, hood, fusion.diverse)
    return [by_id[i] for i in ids] + list(kept[SMOOTH_DEPTH:])


def order(ranked: Mapping[Key, Ranked], *, floor: bool = True, per_hit: bool = True) -> list[Ranked]:
    """Best first (ties by key, so the order is stable). With `floor`: nothing at all unless some result
    has strong evidence, and then (`per_hit`) only what passes (semantic-only hits below the floor never
    do)."""
    if floor and not any(r.strong for r in ranked.values()):
        return []
    kept = [r for r in ranked.values() if r.passes or not floor or not per_hit]
    return sorted(kept, key=lambda r: (-r.score, r.key))


# -- snippets ------------------------------------------------------------------------------------------


def snippet(
    text: str, parsed: ParsedQuery, span: tuple[int, int] | None = None, width: int = SNIPPET_CHARS
) -> str:
    """About `width` characters of `text` around the first query word found (or the matching chunk)."""
    folded = text.casefold()
    at = -1
    for needle in parsed.needles:
        found = folded.find(needle)
        if found >= 0 and (at < 0 or found < at):
            at = found
    if at < 0 and span is not None:
        at = span[0]
    start = 0 if at < 0 else max(0, at - width // 3)
    if start and (space := text.rfind(" ", max(0, start - 20), start)) > 0:
        start = space + 1
    end = min(len(text), start + width)
    body = " ".join(text[start:end].split())
    return ("…" if start > 0 else "") + body + ("…" if end < len(text) else "")
