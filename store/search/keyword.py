"""The keyword retriever: FTS5 (porter-stemmed) candidates re-scored with our own BM25.

Why our own BM25: FTS5's bm25() has k1 = 1.2 and b = 0.75 built in, and b = 0.75 punishes long turns
hard; conversation turns vary from "ok" to pages, and the long ones are often the answers. Measured on the
evaluation's tuning half (README "Search"), a low b ranks better. FTS5 still does the heavy part, in C:
it finds every row that matches any phrase and keeps its best `RESCORE_DEPTH` by its own BM25; for those
rows only, the `memapp_tf` auxiliary function (Python, registered on every connection) reads
each phrase's count and the row's length from the index, and this module computes BM25 with the
configured k1 and b, IDF over the whole table (Lucene's form, never negative), and `coverage`: the
IDF-weighted share of the query's phrases the row contains, which the relevance floor uses. (The
function lives in store.db, which registers it, so opening chat.db does not import the search.)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import apsw

from store.search.query import CJK1, ParsedQuery
from store.search.terms import document_frequencies

if TYPE_CHECKING:
    from store.search.engine import Filters

Key = tuple[str, int]  # (kind, id)
RESCORE_DEPTH = 100  # rows FTS5 keeps (by its own bm25) for our re-scoring, per kind: 300 cost hybrid
# search 2.6x vector-only (issue 7's bound is 2x) for no measurable recall (b moves few rows that far)
TABLES = {"message": "fts_messages", "memory": "fts_memories", "summary": "fts_summaries"}


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
) -> list[KeywordHit]:
    """The best `n` rows of one kind for `parsed`, by our BM25, with their coverage. Filters apply
    inside the FTS query (before its LIMIT)."""
    expr = parsed.expression
    if expr is None or n <= 0:
        return []
    sql, args = keyword_sql(kind, filters)
    rows = [(int(rid), str(tf)) for rid, tf in con.execute(sql, [expr, *args, max(n, RESCORE_DEPTH)])]
    if not rows:
        return []
    dfs = document_frequencies(con, TABLES[kind], parsed.phrases, parsed.prefix)
    first = [int(x) for x in rows[0][1].split()]
    total_rows, total_tokens = max(first[0], 1), first[1]
    avgdl = max(total_tokens / total_rows, 1.0)
    idfs = [_idf(total_rows, df) for df in dfs]
    # A CJK pair found nowhere is most likely not a word (two characters on either side of a word
    # boundary: 公司做 gives 司做): it cannot count against a row's coverage.
    idf_sum = (
        sum(i for i, df, p in zip(idfs, dfs, parsed.phrases, strict=True) if df or not _cjk_pair(p)) or 1.0
    )
    hits = []
    for rid, tf in rows:
        nums = [int(x) for x in tf.split()]
        norm = k1 * (1.0 - b + b * nums[2] / avgdl)
        score = cover = 0.0
        for idf, f in zip(idfs, nums[3:], strict=False):
            if f:
                score += idf * f * (k1 + 1.0) / (f + norm)
                cover += idf
        hits.append(KeywordHit((kind, rid), score, cover / idf_sum))
    hits.sort(key=lambda h: (-h.bm25, h.key))
    return hits[:n]


# -- SQL ------------------------------------------------------------------------------------------------


def message_where(f: Filters, alias: str = "m") -> tuple[list[str], list[Any]]:
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


def memory_where(f: Filters) -> tuple[list[str], list[Any]]:
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


def keyword_sql(kind: str, f: Filters) -> tuple[str, list[Any]]:
    """SELECT (id, memapp_tf) of the rows matching `?`, best first by FTS5's bm25, `LIMIT ?`."""
    if kind == "message":
        if not any(v is not None for v in (f.thread_id, f.role, f.since, f.until)):  # FTS5 stops after n
            return (
                "SELECT rowid, memapp_tf(fts_messages) FROM fts_messages WHERE fts_messages MATCH ? "
                "ORDER BY rank LIMIT ?",
                [],
            )
        where, args = message_where(f)
        return (
            "SELECT m.id, memapp_tf(fts_messages) FROM fts_messages JOIN messages m ON m.id = fts_messages.rowid "
            f"WHERE fts_messages MATCH ? AND {' AND '.join(where)} ORDER BY fts_messages.rank LIMIT ?",
            args,
        )
    if kind == "memory":
        where, args = memory_where(f)
        return (
            "SELECT m.id, memapp_tf(fts_memories) FROM fts_memories JOIN long_term_memories m "
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
        "SELECT s.thread_id, memapp_tf(fts_summaries) FROM fts_summaries JOIN thread_summaries s "
        f"ON s.thread_id = fts_summaries.rowid WHERE fts_summaries MATCH ? AND {' AND '.join(where)} "
        "ORDER BY fts_summaries.rank LIMIT ?",
        args,
    )
