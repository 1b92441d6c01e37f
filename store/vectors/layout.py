"""The vectors of chat.db: float16 rows for exact scores, bit-quantised vec0 tables for fast search.

Layout (created on the first vector write, with the model's dimension; the model's name and dimension
are recorded in `settings`, and a store opened with a different model gets no vectors until `memapp
reindex`: vectors from two models are never mixed):

- `vec_memories(memory_id, embedding, category, deleted)` and `vec_chunks(chunk_id, embedding, thread_id,
  role, created_at, message_id)`: plain tables, one float16 BLOB per row (store.vectors.floats says
  why), keyed by the canonical row's id. They are the truth for vectors (export, context building and
  re-scoring read them). Until schema version 7 they held float32; migration 7 converts them.
- `vec_memories_bits` / `vec_chunks_bits`: vec0 `bit[dim]` tables (the sign of each float) carrying the
  filter columns as vec0 metadata, so filters apply *inside* the KNN. The memory table holds only
  memories search may return: trashing one takes it out, restoring puts it back.

Why: sqlite-vec 0.1.9 scans a float vec0 table with scalar cosine code, about 5x slower than numpy's
`X @ q` on the same rows, and reading one vector back out of it costs a quarter of a millisecond (it
sits in a 1.5 MB chunk blob), so it can neither be the fast path nor feed re-scoring. A Hamming scan of
the bit table is a sixteenth of the float32 bytes; its nearest candidates are re-scored exactly from the
float16 rows (one page read each) and the best k by true cosine are returned. Measured (README
"Benchmarks"): top-10 over 100k memories / 200k chunks within 1.2-1.4x of the numpy scan, recall@10 >= 0.97.

Three facts shape the coarse step. (1) vec0's per-chunk top-k selection costs chunk_size x k, so a deep
list (search asks for 300 chunks) would cost 30x a top-10 (measured 640 ms vs 17 ms at 200k rows); rows
outside a `distance <= T` bound never enter the selection, so each bit table has a partition key
`shard = id % SHARDS`: a probe of shard 0 (1/32 of the rows, same filters) estimates the Hamming radius
T that holds the nearest n rows, and the full scan selects only among rows within T. A probe that
undershoots means a second, unbounded scan: the answer never depends on the estimate. (2) Binary codes
need more candidates as the table grows (recall@10 from the top 256: 0.99 at 10k rows, 0.93 at 100k,
0.88 at 200k), hence one candidate per ROWS_PER_CANDIDATE rows. (3) Given a helper (Store.search passes
one), the bounded scan runs half its shards on a second connection at the same time (a second core).

Databases written before this layout (float vec0 tables named vec_memories / vec_chunks) are converted
by migration 7 (store/m007.py, its own frozen copy of the conversion) into float16 plain tables (the vec0 tables dropped, never renamed), and their bit tables
filled; the vec0 float search (knn.legacy) is kept for a connection opened without migrating.

sqlite-vec 0.1.9 traps handled here: float32 only (a float64 array is silently misread; float16 rows
are decoded before they reach it), no NULL in metadata columns (sentinels), no INSERT OR REPLACE on
vec0 (delete, then insert), k capped at 4096, and `pk IN (...)` on a vec0 table is a full scan (deletes
go one id at a time).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import islice
from typing import Any

import apsw

from store.db import scalar
from store.vectors import floats
from store.vectors.knn import BIT_TABLES, SHARDS, has_bits, legacy

VEC_TABLES = ("vec_memories", "vec_chunks")
BIT_CHUNK = 1024  # rows per vec0 chunk (vec0 merges each chunk's top-k into the result: fewer is faster)
MODEL_KEYS = ("embedding_model", "embedding_dim")
# The tables that exist and the recorded model, in one statement (the names cannot collide).
_FACTS_SQL = (
    "SELECT name, sql FROM sqlite_master WHERE name IN (?, ?, ?, ?) "
    "UNION ALL SELECT key, value FROM settings WHERE key IN (?, ?)"
)


@dataclass(frozen=True)
class Facts:
    """What a vector write or search needs to know about the database: {table: CREATE statement} of the
    vector tables that exist, and the (model name, dimension) recorded for them."""

    layout: dict[str, str]
    model: tuple[str, int] | None

    @property
    def tables_exist(self) -> bool:
        return all(t in self.layout for t in VEC_TABLES)

    @property
    def legacy(self) -> bool:
        return legacy(self.layout)

    @property
    def has_bits(self) -> bool:
        return has_bits(self.layout)

    def ready_for(self, name: str, dim: int) -> bool:
        """The tables are complete and current for model `name`/`dim`: a write needs no DDL."""
        return (
            self.tables_exist
            and not self.legacy
            and self.has_bits == (dim % 8 == 0)  # bit[] needs whole bytes; other sizes are searched exactly
            and self.model == (name, dim)
        )


def read_facts(con: apsw.Connection) -> Facts:
    layout: dict[str, str] = {}
    settings: dict[str, str] = {}
    for name, value in con.execute(_FACTS_SQL, (*VEC_TABLES, *BIT_TABLES, *MODEL_KEYS)):
        (settings if name in MODEL_KEYS else layout)[str(name)] = str(value)
    model = settings.get("embedding_model"), settings.get("embedding_dim")
    return Facts(layout, None if model[0] is None or model[1] is None else (model[0], int(model[1])))


def get_setting(con: apsw.Connection, key: str) -> str | None:
    row = con.execute("SELECT value FROM settings WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def set_setting(con: apsw.Connection, key: str, value: str) -> None:
    con.execute(
        "INSERT INTO settings(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (key, value),
    )


def mismatch_reason(recorded: tuple[str, int] | None, name: str, dim: int) -> str | None:
    """Why vectors of model `name`/`dim` may not be used with a database that recorded `recorded`."""
    if recorded is None or recorded == (name, dim):
        return None
    return (
        f"this database's vectors were made by {recorded[0]} ({recorded[1]}-d), but the configured model is "
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


def create_tables(con: apsw.Connection, facts: Facts, name: str, dim: int) -> None:
    """Create (or convert, or complete) the vector tables for `dim` and record the model, inside the
    caller's transaction (`facts`: what exists now; the caller re-reads them afterwards)."""
    for table, columns in _PLAIN.items():
        if table in facts.layout and facts.legacy:
            _replace_with_f16(con, table)
        else:
            con.execute(f"CREATE TABLE IF NOT EXISTS {table}({columns})")
    _create_indexes(con)
    if dim % 8 == 0 and not facts.has_bits:
        _create_bits(con, dim)
    set_setting(con, "embedding_model", name)
    set_setting(con, "embedding_dim", str(int(dim)))


def _create_indexes(con: apsw.Connection) -> None:
    # Small indexes: count(*) reads them instead of every 800-byte row, and chunks are found by message.
    con.execute("CREATE INDEX IF NOT EXISTS vec_chunks_message ON vec_chunks(message_id)")
    con.execute("CREATE INDEX IF NOT EXISTS vec_memories_deleted ON vec_memories(deleted)")


def _replace_with_f16(con: apsw.Connection, table: str) -> int:
    """Replace `table` (float32 rows: a plain table or a vec0 float table) by a plain table of float16
    rows under the same name; in the caller's transaction. Returns the rows converted."""
    con.execute(f"CREATE TABLE {table}_f16({_PLAIN[table]})")
    n = floats.convert(con, table, f"{table}_f16", _COLUMNS[table].split(", "))
    con.execute(f"DROP TABLE {table}")  # a vec0 table is dropped, never renamed
    con.execute(f"ALTER TABLE {table}_f16 RENAME TO {table}")
    return n


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


def _create_bits(con: apsw.Connection, dim: int) -> None:
    """Create the bit tables and fill them from the float16 rows (a database from before they existed,
    or a reindex), BATCH rows at a time."""
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
        """
    )
    for select, insert in _BITS_FILL:
        rows = iter(con.execute(select))
        while batch := list(islice(rows, floats.BATCH)):
            con.executemany(insert, _bit_rows(batch))


def _bit_rows(batch: list[Any]) -> list[tuple[Any, ...]]:
    return [(r[0], r[0] % SHARDS, floats.as_f32(r[1]), *r[2:]) for r in batch]


def drop_tables(con: apsw.Connection) -> None:
    """Forget every vector and the recorded model (reindex recreates them)."""
    for table in (*VEC_TABLES, *BIT_TABLES):
        con.execute(f"DROP TABLE IF EXISTS {table}")
    con.execute("DELETE FROM message_chunks")
    con.execute("DELETE FROM settings WHERE key IN (?, ?)", MODEL_KEYS)


def check(con: apsw.Connection, facts: Facts) -> list[str]:
    """Ways the vector rows are not what the layout says: a row that is not a float16 vector of the
    recorded dimension, bit tables out of step with the float rows (empty when all is well, or before
    the tables exist)."""
    if facts.legacy or not facts.tables_exist:
        return []
    problems = []
    if facts.model is not None:
        for table in VEC_TABLES:
            odd = scalar(
                con, f"SELECT count(*) FROM {table} WHERE length(embedding) != ?", (2 * facts.model[1],)
            )
            if odd:
                problems.append(
                    f"{odd} rows of {table} are not float16 vectors of {facts.model[1]} dimensions"
                )
    if not facts.has_bits:
        return problems
    for plain, bits, where in (
        ("vec_memories", "vec_memories_bits", "deleted = 0"),
        ("vec_chunks", "vec_chunks_bits", "1"),
    ):
        n_plain = scalar(con, f"SELECT count(*) FROM {plain} WHERE {where}")
        n_bits = scalar(con, f"SELECT count(*) FROM {bits}")
        if n_plain != n_bits:
            problems.append(f"{bits} has {n_bits} rows, {plain} has {n_plain} to search")
    stale = scalar(
        con,
        "SELECT count(*) FROM vec_memories_bits b JOIN vec_memories v ON v.memory_id = b.memory_id "
        "WHERE b.category != v.category OR v.deleted",
    )
    if stale:
        problems.append(f"{stale} quantised memory vectors disagree with their memory (category/trash)")
    return problems
