"""The pure half of search: user text -> FTS5 expression, two ranked lists -> one, snippets.

Kept apart from the SQL (store/search/engine.py) so the evaluation (bench/eval_search.py) can re-fuse the same
candidate lists with every variant we tried, and so the rules that make any user text safe can be tested
without a database.

Why the keyword expression is an OR of quoted phrases: users type questions, not boolean queries; BM25
ranks a message sharing more of the words first, and a word that is FTS5 syntax (`AND`, `c++`, `-x`,
`"`, `col:`) is only ever a quoted phrase. A run of CJK characters is searched as its overlapping pairs,
because the index holds CJK one character per token (store.text.index_text) and Chinese is written
without spaces: the query 熊猫基地几点去 then finds a message that contains 熊猫 or 基地.

Why "convex" fusion (0.9 x cosine + 0.1 x BM25 / best BM25), shifted to keywords for CJK text: measured
on bench/eval (README "Search"), plain RRF k=60 lost to the vector retriever at k=10 (recall 0.724 vs
0.755); this beats both single retrievers at k=5 and k=10 (recall@10 0.801; keyword 0.636).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from itertools import groupby, pairwise
from typing import Literal

from store.text import MAX_QUERY_CHARS, MAX_QUERY_TOKENS, query_terms

Method = Literal["rrf", "convex"]
Key = tuple[str, int]  # (kind, id)
Fused = tuple[Key, float, tuple[str, ...]]  # (key, score, matched)

SNIPPET_CHARS = 200
NEIGHBOUR_SOURCES = 20  # how many top hits may lift their neighbours
MIN_PREFIX = 3  # a shorter last word is matched whole: "a*" would expand to half the vocabulary
_CJK1 = re.compile(
    r"^[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0003134f]$"
)
STOPWORDS = frozenset(
    (
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "can",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "how",
        "i",
        "in",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "so",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "they",
        "this",
        "to",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "you",
        "your",
    )
)


@dataclass(frozen=True, slots=True)
class Fusion:
    """How the two ranked lists become one (the defaults are the measured best, see the module doc)."""

    method: Method = "convex"
    rrf_k: int = 60
    keyword_weight: float = 1.0  # RRF weights; convex uses semantic_weight and 1 - semantic_weight
    vector_weight: float = 1.0
    semantic_weight: float = 0.9  # of raw cosine vs BM25 / best BM25 (cosine spans less: ~0.1-0.7)
    adaptive: bool = True  # shift weight to keywords for CJK queries (the default model is English-only)
    neighbours: float = 0.0  # >0: a message hit lifts its neighbouring turns to this fraction of its score


# -- the keyword expression ----------------------------------------------------------------------------


def _quote(phrase: str) -> str:
    return '"' + phrase.replace('"', '""') + '"'


def _phrases(text: str) -> list[str]:
    """The query's phrases as the index sees them: words, and CJK runs as overlapping character pairs."""
    phrases: list[str] = []
    for term in query_terms(text):
        for is_cjk, group in groupby(term.split(" "), key=lambda piece: bool(_CJK1.match(piece))):
            pieces = list(group)
            if not is_cjk:
                phrases.append(" ".join(pieces))
            elif len(pieces) == 1:
                phrases.append(pieces[0])
            else:
                phrases.extend(f"{a} {b}" for a, b in pairwise(pieces))
    return phrases


def keyword_expression(text: str, *, prefix_last: bool = False, drop_stopwords: bool = True) -> str | None:
    """An FTS5 OR-expression for `text` that can never be a syntax error; None when nothing is searchable.

    Each word is one quoted phrase; a CJK run becomes its overlapping character pairs (or the single
    character), because the index holds CJK one character per token and users type whole sentences.
    """
    phrases = _phrases(text)
    # The word being typed (no space after it yet) may be the start of a longer word: match it as a prefix.
    typing = (
        prefix_last
        and bool(phrases)
        and bool(text[-1:].strip())
        and not _CJK1.match(phrases[-1][-1:])
        and len(phrases[-1]) >= MIN_PREFIX
    )
    last = phrases[-1] if typing else None
    unique = list(dict.fromkeys(phrases))
    if drop_stopwords and any(p.casefold() not in STOPWORDS for p in unique):
        unique = [p for p in unique if p.casefold() not in STOPWORDS or p == last]
    unique = unique[:MAX_QUERY_TOKENS]
    if not unique:
        return None
    quoted = [_quote(p) + ("*" if p == last else "") for p in unique]
    return " OR ".join(quoted)


def cjk_share(text: str) -> float:
    """The share of CJK characters among the non-space characters of `text` (of its start: a pasted
    10 MB query must not take seconds here)."""
    chars = [c for c in text[:MAX_QUERY_CHARS] if not c.isspace()]
    return sum(1 for c in chars if _CJK1.match(c)) / len(chars) if chars else 0.0


def _scaled(hits: Sequence[tuple[Key, float]]) -> dict[Key, float]:
    """BM25 scores divided by the best one: [0, 1], where 0 is BM25's own floor (none of the words)."""
    best = max((s for _, s in hits), default=0.0)
    return {key: s / best if best > 0 else 1.0 for key, s in hits}


def fuse(
    keyword: Sequence[tuple[Key, float]],
    semantic: Sequence[tuple[Key, float]],
    fusion: Fusion,
    query: str = "",
    *,
    unembedded: Collection[str] = ("summary",),
) -> list[Fused]:
    """Merge two best-first lists of (key, score) into (key, fused score, matched), best first.

    "convex": alpha * cosine + (1 - alpha) * bm25 / best bm25. Both are measured from their natural
    zero (no shared words; orthogonal meaning) rather than min-max over the candidates, so the nearest
    of a few unrelated vectors (KNN always returns k) cannot outrank an exact keyword match. Kinds with
    no vectors (`unembedded`: summaries) score by their keyword score alone, not by a missing half.
    "rrf": sum of weight / (rrf_k + rank). adaptive: alpha (or the vector weight) shrinks with the share
    of CJK characters in the query, because the default model is English-only (measured: on Chinese
    questions the vector list finds 68% of the answers, the keyword list all of them).
    """
    lean = cjk_share(query) if fusion.adaptive else 0.0
    scores: dict[Key, float] = {}
    matched: dict[Key, list[str]] = {}
    for key, _ in keyword:
        matched.setdefault(key, []).append("keyword")
    for key, _ in semantic:
        matched.setdefault(key, []).append("semantic")
    if fusion.method == "rrf":
        weighted = ((keyword, fusion.keyword_weight), (semantic, fusion.vector_weight * (1.0 - lean)))
        for hits, weight in weighted:
            for rank, (key, _) in enumerate(hits, start=1):
                scores[key] = scores.get(key, 0.0) + weight / (fusion.rrf_k + rank)
    else:
        alpha = 0.0 if not semantic else 1.0 if not keyword else fusion.semantic_weight * (1.0 - lean)
        for key, s in _scaled(keyword).items():
            scores[key] = scores.get(key, 0.0) + (1.0 if key[0] in unembedded else 1.0 - alpha) * s
        for key, s in semantic:
            scores[key] = scores.get(key, 0.0) + alpha * max(0.0, s)
    order = sorted(matched, key=lambda k: (-scores.get(k, 0.0), k))
    return [(k, scores.get(k, 0.0), tuple(matched[k])) for k in order]


def expand_neighbours(fused: Sequence[Fused], neighbours: dict[int, list[int]], factor: float) -> list[Fused]:
    """Lift the turns around a strong message hit (the question before an answer, the answer after a
    question) to `factor` times its score, unless they already score higher."""
    scores = {key: (s, m) for key, s, m in fused}
    for key, s, _ in fused[:NEIGHBOUR_SOURCES]:
        if key[0] != "message":
            continue
        for nid in neighbours.get(key[1], ()):
            nkey = ("message", nid)
            old = scores.get(nkey)
            if old is None or old[0] < factor * s:
                scores[nkey] = (factor * s, old[1] if old else ("neighbour",))
    order = sorted(scores, key=lambda k: (-scores[k][0], k))
    return [(k, scores[k][0], scores[k][1]) for k in order]


# -- snippets ------------------------------------------------------------------------------------------


def snippet(text: str, query: str, span: tuple[int, int] | None = None, width: int = SNIPPET_CHARS) -> str:
    """About `width` characters of `text` around the first query word found (or the matching chunk)."""
    folded = text.casefold()
    at = -1
    phrases = _phrases(query)
    words = [p for p in phrases if p.casefold() not in STOPWORDS] or phrases
    for phrase in words:
        needle = phrase.replace(" ", "").casefold() if _CJK1.match(phrase[:1]) else phrase.casefold()
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
