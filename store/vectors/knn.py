"""The KNN behind store.vectors.knn_memories / knn_chunks: a Hamming scan of the 1-bit vec0 tables, then
exact cosine re-scoring of the candidates from the float16 rows (store.vectors says why, with numbers).
Also the two older ways, for databases that have no bit tables: vec0's own float KNN (the first layout,
on a connection opened without migrating) and an exact scan (a dimension that is not a whole number of
bytes).

Re-scoring decodes the candidates' float16 rows in numpy (sqlite-vec reads float32 only): one read of
the few hundred rows, one small matrix product.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Any

import apsw
import numpy as np

from store.db import id_table, scalar
from store.vectors.floats import cosines, decode_rows

K_MAX = 4096
Helper = Callable[[Callable[[apsw.Connection], Any]], "Future[Any]"]  # runs a query on another connection
BIT_TABLES = ("vec_memories_bits", "vec_chunks_bits")
SHARDS = 32  # partitions of a bit table; shard 0 is the sample that estimates the search radius
MIN_CANDIDATES = 256  # coarse candidates re-scored: at least this many, or OVERSAMPLE per result asked
OVERSAMPLE = 2  # for, or one per ROWS_PER_CANDIDATE rows in the table, whichever is most: recall@10
ROWS_PER_CANDIDATE = 160  # of the re-scored top-10 is >= 0.97 at 10k, 100k and 200k rows (README)
PROBE_SLACK = 1.5  # the radius estimate aims at this many times the candidates wanted


def legacy(layout: dict[str, str]) -> bool:
    """The float vec0 tables of the first layout (searched by vec0 itself until converted)."""
    return layout.get("vec_memories", "").upper().startswith("CREATE VIRTUAL TABLE")


def has_bits(layout: dict[str, str]) -> bool:
    return all(t in layout for t in BIT_TABLES)


Hit = tuple[int, int, float]  # (id, extra column or 0, cosine similarity)


def search(
    con: apsw.Connection,
    layout: dict[str, str],
    table: str,
    pk: str,
    extra: str,
    query: np.ndarray,
    k: int,
    where: list[str],
    args: list[Any],
    helper: Helper | None,
) -> list[Hit]:
    q = np.ascontiguousarray(query, dtype=np.float32)
    if legacy(layout):
        return _vec0_float_knn(con, table, pk, extra, q, k, where, args)
    if not has_bits(layout):
        return _exact_scan(con, table, pk, extra, q, k, where, args)
    return rescore(con, table, pk, extra, q, candidates(con, table, pk, q, k, where, args, helper), k)


def candidates(
    con: apsw.Connection,
    table: str,
    pk: str,
    q: np.ndarray,
    k: int,
    where: list[str],
    args: list[Any],
    helper: Helper | None = None,
) -> list[int]:
    """Ids of the rows whose codes are nearest to q's, as many as re-scoring needs for a top k (the
    bench re-scores the same ids from float32 vectors to compare)."""
    rows = scalar(con, f"SELECT max({pk}) FROM {table}") or 0  # ids only grow: about the count
    n = min(K_MAX, max(MIN_CANDIDATES, OVERSAMPLE * k, rows // ROWS_PER_CANDIDATE))
    return _coarse(
        con, f"{table}_bits", pk, np.ascontiguousarray(q, dtype=np.float32), n, where, args, helper
    )


def _halves(
    con: apsw.Connection,
    helper: Helper | None,
    run: Callable[[apsw.Connection, str], list[Any]],
) -> list[Any]:
    """run(con, extra_where) over the whole table, or, given a helper, over half the shards here and the
    other half on the helper's connection at the same time."""
    if helper is None:
        return run(con, "")
    other = helper(lambda c: run(c, f" AND shard >= {SHARDS // 2}"))
    return run(con, f" AND shard < {SHARDS // 2}") + other.result()


def _coarse(
    con: apsw.Connection,
    bits: str,
    pk: str,
    q: np.ndarray,
    n: int,
    where: list[str],
    args: list[Any],
    helper: Helper | None = None,
) -> list[int]:
    """Ids of (about) the n nearest rows by Hamming distance that pass the filters."""
    cond = "".join(f" AND {w}" for w in where)
    knn = f"SELECT {pk}, distance FROM {bits} WHERE embedding MATCH vec_quantize_binary(?) AND k = ?{cond}"
    blob = q.tobytes()
    probe = min(K_MAX, math.ceil(n * PROBE_SLACK / SHARDS) + 8)
    sample = con.execute(f"{knn} AND shard = 0 ORDER BY distance", [blob, probe, *args]).fetchall()
    if len(sample) == probe:  # shard 0 holds enough matches: bound the full scan by their radius
        bound = [blob, n, *args, sample[-1][1]]
        rows = _halves(
            con,
            helper,
            lambda c, part: c.execute(f"{knn}{part} AND distance <= ? ORDER BY distance", bound).fetchall(),
        )
        if len(rows) * 2 >= n:
            rows.sort(key=lambda r: r[1])
            return [int(r[0]) for r in rows[:n]]
    return [int(r[0]) for r in con.execute(f"{knn} ORDER BY distance", [blob, n, *args])]


def rescore(
    con: apsw.Connection,
    table: str,
    pk: str,
    extra: str,
    q: np.ndarray,
    ids: Sequence[int] | np.ndarray,
    k: int,
) -> list[Hit]:
    """The k best of `ids` by exact cosine against their float16 rows (ties: lower id first)."""
    if not len(ids):
        return []
    listed, param = id_table(ids)
    rows: list[Any] = con.execute(
        f"SELECT {pk}, {extra or 0}, embedding FROM {table} WHERE {pk} IN (SELECT value FROM {listed})",
        (param,),
    ).fetchall()
    return rank(rows, q, k)


def rank(rows: Sequence[Any], q: np.ndarray, k: int) -> list[Hit]:
    """(id, extra, float16 embedding) rows: the k best by exact cosine to `q`, best first, ties by id."""
    if not rows or k <= 0:
        return []
    sims = cosines(decode_rows([r[2] for r in rows], len(rows[0][2]) // 2), q)
    ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    if len(rows) > k:  # every row tied with the k-th best stays in the final sort
        keep = np.flatnonzero(sims >= np.partition(sims, len(rows) - k)[len(rows) - k])
    else:
        keep = np.arange(len(rows))
    order = keep[np.lexsort((ids[keep], -sims[keep]))][:k]
    return [(int(rows[i][0]), int(rows[i][1]), float(sims[i])) for i in order]


def _exact_scan(
    con: apsw.Connection,
    table: str,
    pk: str,
    extra: str,
    q: np.ndarray,
    k: int,
    where: list[str],
    args: list[Any],
) -> list[Hit]:
    """Every row scored (a model whose dimension is not a whole number of bytes has no bit table)."""
    cond = " AND ".join(where) or "1"
    rows = con.execute(f"SELECT {pk}, {extra or 0}, embedding FROM {table} WHERE {cond}", args).fetchall()
    return rank(rows, q, k)


def _vec0_float_knn(
    con: apsw.Connection,
    table: str,
    pk: str,
    extra: str,
    q: np.ndarray,
    k: int,
    where: list[str],
    args: list[Any],
) -> list[Hit]:
    """The first layout's search (float vec0 tables), until a write converts the database."""
    cond = "".join(f" AND {w}" for w in where)
    rows = con.execute(
        f"SELECT {pk}, {extra or 0}, distance FROM {table} WHERE embedding MATCH ? AND k = ?"
        f"{cond} ORDER BY distance",
        [q.tobytes(), k, *args],
    )
    return [(int(i), int(x), 1.0 - float(d)) for i, x, d in rows]
