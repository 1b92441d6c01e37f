"""The sqlite-vec side of chat.db: vec0 tables keyed by the canonical rows' integer ids.

The tables are created on the first vector write, with the model's dimension, and the model's name and
dimension are recorded in `settings`. A store opened with a different model finds the mismatch here and
gets no vectors (semantic search reports why) until `memapp reindex` rebuilds them: vectors from two
models are never mixed in one table.

sqlite-vec 0.1.9 traps handled here: float32 only (a float64 array is silently misread), no NULL in
metadata columns (sentinels), no INSERT OR REPLACE (delete, then insert), k capped at 4096.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import apsw
import numpy as np

K_MAX = 4096
VEC_TABLES = ("vec_memories", "vec_chunks")


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


def tables_exist(con: apsw.Connection) -> bool:
    row = con.execute("SELECT count(*) FROM sqlite_master WHERE name IN ('vec_memories', 'vec_chunks')").fetchone()
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


def ensure_tables(con: apsw.Connection, name: str, dim: int) -> None:
    """Create the vec0 tables for `dim` and record the model (inside the caller's transaction)."""
    if tables_exist(con) and recorded_model(con) == (name, dim):
        return
    con.execute(
        f"""
        CREATE VIRTUAL TABLE IF NOT EXISTS vec_memories USING vec0(
            memory_id INTEGER PRIMARY KEY,
            embedding float[{int(dim)}] distance_metric=cosine,
            category TEXT,
            deleted INTEGER
        );
        CREATE VIRTUAL TABLE IF NOT EXISTS vec_chunks USING vec0(
            chunk_id INTEGER PRIMARY KEY,
            embedding float[{int(dim)}] distance_metric=cosine,
            thread_id INTEGER,
            role TEXT,
            created_at FLOAT,
            +message_id INTEGER
        );
        """
    )
    set_setting(con, "embedding_model", name)
    set_setting(con, "embedding_dim", str(int(dim)))


def drop_tables(con: apsw.Connection) -> None:
    """Forget every vector and the recorded model (reindex recreates them)."""
    for table in VEC_TABLES:
        con.execute(f"DROP TABLE IF EXISTS {table}")
    con.execute("DELETE FROM message_chunks")
    con.execute("DELETE FROM settings WHERE key IN ('embedding_model', 'embedding_dim')")


# -- memories -----------------------------------------------------------------------------------------


def put_memory(con: apsw.Connection, memory_id: int, vec: np.ndarray, category: str, deleted: bool) -> None:
    con.execute("DELETE FROM vec_memories WHERE memory_id = ?", (memory_id,))
    con.execute(
        "INSERT INTO vec_memories(memory_id, embedding, category, deleted) VALUES (?, ?, ?, ?)",
        (memory_id, _f32(vec), category, int(deleted)),
    )


def update_memory_meta(con: apsw.Connection, memory_id: int, *, category: str, deleted: bool) -> None:
    if tables_exist(con):
        con.execute(
            "UPDATE vec_memories SET category = ?, deleted = ? WHERE memory_id = ?",
            (category, int(deleted), memory_id),
        )


def delete_memory(con: apsw.Connection, memory_id: int) -> None:
    if tables_exist(con):
        con.execute("DELETE FROM vec_memories WHERE memory_id = ?", (memory_id,))


def memory_vector(con: apsw.Connection, memory_id: int) -> np.ndarray | None:
    if not tables_exist(con):
        return None
    row = con.execute("SELECT embedding FROM vec_memories WHERE memory_id = ?", (memory_id,)).fetchone()
    return None if row is None else np.frombuffer(row[0], dtype=np.float32).copy()


def knn_memories(con: apsw.Connection, query: np.ndarray, k: int, *, category: str | None = None,
                 include_deleted: bool = False) -> list[tuple[int, float]]:
    """(memory_id, cosine similarity) of the k nearest, filtered inside the KNN."""
    if not tables_exist(con) or k <= 0:
        return []
    where = ["embedding MATCH ?", "k = ?"]
    args: list[Any] = [_f32(query), min(int(k), K_MAX)]
    if category is not None:
        where.append("category = ?")
        args.append(category)
    if not include_deleted:
        where.append("deleted = 0")
    sql = f"SELECT memory_id, distance FROM vec_memories WHERE {' AND '.join(where)} ORDER BY distance"
    return [(int(mid), 1.0 - float(dist)) for mid, dist in con.execute(sql, args)]


# -- message chunks -----------------------------------------------------------------------------------


def put_chunks(con: apsw.Connection, message_id: int, thread_id: int, role: str, created_at: float | None,
               spans: Sequence[tuple[int, int]], vecs: np.ndarray) -> None:
    con.execute("DELETE FROM vec_chunks WHERE chunk_id IN (SELECT id FROM message_chunks WHERE message_id = ?)",
                (message_id,))
    con.execute("DELETE FROM message_chunks WHERE message_id = ?", (message_id,))
    for i, ((start, end), vec) in enumerate(zip(spans, vecs, strict=True)):
        con.execute(
            "INSERT INTO message_chunks(message_id, chunk_index, start_char, end_char) VALUES (?, ?, ?, ?)",
            (message_id, i, start, end),
        )
        chunk_id = con.last_insert_rowid()
        con.execute(
            "INSERT INTO vec_chunks(chunk_id, embedding, thread_id, role, created_at, message_id) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (chunk_id, _f32(vec), thread_id, role, float(created_at or 0.0), message_id),
        )


def delete_message_chunks(con: apsw.Connection, message_ids: Sequence[int]) -> None:
    if not message_ids or not tables_exist(con):
        return
    for mid in message_ids:
        con.execute(
            "DELETE FROM vec_chunks WHERE chunk_id IN (SELECT id FROM message_chunks WHERE message_id = ?)", (mid,)
        )
        con.execute("DELETE FROM message_chunks WHERE message_id = ?", (mid,))


def knn_chunks(con: apsw.Connection, query: np.ndarray, k: int, *, thread_id: int | None = None,
               role: str | None = None, since: float | None = None,
               until: float | None = None) -> list[tuple[int, int, float]]:
    """(chunk_id, message_id, cosine similarity) of the k nearest chunks, filters applied inside the KNN."""
    if not tables_exist(con) or k <= 0:
        return []
    where = ["embedding MATCH ?", "k = ?"]
    args: list[Any] = [_f32(query), min(int(k), K_MAX)]
    if thread_id is not None:
        where.append("thread_id = ?")
        args.append(thread_id)
    if role is not None:
        where.append("role = ?")
        args.append(role)
    if since is not None:
        where.append("created_at >= ?")
        args.append(float(since))
    if until is not None:
        where.append("created_at < ?")
        args.append(float(until))
    sql = (f"SELECT chunk_id, message_id, distance FROM vec_chunks WHERE {' AND '.join(where)} "
           "ORDER BY distance")
    return [(int(c), int(m), 1.0 - float(d)) for c, m, d in con.execute(sql, args)]
