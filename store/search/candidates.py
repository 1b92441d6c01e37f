"""FTS5's best rows for a query, by its own bm25: the same rows as `ORDER BY rank LIMIT`, for less.

The keyword retriever re-scores FTS5's best `RESCORE_DEPTH` rows (store.search.keyword says why). Asking
FTS5 for them (`MATCH 'a OR b OR c' ORDER BY rank LIMIT 100`) makes it compute bm25 for *every* row that
matches any phrase and sort them all; with a common word in the query ("say" in "what did we say about
the NAS") that is thousands of rows, most of the keyword search's time. Three ways to pay less, each
giving exactly the rows FTS5 would have kept (tests/store/test_keyword_retriever.py pins them):

- Many matches, no join: one scoring pass with a bounded sort (`ORDER BY bm25(t), rowid LIMIT`: ties by
  rowid, as FTS5's sorter leaves them), then the kept rows' term counts in a cheap second pass (the Python
  `memapp_tf` must not run for every match). With a join (filters, memories, summaries) or few matches,
  FTS5's ranked stream stays: the join then stops after `limit` rows instead of looking every match up.
- A very common word: a bound (the "max-score" idea of search engines). A phrase adds at most
  idf × (k1 + 1) to a row's bm25 (the term-frequency part is below k1 + 1 whatever the counts). Split the
  phrases into the common ones C (whose bounds add up to little) and the rest E. Ask FTS5 for the best
  rows of E alone (few rows to score), and let s be the `limit`-th best E-score. A row's full score is its
  E-score plus less than U = the sum of C's bounds, and `limit` rows already score at least s; so the best
  `limit` rows by the full score are among the E-rows scoring above s - U, provided U < s (a row with C
  words only scores below U). FTS5 then scores just those rows with the full query (the same bm25 it
  would have given them), ordered as FTS5 orders them (its score, then rowid). When the bound does not
  hold (too few E-rows, or C too heavy), the full query runs: the result never depends on the bound being
  tight, only the speed does. It pays only for words in a large share of the rows (IDF about 2 or less):
  for "say" in 4% of the messages (IDF 3) the bound is above what a rare word scores, and it is not tried.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import apsw
import numpy as np

from store.db import id_table
from store.search.filters import Filters

TABLES = {"message": "fts_messages", "memory": "fts_memories", "summary": "fts_summaries"}
FTS5_K1 = 1.2  # the k1 of FTS5's built-in bm25(), which orders `rank`
COMMON_ROWS = 1_000  # a phrase in fewer rows than this is cheap to score: never worth the split
COMMON_SHARE = 2.0  # ... and it must be in at least this many times the rows of the other phrases together
FEW_ROWS = 2_000  # matches (sum of the phrases' rows) below which FTS5's own sort is cheap enough
CLEAR = 1.5  # tried only when 2 x `limit` rows have a phrase whose IDF is this many times the bound
DEEPER = 20  # E-rows asked for, as a multiple of `limit`, to find every row above s - U
_MARGIN = 1e-9  # relative slack on the bound for floating-point rounding (bm25 sums in another order)


def quote(phrase: str, prefix: bool) -> str:
    return '"' + phrase.replace('"', '""') + '"' + ("*" if prefix else "")


def fts5_idf(rows: int, df: int) -> float:
    """FTS5's bm25() IDF (never below 1e-6)."""
    idf = math.log((0.5 + max(rows, 2) - df) / (0.5 + df))
    return idf if idf > 0.0 else 1e-6


def common_phrases(dfs: Sequence[int], rows: int, limit: int) -> list[int]:
    """Indexes of the phrases worth leaving out of FTS5's scoring pass (empty: none).

    The most common phrases together, each in COMMON_ROWS rows or more and together in COMMON_SHARE
    times the rows of the others (else the split saves little), as many as still leave the bound
    clearable: a row with one rare phrase scores about that phrase's IDF, so 2 x `limit` rows must hold a
    phrase whose IDF is CLEAR times the bound, or the `limit`-th best E-score would not clear it and the
    attempt would be wasted. Never all of them."""
    order = sorted(range(len(dfs)), key=lambda i: -dfs[i])
    for j in range(len(order) - 1, 0, -1):  # the biggest split first
        common, rest = order[:j], order[j:]
        if dfs[common[-1]] < COMMON_ROWS or sum(dfs[i] for i in common) < COMMON_SHARE * sum(
            dfs[i] for i in rest
        ):
            continue
        bound = sum(fts5_idf(rows, dfs[i]) * (FTS5_K1 + 1.0) for i in common)
        if sum(dfs[i] for i in rest if fts5_idf(rows, dfs[i]) >= CLEAR * bound) >= 2 * limit:
            return common
    return []


@dataclass(frozen=True, slots=True)
class Matches:
    """The best rows for a query as the BM25 re-scoring needs them (store.search.keyword)."""

    rows: int  # rows in the index
    tokens: int  # tokens in the index
    ids: list[int]
    sizes: np.ndarray  # each row's length in tokens (float64)
    counts: np.ndarray  # phrases x rows: how many times each row holds each phrase (float64)


def matches(found: Sequence[tuple[int, str]], phrases: int) -> Matches:
    """`Matches` from (id, memapp_tf) pairs."""
    nums = np.array([[int(x) for x in tf.split()] for _, tf in found], dtype=np.float64).reshape(
        len(found), 3 + phrases
    )
    rows, tokens = (int(nums[0, 0]), int(nums[0, 1])) if len(found) else (0, 0)
    return Matches(rows, tokens, [i for i, _ in found], nums[:, 2], nums[:, 3:].T)


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


def summary_where(f: Filters) -> tuple[list[str], list[Any]]:
    where, args = ["1"], []
    for col, op, value in (
        ("thread_id", "=", f.thread_id),
        ("updated_at", ">=", f.since),
        ("updated_at", "<", f.until),
    ):
        if value is not None:
            where.append(f"s.{col} {op} ?")
            args.append(value)
    return where, args


def _source(kind: str, f: Filters) -> tuple[str, str, list[Any]]:
    """(FROM clause, extra WHERE, args) of one kind's rows that pass the filters; rowid = the row's id."""
    table = TABLES[kind]
    if kind == "message":
        if all(v is None for v in (f.thread_id, f.role, f.since, f.until)):
            return table, "", []
        where, args = message_where(f)
        return f"{table} JOIN messages m ON m.id = {table}.rowid", " AND " + " AND ".join(where), args
    if kind == "memory":
        where, args = memory_where(f)
        return (
            f"{table} JOIN long_term_memories m ON m.id = {table}.rowid",
            " AND " + " AND ".join(where),
            args,
        )
    where, args = summary_where(f)
    return (
        f"{table} JOIN thread_summaries s ON s.thread_id = {table}.rowid",
        " AND " + " AND ".join(where),
        args,
    )


def passing_ids(con: apsw.Connection, kind: str, f: Filters, ids: Sequence[int]) -> set[int] | None:
    """Which of the rows `ids` of `kind` pass the filters (a memory: also not in the trash; a summary: its
    row exists); None when the filters ask nothing of a message. Each id is looked up by its key (a
    CROSS JOIN from the list: `id IN (list)` may scan the whole table instead)."""
    if kind == "message":
        where, args = message_where(f)
        if where == ["1"]:
            return None
        sql = "SELECT m.id FROM {ids} AS j CROSS JOIN messages m ON m.id = j.value"
    elif kind == "memory":
        where, args = memory_where(f)
        sql = "SELECT m.id FROM {ids} AS j CROSS JOIN long_term_memories m ON m.id = j.value"
    else:
        where, args = summary_where(f)
        sql = "SELECT s.thread_id FROM {ids} AS j CROSS JOIN thread_summaries s ON s.thread_id = j.value"
    listed, param = id_table(ids)
    rows = con.execute(f"{sql.format(ids=listed)} WHERE {' AND '.join(where)}", [param, *args])
    return {int(i) for (i,) in rows}


# -- the pruned path ------------------------------------------------------------------------------------


def best_rows(
    con: apsw.Connection,
    kind: str,
    filters: Filters,
    phrases: Sequence[str],
    prefix: str | None,
    dfs: Sequence[int],
    limit: int,
) -> list[tuple[int, str]]:
    """(id, memapp_tf) of the `limit` rows FTS5 ranks best for the OR of `phrases` (any order); `matches`
    reads them."""
    expr = " OR ".join(quote(p, p == prefix) for p in phrases)
    if len(dfs) > 1 and max(dfs) >= COMMON_ROWS:
        table = TABLES[kind]
        first = con.execute(
            f"SELECT memapp_tf({table}) FROM {table} WHERE {table} MATCH ? LIMIT 1", (expr,)
        ).fetchone()
        if first is None:  # the rows were deleted since the frequencies were read
            return []
        rows = int(str(first[0]).split(" ", 1)[0])  # the table's row count (memapp_tf's first field)
        common = common_phrases(dfs, rows, limit)
        if common:
            found = pruned_rows(con, kind, filters, phrases, prefix, dfs, limit, expr, common, rows)
            if found is not None:
                return found
    return ranked_rows(con, kind, filters, expr, limit, few=sum(dfs) <= FEW_ROWS)


def ranked_rows(
    con: apsw.Connection, kind: str, filters: Filters, expr: str, limit: int, *, few: bool = False
) -> list[tuple[int, str]]:
    """Every matching row scored by FTS5, the best `limit` kept, with their term counts.

    Without a join: one scoring pass with a bounded sort (ties by rowid, as `ORDER BY rank` keeps them),
    then the kept rows' term counts; `ORDER BY rank LIMIT` sorts every matching row (FTS5's own sorter
    never sees the LIMIT). With a filter that many rows fail: FTS5's ranked stream, joined row by row until
    `limit` rows pass (sorting after the join would look up every match first). `few` matches: that stream
    too (one statement costs less than two when there is little to sort)."""
    table = TABLES[kind]
    source, where, args = _source(kind, filters)
    if source == table and not few:
        ids = [
            int(i)
            for (i,) in con.execute(
                f"SELECT rowid FROM {table} WHERE {table} MATCH ? ORDER BY bm25({table}), rowid LIMIT ?",
                (expr, limit),
            )
        ]
        return term_counts(con, table, expr, ids)
    rows = _existing(kind, filters)
    if rows is not None and not few:
        # Only the trash (memories) or the row's existence (summaries) to check: few of the best fail it,
        # so join the best 2 x `limit` after a bounded sort; if fewer than `limit` pass, the stream decides.
        found = [
            int(i)
            for (i,) in con.execute(
                f"SELECT k.id FROM (SELECT rowid AS id, bm25({table}) AS r FROM {table} WHERE {table} MATCH ? "
                f"ORDER BY r, rowid LIMIT ?) AS k JOIN {rows} ORDER BY k.r, k.id LIMIT ?",
                (expr, 2 * limit, limit),
            )
        ]
        if len(found) == limit:
            return term_counts(con, table, expr, found)
    sql = (
        f"SELECT {table}.rowid, memapp_tf({table}) FROM {source} WHERE {table} MATCH ?{where} "
        f"ORDER BY {table}.rank LIMIT ?"
    )
    return [(int(i), str(tf)) for i, tf in con.execute(sql, [expr, *args, limit])]


def _existing(kind: str, f: Filters) -> str | None:
    """The join (with its condition) that keeps the rows of `kind` when the filters ask for nothing but
    what every search checks (a memory not in the trash, a summary that exists); None otherwise."""
    if kind == "memory" and memory_where(f) == (["m.deleted_at IS NULL"], []):
        return "long_term_memories m ON m.id = k.id AND m.deleted_at IS NULL"
    if kind == "summary" and summary_where(f) == (["1"], []):
        return "thread_summaries s ON s.thread_id = k.id"
    return None


def pruned_rows(
    con: apsw.Connection,
    kind: str,
    filters: Filters,
    phrases: Sequence[str],
    prefix: str | None,
    dfs: Sequence[int],
    limit: int,
    expr: str,
    common: Sequence[int],
    rows: int,
) -> list[tuple[int, str]] | None:
    """The pruned path (module docstring); None when its bound does not hold and the full query must run."""
    table = TABLES[kind]
    rare = " OR ".join(quote(p, p == prefix) for i, p in enumerate(phrases) if i not in common)
    bound = sum(fts5_idf(rows, dfs[i]) * (FTS5_K1 + 1.0) for i in common)
    source, where, args = _source(kind, filters)
    deep = limit * DEEPER
    score = f"{table}.rank" if source != table else f"bm25({table})"  # the same value; see ranked_rows
    ranked = [
        (float(r), int(i))
        for i, r in con.execute(
            f"SELECT {table}.rowid, {score} FROM {source} WHERE {table} MATCH ?{where} ORDER BY 2 LIMIT ?",
            [rare, *args, deep],
        )
    ]
    if len(ranked) < limit:
        return None  # fewer rare rows than asked for: rows with common words only are among the best
    best = -ranked[limit - 1][0]  # rank is minus the score
    slack = _MARGIN * (abs(best) + bound)
    if bound + slack >= best:
        return None  # the common words could lift a row without any rare word into the best `limit`
    cut = -(best - bound - slack)  # every row that can reach the best `limit` has a rank below this
    if len(ranked) == deep and ranked[-1][0] < cut:
        return None  # more rows above the cut than asked for
    ids = [i for r, i in ranked if r < cut]
    if len(ids) > limit:  # FTS5's score for the full query, then the term counts of the best only
        listed, param = id_table(ids)
        scored = sorted(
            (float(r), int(i))
            for i, r in con.execute(
                f"SELECT rowid, rank FROM {table} WHERE {table} MATCH ? AND +rowid IN (SELECT value FROM {listed})",
                (expr, param),
            )
        )
        ids = [i for _, i in scored[:limit]]
    return term_counts(con, table, expr, ids)


def term_counts(con: apsw.Connection, table: str, expr: str, ids: Sequence[int]) -> list[tuple[int, str]]:
    """(id, memapp_tf) of the rows `ids` for the query `expr` (one pass over its matches, FTS5 scoring none)."""
    listed, param = id_table(ids)
    return [
        (int(i), str(tf))
        for i, tf in con.execute(
            f"SELECT rowid, memapp_tf({table}) FROM {table} WHERE {table} MATCH ? "
            f"AND +rowid IN (SELECT value FROM {listed})",
            (expr, param),
        )
    ]
