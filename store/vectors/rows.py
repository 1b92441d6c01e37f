"""The vectors of chat.db: float32 rows for exact scores, bit-quantised vec0 tables for fast search.

Layout (created on the first vector write, with the model's dimension; the model's name and dimension
are recorded in `settings`, and a store opened with a different model gets no vectors until `memapp
reindex`: vectors from two models are never mixed):

- `vec_memories(memory_id, embedding, category, deleted)` and `vec_chunks(chunk_id, embedding, thread_id,
  role, created_at, message_id)`: plain tables, one float32 BLOB per row, keyed by the canonical row's id.
  They are the truth for vectors (export, context building and re-scoring read them).
- `vec_memories_bits` / `vec_chunks_bits`: vec0 `bit[dim]` tables (the sign of each float) carrying the
  filter columns as vec0 metadata, so filters apply *inside* the KNN. The memory table holds only
  memories search may return: trashing one takes it out, restoring puts it back.

Why: sqlite-vec 0.1.9 scans a float vec0 table with scalar cosine code, about 5x slower than numpy's
`X @ q` on the same rows, and reading one vector back out of it costs a quarter of a millisecond (it
sits in a 1.5 MB chunk blob), so it can neither be the fast path nor feed re-scoring. A Hamming scan of
the bit table is an eighth of the bytes; its nearest candidates are re-scored exactly from the float
rows (one page read each) and the best k by true cosine are returned. Measured (README "Benchmarks"):
top-10 over 100k memories / 200k chunks within 1.2-1.4x of the numpy scan, recall@10 >= 0.97.

Three facts shape the coarse step. (1) vec0's per-chunk top-k selection costs chunk_size x k, so a deep
list (search asks for 300 chunks) would cost 30x a top-10 (measured 640 ms vs 17 ms at 200k rows); rows
outside a `distance <= T` bound never enter the selection, so each bit table has a partition key
`shard = id % SHARDS`: a probe of shard 0 (1/32 of the rows, same filters) estimates the Hamming radius
T that holds the nearest n rows, and the full scan selects only among rows within T. A probe that
undershoots means a second, unbounded scan: the answer never depends on the estimate. (2) Binary codes
need more candidates as the table grows (recall@10 from the top 256: 0.99 at 10k rows, 0.93 at 100k,
0.88 at 200k), hence one candidate per ROWS_PER_CANDIDATE rows. (3) Given a helper (Store.search passes
one), the bounded scan runs half its shards on a second connection at the same time (a second core).

Databases written before this layout (float vec0 tables named vec_memories / vec_chunks) still work:
they are searched the old way until the next vector write, whose transaction converts them (the float
rows are copied out, the vec0 tables dropped, never renamed) and fills the bit tables.

sqlite-vec 0.1.9 traps handled here: float32 only (a float64 array is silently misread), no NULL in
metadata columns (sentinels), no INSERT OR REPLACE on vec0 (delete, then insert), k capped at 4096, and
`pk IN (...)` on a vec0 table is a full scan (deletes go one id at a time).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import apsw
import numpy as np

from store.vectors.knn import (
    BIT_TABLES,
    K_MAX,
    SHARDS,
    Helper,
    _coarse,
    _has_bits,
    _json_ids,
    _legacy,
    _scalar,
    _search,
)

VEC_TABLES = ("vec_memories", "vec_chunks")
BIT_CHUNK = 1024  # rows per vec0 chunk (vec0 merges each chunk's top-k into the result: fewer is faster)
_LAYOUT_SQL = "SELECT name, sql FROM sqlite_master WHERE name IN (?, ?, ?, ?)"


def _f32(vec: Any) -> bytes:
    return np.ascontiguousarray(vec, dtype=np.float32).tobytes()


def get_setting(con: apsw.Connection, key: str) -> str | None:
    row = con.execute("SELECT value FROM settings WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def set_setting(con: apsw.Connection, key: str, value: str) -> None:
    con.execute(
        "INSERT INTO settings(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (key, value),
    )


def recorded_model(con: apsw.Connection) -> tuple[str, int] | None:
    name = get_setting(con, "embedding_model")
    dim = get_setting(con, "embedding_dim")
    return None if name is None or dim is None else (name, int(dim))


def _layout(con: apsw.Connection) -> dict[str, str]:
    """{table name: its CREATE statement} for the four vector tables that exist."""
    return {str(n): str(s) for n, s in con.execute(_LAYOUT_SQL, (*VEC_TABLES, *BIT_TABLES))}


def tables_exist(con: apsw.Connection) -> bool:
    row = con.execute(
        "SELECT count(*) FROM sqlite_master WHERE name IN ('vec_memories', 'vec_chunks')"
    ).fetchone()
    return bool(row and row[0] == 2)


def mismatch(con: apsw.Connection, name: str, dim: int) -> str | None:
    """Why vectors of model `name`/`dim` may not be used with this database, or None."""
    rec = recorded_model(con)
    if rec is None or rec == (name, dim):
        return None
    return (
        f"this database's vectors were made by {rec[0]} ({rec[1]}-d), but the configured model is "
        f"{name} ({dim}-d); run `memapp reindex` to rebuild them with the configured model"
    )


# -- creating, converting, dropping -------------------------------------------------------------------

_PLAIN = {
    "vec_memories": "memory_id INTEGER PRIMARY KEY, embedding BLOB NOT NULL, category TEXT NOT NULL, "
    "deleted INTEGER NOT NULL",
    "vec_chunks": "chunk_id INTEGER PRIMARY KEY, embedding BLOB NOT NULL, thread_id INTEGER NOT NULL, "
    "role TEXT NOT NULL, created_at REAL NOT NULL, message_id INTEGER NOT NULL",
}
_COLUMNS = {
    "vec_memories": "memory_id, embedding, category, deleted",
    "vec_chunks": "chunk_id, embedding, thread_id, role, created_at, message_id",
}


def ensure_tables(con: apsw.Connection, name: str, dim: int) -> None:
    """Create (or convert, or complete) the vector tables for `dim` and record the model, inside the
    caller's transaction."""
    layout = _layout(con)
    bits_wanted = dim % 8 == 0  # bit[] needs whole bytes; other sizes are searched exactly
    if (
        tables_exist(con)
        and not _legacy(layout)
        and _has_bits(layout) == bits_wanted
        and recorded_model(con) == (name, dim)
    ):
        return
    for table, columns in _PLAIN.items():
        if table in layout and _legacy(layout):
            con.execute(f"CREATE TABLE {table}_float({columns})")
            con.execute(f"INSERT INTO {table}_float({_COLUMNS[table]}) SELECT {_COLUMNS[table]} FROM {table}")
            con.execute(f"DROP TABLE {table}")  # a vec0 table: dropped, never renamed
            con.execute(f"ALTER TABLE {table}_float RENAME TO {table}")
        else:
            con.execute(f"CREATE TABLE IF NOT EXISTS {table}({columns})")
    # Small indexes: count(*) reads them instead of every 1.5 KB row, and chunks are found by message.
    con.execute("CREATE INDEX IF NOT EXISTS vec_chunks_message ON vec_chunks(message_id)")
    con.execute("CREATE INDEX IF NOT EXISTS vec_memories_deleted ON vec_memories(deleted)")
    if bits_wanted and not _has_bits(layout):
        _create_bits(con, dim)
    set_setting(con, "embedding_model", name)
    set_setting(con, "embedding_dim", str(int(dim)))


def _create_bits(con: apsw.Connection, dim: int) -> None:
    """Create the bit tables and fill them from the float rows (a database from before they existed)."""
    for table in BIT_TABLES:
        con.execute(f"DROP TABLE IF EXISTS {table}")
    con.execute(
        f"""
        CREATE VIRTUAL TABLE vec_memories_bits USING vec0(
            memory_id INTEGER PRIMARY KEY, shard INTEGER PARTITION KEY, embedding bit[{int(dim)}],
            category TEXT, chunk_size={BIT_CHUNK}
        );
        CREATE VIRTUAL TABLE vec_chunks_bits USING vec0(
            chunk_id INTEGER PRIMARY KEY, shard INTEGER PARTITION KEY, embedding bit[{int(dim)}],
            thread_id INTEGER, role TEXT, created_at FLOAT, chunk_size={BIT_CHUNK}
        );
        INSERT INTO vec_memories_bits(memory_id, shard, embedding, category)
            SELECT memory_id, memory_id % {SHARDS}, vec_quantize_binary(embedding), category
            FROM vec_memories WHERE deleted = 0 ORDER BY memory_id;
        INSERT INTO vec_chunks_bits(chunk_id, shard, embedding, thread_id, role, created_at)
            SELECT chunk_id, chunk_id % {SHARDS}, vec_quantize_binary(embedding), thread_id, role, created_at
            FROM vec_chunks ORDER BY chunk_id;
        """
    )


def drop_tables(con: apsw.Connection) -> None:
    """Forget every vector and the recorded model (reindex recreates them)."""
    for table in (*VEC_TABLES, *BIT_TABLES):
        con.execute(f"DROP TABLE IF EXISTS {table}")
    con.execute("DELETE FROM message_chunks")
    con.execute("DELETE FROM settings WHERE key IN ('embedding_model', 'embedding_dim')")


def check(con: apsw.Connection) -> list[str]:
    """Ways the bit tables disagree with the float rows (empty when in step, or before they exist)."""
    layout = _layout(con)
    if _legacy(layout) or not _has_bits(layout):
        return []
    problems = []
    for plain, bits, where in (
        ("vec_memories", "vec_memories_bits", "deleted = 0"),
        ("vec_chunks", "vec_chunks_bits", "1"),
    ):
        n_plain = _scalar(con, f"SELECT count(*) FROM {plain} WHERE {where}")
        n_bits = _scalar(con, f"SELECT count(*) FROM {bits}")
        if n_plain != n_bits:
            problems.append(f"{bits} has {n_bits} rows, {plain} has {n_plain} to search")
    stale = _scalar(
        con,
        "SELECT count(*) FROM vec_memories_bits b JOIN vec_memories v ON v.memory_id = b.memory_id "
        "WHERE b.category != v.category OR v.deleted",
    )
    if stale:
        problems.append(f"{stale} quantised memory vectors disagree with their memory (category/trash)")
    return problems


# -- memories -----------------------------------------------------------------------------------------


def put_memory(con: apsw.Connection, memory_id: int, vec: np.ndarray, category: str, deleted: bool) -> None:
    blob = _f32(vec)
    con.execute(
        "INSERT INTO vec_memories(memory_id, embedding, category, deleted) VALUES (?, ?, ?, ?) "
        "ON CONFLICT(memory_id) DO UPDATE SET embedding = excluded.embedding, "
        "category = excluded.category, deleted = excluded.deleted",
        (memory_id, blob, category, int(deleted)),
    )
    if _has_bits(_layout(con)):
        _put_memory_bits(con, memory_id, blob, category, deleted)


def _put_memory_bits(con: apsw.Connection, memory_id: int, blob: bytes, category: str, deleted: bool) -> None:
    """The bit table holds the memories search may return: a trashed memory leaves it, a restored one
    comes back (so the KNN needs no trash filter)."""
    con.execute("DELETE FROM vec_memories_bits WHERE memory_id = ?", (memory_id,))
    if not deleted:
        con.execute(
            "INSERT INTO vec_memories_bits(memory_id, shard, embedding, category) "
            "VALUES (?, ?, vec_quantize_binary(?), ?)",
            (memory_id, memory_id % SHARDS, blob, category),
        )


def update_memory_meta(con: apsw.Connection, memory_id: int, *, category: str, deleted: bool) -> None:
    layout = _layout(con)
    if "vec_memories" not in layout:
        return
    if _legacy(layout):
        con.execute(
            "UPDATE vec_memories SET category = ?, deleted = ? WHERE memory_id = ?",
            (category, int(deleted), memory_id),
        )
        return
    row = con.execute(
        "UPDATE vec_memories SET category = ?, deleted = ? WHERE memory_id = ? RETURNING embedding",
        (category, int(deleted), memory_id),
    ).fetchone()
    if row is not None and _has_bits(layout):
        _put_memory_bits(con, memory_id, row[0], category, deleted)


def delete_memory(con: apsw.Connection, memory_id: int) -> None:
    layout = _layout(con)
    for table in ("vec_memories", "vec_memories_bits"):
        if table in layout:
            con.execute(f"DELETE FROM {table} WHERE memory_id = ?", (memory_id,))


def memory_vector(con: apsw.Connection, memory_id: int) -> np.ndarray | None:
    if not tables_exist(con):
        return None
    row = con.execute("SELECT embedding FROM vec_memories WHERE memory_id = ?", (memory_id,)).fetchone()
    return None if row is None else np.frombuffer(row[0], dtype=np.float32).copy()


def knn_memories(
    con: apsw.Connection,
    query: np.ndarray,
    k: int,
    *,
    category: str | None = None,
    include_deleted: bool = False,
    helper: Helper | None = None,
) -> list[tuple[int, float]]:
    """(memory_id, cosine similarity) of the k nearest, best first, filtered inside the KNN. With a
    `helper` (Store.vector_helper()) half the work runs on a second connection at the same time."""
    layout = _layout(con)
    if "vec_memories" not in layout or k <= 0:
        return []
    where, args = [], []
    if category is not None:
        where.append("category = ?")
        args.append(category)
    if include_deleted:  # the bit table holds active memories only: score every row instead
        layout = {t: sql for t, sql in layout.items() if t not in BIT_TABLES}
    elif _legacy(layout) or not _has_bits(layout):
        where.append("deleted = 0")
    hits = _search(
        con, layout, "vec_memories", "memory_id", "", query, min(int(k), K_MAX), where, args, helper
    )
    return [(mid, sim) for mid, _, sim in hits]


# -- message chunks -----------------------------------------------------------------------------------


def put_chunks(
    con: apsw.Connection,
    message_id: int,
    thread_id: int,
    role: str,
    created_at: float | None,
    spans: Sequence[tuple[int, int]],
    vecs: np.ndarray,
) -> None:
    delete_message_chunks(con, [message_id])
    bits = _has_bits(_layout(con))
    when = float(created_at or 0.0)
    for i, ((start, end), vec) in enumerate(zip(spans, vecs, strict=True)):
        con.execute(
            "INSERT INTO message_chunks(message_id, chunk_index, start_char, end_char) VALUES (?, ?, ?, ?)",
            (message_id, i, start, end),
        )
        chunk_id = con.last_insert_rowid()
        blob = _f32(vec)
        con.execute(
            "INSERT INTO vec_chunks(chunk_id, embedding, thread_id, role, created_at, message_id) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (chunk_id, blob, thread_id, role, when, message_id),
        )
        if bits:
            con.execute(
                "INSERT INTO vec_chunks_bits(chunk_id, shard, embedding, thread_id, role, created_at) "
                "VALUES (?, ?, vec_quantize_binary(?), ?, ?, ?)",
                (chunk_id, chunk_id % SHARDS, blob, thread_id, role, when),
            )


def delete_message_chunks(con: apsw.Connection, message_ids: Sequence[int]) -> None:
    if not message_ids:
        return
    layout = _layout(con)
    chunk_ids = [
        int(r[0])
        for r in con.execute(
            "SELECT id FROM message_chunks WHERE message_id IN (SELECT value FROM json_each(?))",
            (_json_ids(message_ids),),
        )
    ]
    if not chunk_ids:
        return
    for table in ("vec_chunks", "vec_chunks_bits"):
        if table in layout:  # one id at a time: `IN (...)` would make vec0 scan the whole table
            con.executemany(f"DELETE FROM {table} WHERE chunk_id = ?", ((c,) for c in chunk_ids))
    con.execute(
        "DELETE FROM message_chunks WHERE message_id IN (SELECT value FROM json_each(?))",
        (_json_ids(message_ids),),
    )


def knn_chunks(
    con: apsw.Connection,
    query: np.ndarray,
    k: int,
    *,
    thread_id: int | None = None,
    role: str | None = None,
    since: float | None = None,
    until: float | None = None,
    helper: Helper | None = None,
) -> list[tuple[int, int, float]]:
    """(chunk_id, message_id, cosine similarity) of the k nearest chunks, best first, filters applied
    inside the KNN."""
    layout = _layout(con)
    if "vec_chunks" not in layout or k <= 0:
        return []
    where, args = [], []
    for clause, value in (
        ("thread_id = ?", thread_id),
        ("role = ?", role),
        ("created_at >= ?", since),
        ("created_at < ?", until),
    ):
        if value is not None:
            where.append(clause)
            args.append(float(value) if "created_at" in clause else value)
    return _search(
        con, layout, "vec_chunks", "chunk_id", "message_id", query, min(int(k), K_MAX), where, args, helper
    )


# -- the search itself -------------------------------------------------------------------------------


__all__ = ["BIT_TABLES", "K_MAX", "SHARDS", "VEC_TABLES", "Helper", "_coarse", "knn_chunks", "knn_memories"]
