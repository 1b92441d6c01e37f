"""The keyword retriever: FTS5 (porter-stemmed) candidates re-scored with our own BM25.

Why our own BM25: FTS5's bm25() has k1 = 1.2 and b = 0.75 built in, and b = 0.75 punishes long turns
hard; conversation turns vary from "ok" to pages, and the long ones are often the answers. Measured on the
evaluation's tuning half (docs/guide/search.md), a low b ranks better. FTS5 still does the heavy part, in C:
it keeps the best `RESCORE_DEPTH` rows by its own BM25 (store.search.candidates finds exactly those rows
without scoring every row of a common word); for those rows only, the `memapp_tf` auxiliary function
(Python, registered on every connection) reads each phrase's count and the row's length from the index,
and this module computes BM25 with the configured k1 and b, IDF over the whole table (Lucene's form,
never negative; the document frequencies come from the index's own vocabulary, store.search.terms), and
`coverage`: the IDF-weighted share of the query's phrases the row contains, which the relevance floor
uses. (The function lives in store.db, which registers it, so opening chat.db does not import the search.)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import apsw
import numpy as np

from store.search.candidates import TABLES, best_rows, matches, memory_where, message_where
from store.search.filters import Filters
from store.search.held import HeldKeywords
from store.search.query import CJK1, ParsedQuery
from store.search.terms import document_frequencies

Key = tuple[str, int]  # (kind, id)
RESCORE_DEPTH = 100  # rows FTS5 keeps (by its own bm25) for our re-scoring, per kind: 300 cost hybrid
# search 2.6x vector-only (issue 7's bound is 2x) for no measurable recall (b moves few rows that far)


@dataclass(frozen=True, slots=True)
class KeywordHit:
    key: Key
    bm25: float  # higher is better
    coverage: float  # 0..1: IDF-weighted share of the query's phrases found in the row


def _cjk_pair(phrase: str) -> bool:
    return len(phrase) == 3 and phrase[1] == " " and CJK1.match(phrase[0]) is not None


def _idf(rows: int, df: int) -> float:
    return math.log(1.0 + (rows - df + 0.5) / (df + 0.5))


def keyword_hits(
    con: apsw.Connection,
    parsed: ParsedQuery,
    kind: str,
    filters: Filters,
    n: int,
    *,
    k1: float,
    b: float,
    held: HeldKeywords | None = None,
) -> list[KeywordHit]:
    """The best `n` rows of one kind for `parsed`, by our BM25, with their coverage. Filters apply
    inside the FTS query (before its LIMIT). `held`: FTS5's best rows are found in numpy
    (store.search.held: the same rows, for less) when it can."""
    expr = parsed.expression
    if expr is None or n <= 0:
        return []
    depth = max(n, RESCORE_DEPTH)
    found = None if held is None else held.best_rows(con, kind, filters, parsed.phrases, parsed.prefix, depth)
    if found is None:
        dfs = document_frequencies(con, TABLES[kind], parsed.phrases, parsed.prefix)
        if not any(dfs):  # no row has any phrase
            return []
        ranked = best_rows(con, kind, filters, parsed.phrases, parsed.prefix, dfs, depth)
        found = dfs, matches(ranked, len(parsed.phrases))
    dfs, rows = found
    if not rows.ids:
        return []
    total_rows = max(rows.rows, 1)
    avgdl = max(rows.tokens / total_rows, 1.0)
    idfs = [_idf(total_rows, df) for df in dfs]
    # A CJK pair found nowhere is most likely not a word (two characters on either side of a word
    # boundary: 公司做 gives 司做): it cannot count against a row's coverage.
    idf_sum = (
        sum(i for i, df, p in zip(idfs, dfs, parsed.phrases, strict=True) if df or not _cjk_pair(p)) or 1.0
    )
    norm = k1 * (1.0 - b + b * rows.sizes / avgdl)
    score, cover = np.zeros(len(rows.ids)), np.zeros(len(rows.ids))
    with np.errstate(divide="ignore", invalid="ignore"):  # k1 = 0: 0 / 0 where a phrase is absent
        for idf, f in zip(idfs, rows.counts, strict=True):
            score += np.where(f > 0, idf * f * (k1 + 1.0) / (f + norm), 0.0)
            cover += np.where(f > 0, idf, 0.0)
    ids = np.asarray(rows.ids, dtype=np.int64)
    best = np.lexsort((ids, -score))[:n]
    return [KeywordHit((kind, int(ids[i])), float(score[i]), float(cover[i]) / idf_sum) for i in best]


__all__ = ["TABLES", "KeywordHit", "keyword_hits", "memory_where", "message_where"]
