"""The float16 re-scoring rows in bench/perf/search.py's figures (issue 19): bytes on disk, and whether
re-scoring from float16 loses anything against re-scoring the very same candidates from float32.

- `footprint`: bytes per 1,000 messages from dbstat, on an open connection (the raw one is used before
  a cached database from before migration 7 is upgraded, so the same file gives "before" and "after").
- `rescoring`: for each query, the candidate ids the search re-scores (store.vectors.knn.candidates /
  CodeTable.candidates), re-scored twice: by the search itself (float16 rows) and in numpy from the
  generator's float32 vectors. Recall@10 of both against the exact float32 answer, and how often the
  two top-10 lists are identical in order.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import apsw
import numpy as np

from bench.lib.common import exact_top
from store import db

MESSAGE_SIDE = (
    "messages",
    "sqlite_autoindex_messages",
    "fts_messages",
    "message_chunks",
    "sqlite_autoindex_message_chunks",
    "vec_chunks",
    "sqlite_autoindex_vec_chunks",
)
VECTOR_SIDE = (
    "message_chunks",
    "sqlite_autoindex_message_chunks",
    "vec_chunks",
    "sqlite_autoindex_vec_chunks",
)


def footprint(con: apsw.Connection) -> dict[str, Any]:
    """Bytes on disk per 1,000 messages (text, keyword index, chunk vectors; and the whole file's
    tables) at this scale, from dbstat (pages in use: free pages left by a migration do not count)."""
    sizes = {str(n): int(b) for n, b in con.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name")}  # type: ignore[misc]
    messages = int(db.scalar(con, "SELECT count(*) FROM messages"))
    chunks = int(db.scalar(con, "SELECT count(*) FROM vec_chunks"))
    version = int(db.scalar(con, "PRAGMA user_version"))
    blob = db.scalar(con, "SELECT length(embedding) FROM vec_chunks LIMIT 1")

    def per_1k(prefixes: tuple[str, ...]) -> float:
        return round(sum(b for n, b in sizes.items() if n.startswith(prefixes)) / messages * 1000 / 1e6, 3)

    return {
        "schema_version": version,
        "vector_row_bytes": blob,
        "messages": messages,
        "db_mb": round(sum(sizes.values()) / 1e6, 1),
        "db_mb_per_1k_messages": round(sum(sizes.values()) / messages * 1000 / 1e6, 3),
        "mb_per_1k_messages": per_1k(MESSAGE_SIDE),
        "of_which_vectors_mb": per_1k(VECTOR_SIDE),
        "float_vector_bytes_each": round(sizes.get("vec_chunks", 0) / max(1, chunks)),
    }


def footprint_before_upgrade(path: Path, latest: int) -> dict[str, Any] | None:
    """The footprint of a cached database still at an older schema, read without migrating it (None
    when it is current or absent)."""
    if not path.exists():
        return None
    con = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        con.enable_load_extension(True)
        con.load_extension(db.vec0_path())
        if int(db.scalar(con, "PRAGMA user_version")) >= latest:
            return None
        return footprint(con)
    finally:
        con.close()


def rescoring(
    queries: np.ndarray,
    ids: np.ndarray,
    x32: np.ndarray,
    candidates: Callable[[np.ndarray], Any],
    search: Callable[[np.ndarray], list[int]],
    k: int = 10,
) -> dict[str, Any]:
    """float16 re-scoring (the search) against float32 re-scoring of the same candidate ids, both
    scored against the exact float32 top k. `ids`: the row ids of `x32`'s rows, ascending."""
    r16, r32, same = [], [], 0
    for q in queries:
        want = set(ids[exact_top(x32, q, k)].tolist())
        got16 = search(q)
        cand = candidates(q)
        if isinstance(cand, list):  # answered without re-scoring (small table, exact floats)
            got32 = got16
        else:
            rows = np.searchsorted(ids, np.asarray(cand, dtype=np.int64))
            sims = x32[rows] @ q
            got32 = ids[rows[np.lexsort((ids[rows], -sims))[:k]]].tolist()
        r16.append(len(want & set(got16)) / k)
        r32.append(len(want & set(got32)) / k)
        same += int(got16 == got32)
    return {
        "recall_at_10_float16": round(float(np.mean(r16)), 4),
        "recall_at_10_float32_rescoring": round(float(np.mean(r32)), 4),
        "difference": round(float(np.mean(r16) - np.mean(r32)), 4),
        "identical_top10_lists": round(same / len(queries), 3),
        "queries": len(queries),
    }


def check_aligned(ids: np.ndarray, stored: np.ndarray, x32: np.ndarray) -> np.ndarray:
    """The generator's float32 vectors in the database's row order, after checking that they are the
    vectors the database holds (to float16 precision)."""
    assert len(ids) == len(x32) == len(stored), (len(ids), len(x32), len(stored))
    worst = float(np.max(np.abs(stored - x32))) if len(x32) else 0.0
    assert worst < 2e-3, f"the database's vectors are not the generator's ({worst})"
    return x32
