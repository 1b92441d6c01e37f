"""Migration 7 (float16 vectors), kept here as it was released: the conversion carries its own code.

Why a copy: a migration must mean the same thing for ever, while store.vectors (the live layout, its
tables and batch sizes) keeps changing. Until this copy, migration 7 called
`store.vectors.layout.convert_to_f16`, so an edit there would silently change how an old database is
upgraded, and the module graph had a circle (store.db -> migrations -> vectors.layout -> vectors.knn ->
store.db). Nothing here imports store code; do not edit it to follow the live layout.

What it does: the float32 rows of `vec_memories` / `vec_chunks` (plain tables, or the float vec0 tables
of the first layout) become plain tables of float16 rows under the same names, BATCH rows at a time,
inside the migration's transaction (a kill rolls all of it back). The bit tables are kept (the signs are
unchanged), or made and filled when a vec0 float layout had none.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import islice
from typing import Any

import apsw
import numpy as np

_F16 = np.dtype("<f2")
_BATCH = 4096
_SHARDS = 32
_BIT_CHUNK = 1024
_VEC_TABLES = ("vec_memories", "vec_chunks")
_BIT_TABLES = ("vec_memories_bits", "vec_chunks_bits")
_PLAIN = {
    "vec_memories": "memory_id INTEGER PRIMARY KEY, embedding BLOB NOT NULL, category TEXT NOT NULL, "
    "deleted INTEGER NOT NULL",
    "vec_chunks": "chunk_id INTEGER PRIMARY KEY, embedding BLOB NOT NULL, thread_id INTEGER NOT NULL, "
    "role TEXT NOT NULL, created_at REAL NOT NULL, message_id INTEGER NOT NULL",
}
_COLUMNS = {
    "vec_memories": ("memory_id", "embedding", "category", "deleted"),
    "vec_chunks": ("chunk_id", "embedding", "thread_id", "role", "created_at", "message_id"),
}
_BITS_FILL = (
    (
        "SELECT memory_id, embedding, category FROM vec_memories WHERE deleted = 0 ORDER BY memory_id",
        "INSERT INTO vec_memories_bits(memory_id, shard, embedding, category) "
        "VALUES (?, ?, vec_quantize_binary(?), ?)",
    ),
    (
        "SELECT chunk_id, embedding, thread_id, role, created_at FROM vec_chunks ORDER BY chunk_id",
        "INSERT INTO vec_chunks_bits(chunk_id, shard, embedding, thread_id, role, created_at) "
        "VALUES (?, ?, vec_quantize_binary(?), ?, ?, ?)",
    ),
)


def migrate(con: apsw.Connection) -> int:
    """Convert the vector rows to float16 in the caller's transaction; returns the rows converted."""
    layout = {
        str(name): str(sql)
        for name, sql in con.execute(
            "SELECT name, sql FROM sqlite_master WHERE name IN (?, ?, ?, ?)", (*_VEC_TABLES, *_BIT_TABLES)
        )
    }
    if not all(t in layout for t in _VEC_TABLES):
        return 0
    was_legacy = layout["vec_memories"].upper().startswith("CREATE VIRTUAL TABLE")
    had_bits = all(t in layout for t in _BIT_TABLES)
    n = sum(_replace_with_f16(con, table) for table in _VEC_TABLES)
    con.execute("CREATE INDEX IF NOT EXISTS vec_chunks_message ON vec_chunks(message_id)")
    con.execute("CREATE INDEX IF NOT EXISTS vec_memories_deleted ON vec_memories(deleted)")
    model = dict(
        con.execute("SELECT key, value FROM settings WHERE key IN ('embedding_model', 'embedding_dim')")
    )
    dim = int(model["embedding_dim"]) if len(model) == 2 and None not in model.values() else None
    if was_legacy and dim is not None and dim % 8 == 0 and not had_bits:
        _create_bits(con, dim)
    return n


def _replace_with_f16(con: apsw.Connection, table: str) -> int:
    """Replace `table` by a plain table of float16 rows under the same name (a vec0 table is dropped,
    never renamed)."""
    con.execute(f"CREATE TABLE {table}_f16({_PLAIN[table]})")
    columns = _COLUMNS[table]
    cols = ", ".join(columns)
    insert = f"INSERT INTO {table}_f16({cols}) VALUES ({', '.join('?' * len(columns))})"
    rows: Iterator[Any] = iter(con.execute(f"SELECT {cols} FROM {table}"))
    total = 0
    while batch := list(islice(rows, _BATCH)):
        blobs = [r[1] for r in batch]
        if len({len(b) for b in blobs}) != 1 or len(blobs[0]) % 4:
            raise ValueError(f"{table}: the vectors are not float32 rows of one dimension")
        dim = len(blobs[0]) // 4
        mat = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), dim).astype(_F16)
        con.executemany(insert, ((r[0], mat[i].tobytes(), *r[2:]) for i, r in enumerate(batch)))
        total += len(batch)
    con.execute(f"DROP TABLE {table}")
    con.execute(f"ALTER TABLE {table}_f16 RENAME TO {table}")
    return total


def _create_bits(con: apsw.Connection, dim: int) -> None:
    """Create the bit tables and fill them from the float16 rows, _BATCH rows at a time."""
    for table in _BIT_TABLES:
        con.execute(f"DROP TABLE IF EXISTS {table}")
    con.execute(
        f"""
        CREATE VIRTUAL TABLE vec_memories_bits USING vec0(
            memory_id INTEGER PRIMARY KEY, shard INTEGER PARTITION KEY, embedding bit[{int(dim)}],
            category TEXT, chunk_size={_BIT_CHUNK}
        );
        CREATE VIRTUAL TABLE vec_chunks_bits USING vec0(
            chunk_id INTEGER PRIMARY KEY, shard INTEGER PARTITION KEY, embedding bit[{int(dim)}],
            thread_id INTEGER, role TEXT, created_at FLOAT, chunk_size={_BIT_CHUNK}
        );
        """
    )
    for select, insert in _BITS_FILL:
        rows = iter(con.execute(select))
        while batch := list(islice(rows, _BATCH)):
            con.executemany(insert, [(r[0], r[0] % _SHARDS, _as_f32(r[1]), *r[2:]) for r in batch])


def _as_f32(blob: bytes) -> bytes:
    """A float16 row as the float32 bytes sqlite-vec's vec_quantize_binary reads."""
    return np.frombuffer(blob, dtype=_F16).astype(np.float32).tobytes()
