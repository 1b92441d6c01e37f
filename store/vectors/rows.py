"""`VectorIndex`: the vector rows of one connection (writes, deletes, KNN entry points) over the layout
described in store.vectors.layout.

Why an object: every vector write needs to know which vector tables exist and which model they were
made with. Read per call, that was 41 `sqlite_master` reads and 6 `settings` reads for one 20-message
thread (a third of its statements). The index reads both facts in one statement and, inside a write
transaction, keeps them until that transaction ends (a commit or rollback hook forgets them): while a
connection holds the write lock no other connection can change the schema, and this connection's own
changes go through `ensure_tables` / `drop_tables`, which update what it holds (a cache they did not
update would make every write rebuild the bit tables: measured 6x slower). Outside a write transaction
the facts are read afresh each time, as another process may have reindexed in between; so they are
for the rest of a transaction that changed the schema itself (a savepoint rolled back inside it would
undo the change without a hook saying so).

The module-level functions are the same operations for a bare connection (bench scripts, tests): each
call reads the facts once.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import apsw
import numpy as np

from store.db import json_ids
from store.vectors import floats
from store.vectors.codes import bump_generation
from store.vectors.knn import BIT_TABLES, K_MAX, SHARDS, Helper, rank, search
from store.vectors.layout import (
    VEC_TABLES,
    Facts,
    check,
    create_tables,
    drop_tables,
    get_setting,
    mismatch_reason,
    read_facts,
    set_setting,
)

_hook_ids = itertools.count()


def _f32(vec: Any) -> bytes:
    return np.ascontiguousarray(vec, dtype=np.float32).tobytes()


class VectorIndex:
    """The vector tables as seen from one connection (Store.vectors gives the calling thread's)."""

    def __init__(self, con: apsw.Connection, *, keep: bool = True) -> None:
        """`keep`: hold the facts for the rest of each write transaction (registers commit/rollback
        hooks on `con`); False reads them on every call (a throwaway index for one call)."""
        self.con = con
        self._held: Facts | None = None
        self._keep = keep
        self._changed = False  # this transaction changed the schema: a savepoint rolled back could undo it
        if keep:
            hook_id = ("memapp.vectors", next(_hook_ids))
            con.set_commit_hook(self._on_commit, id=hook_id)
            con.set_rollback_hook(self._forget, id=hook_id)

    # -- the facts -----------------------------------------------------------------------------------

    def _on_commit(self) -> bool:
        self._forget()
        return False  # let the commit go ahead

    def _forget(self) -> None:
        self._held = None
        self._changed = False

    def facts(self) -> Facts:
        """The vector tables that exist and the recorded model (held for the rest of a write transaction)."""
        if self._held is not None:
            return self._held
        facts = read_facts(self.con)
        if self._keep and not self._changed and self.con.txn_state() == apsw.SQLITE_TXN_WRITE:
            self._held = facts
        return facts

    def tables_exist(self) -> bool:
        return self.facts().tables_exist

    def recorded_model(self) -> tuple[str, int] | None:
        return self.facts().model

    def mismatch(self, name: str, dim: int) -> str | None:
        """Why vectors of model `name`/`dim` may not be used with this database, or None."""
        return mismatch_reason(self.facts().model, name, dim)

    def ensure_tables(self, name: str, dim: int) -> None:
        """Create (or convert, or complete) the vector tables for `dim` and record the model, inside the
        caller's transaction. Answers from the held facts when nothing needs doing."""
        facts = self.facts()
        if facts.ready_for(name, dim):
            return
        self._held, self._changed = None, True  # until the transaction ends, the facts are read afresh
        create_tables(self.con, facts, name, dim)
        bump_generation(self.con)  # held copies (store.vectors.codes) reload

    def drop_tables(self) -> None:
        """Forget every vector and the recorded model (reindex recreates them)."""
        self._held, self._changed = None, True
        drop_tables(self.con)
        bump_generation(self.con)

    def check(self) -> list[str]:
        """Ways the bit tables disagree with the float rows (empty when in step, or before they exist)."""
        return check(self.con, self.facts())

    # -- memories ------------------------------------------------------------------------------------

    def put_memory(self, memory_id: int, vec: np.ndarray, category: str, deleted: bool) -> None:
        if self.con.execute("SELECT 1 FROM vec_memories WHERE memory_id = ?", (memory_id,)).fetchone():
            bump_generation(self.con)  # a changed row, not an append: held copies reload
        self.con.execute(
            "INSERT INTO vec_memories(memory_id, embedding, category, deleted) VALUES (?, ?, ?, ?) "
            "ON CONFLICT(memory_id) DO UPDATE SET embedding = excluded.embedding, "
            "category = excluded.category, deleted = excluded.deleted",
            (memory_id, floats.encode(vec), category, int(deleted)),
        )
        if self.facts().has_bits:
            self._put_memory_bits(memory_id, _f32(vec), category, deleted)

    def _put_memory_bits(self, memory_id: int, blob: bytes, category: str, deleted: bool) -> None:
        """The bit table holds the memories search may return: a trashed memory leaves it, a restored one
        comes back (so the KNN needs no trash filter). `blob`: the float32 vector."""
        self.con.execute("DELETE FROM vec_memories_bits WHERE memory_id = ?", (memory_id,))
        if not deleted:
            self.con.execute(
                "INSERT INTO vec_memories_bits(memory_id, shard, embedding, category) "
                "VALUES (?, ?, vec_quantize_binary(?), ?)",
                (memory_id, memory_id % SHARDS, blob, category),
            )

    def update_memory_meta(self, memory_id: int, *, category: str, deleted: bool) -> None:
        facts = self.facts()
        if "vec_memories" not in facts.layout:
            return
        if facts.legacy:
            self.con.execute(
                "UPDATE vec_memories SET category = ?, deleted = ? WHERE memory_id = ?",
                (category, int(deleted), memory_id),
            )
            return
        row = self.con.execute(
            "UPDATE vec_memories SET category = ?, deleted = ? WHERE memory_id = ? RETURNING embedding",
            (category, int(deleted), memory_id),
        ).fetchone()
        if row is not None:
            bump_generation(self.con)
        if row is not None and facts.has_bits:
            self._put_memory_bits(memory_id, floats.as_f32(row[0]), category, deleted)

    def delete_memory(self, memory_id: int) -> None:
        layout = self.facts().layout
        for table in ("vec_memories", "vec_memories_bits"):
            if table in layout:
                self.con.execute(f"DELETE FROM {table} WHERE memory_id = ?", (memory_id,))
        if "vec_memories" in layout:
            bump_generation(self.con)

    def knn_memories(
        self,
        query: np.ndarray,
        k: int,
        *,
        category: str | None = None,
        include_deleted: bool = False,
        helper: Helper | None = None,
    ) -> list[tuple[int, float]]:
        """(memory_id, cosine similarity) of the k nearest, best first, filtered inside the KNN. With a
        `helper` (Store.vector_helper()) half the work runs on a second connection at the same time."""
        facts = self.facts()
        layout = facts.layout
        if "vec_memories" not in layout or k <= 0:
            return []
        where, args = [], []
        if category is not None:
            where.append("category = ?")
            args.append(category)
        if include_deleted:  # the bit table holds active memories only: score every row instead
            layout = {t: sql for t, sql in layout.items() if t not in BIT_TABLES}
        elif facts.legacy or not facts.has_bits:
            where.append("deleted = 0")
        hits = search(
            self.con, layout, "vec_memories", "memory_id", "", query, min(int(k), K_MAX), where, args, helper
        )
        return [(mid, sim) for mid, _, sim in hits]

    def rank_memories(
        self, where: str, args: Sequence[Any], query: np.ndarray, k: int
    ) -> list[tuple[int, float]]:
        """(memory_id, cosine) of the k nearest among the memories that pass `where` (SQL over
        `long_term_memories m`, with `args`), every one scored exactly: for filters the KNN cannot apply
        (pinned, dates), after which few memories are left."""
        if not self.tables_exist() or k <= 0:
            return []
        rows = self.con.execute(
            "SELECT v.memory_id, 0, v.embedding FROM long_term_memories m "
            f"JOIN vec_memories v ON v.memory_id = m.id WHERE {where}",
            list(args),
        ).fetchall()
        return [(mid, sim) for mid, _, sim in rank(rows, np.ascontiguousarray(query, dtype=np.float32), k)]

    def vector(self, table: str, row_id: int) -> np.ndarray | None:
        """The stored vector (float32) of one memory (`table` "memories") or chunk ("chunks"), or None."""
        pk = {"memories": "memory_id", "chunks": "chunk_id"}[table]
        if f"vec_{table}" not in self.facts().layout:
            return None
        row = self.con.execute(f"SELECT embedding FROM vec_{table} WHERE {pk} = ?", (row_id,)).fetchone()
        return None if row is None else floats.decode(row[0])

    # -- message chunks ------------------------------------------------------------------------------

    def put_chunks(
        self,
        message_id: int,
        thread_id: int,
        role: str,
        created_at: float | None,
        spans: Sequence[tuple[int, int]],
        vecs: np.ndarray,
        *,
        new: bool = False,
    ) -> None:
        """Store a message's chunks and their vectors, replacing any it had. `new`: the message was
        written in this transaction, so it has no chunks to replace (saves a lookup per message)."""
        if not new:
            self.delete_message_chunks([message_id])
        bits = self.facts().has_bits
        when = float(created_at or 0.0)
        for i, ((start, end), vec) in enumerate(zip(spans, vecs, strict=True)):
            self.con.execute(
                "INSERT INTO message_chunks(message_id, chunk_index, start_char, end_char) VALUES (?, ?, ?, ?)",
                (message_id, i, start, end),
            )
            chunk_id = self.con.last_insert_rowid()
            self.con.execute(
                "INSERT INTO vec_chunks(chunk_id, embedding, thread_id, role, created_at, message_id) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (chunk_id, floats.encode(vec), thread_id, role, when, message_id),
            )
            if bits:
                self.con.execute(
                    "INSERT INTO vec_chunks_bits(chunk_id, shard, embedding, thread_id, role, created_at) "
                    "VALUES (?, ?, vec_quantize_binary(?), ?, ?, ?)",
                    (chunk_id, chunk_id % SHARDS, _f32(vec), thread_id, role, when),
                )

    def delete_message_chunks(self, message_ids: Sequence[int]) -> None:
        if not message_ids:
            return
        chunk_ids = [
            int(r[0])
            for r in self.con.execute(
                "SELECT id FROM message_chunks WHERE message_id IN (SELECT value FROM json_each(?))",
                (json_ids(message_ids),),
            )
        ]
        if not chunk_ids:
            return
        bump_generation(self.con)
        layout = self.facts().layout
        for table in ("vec_chunks", "vec_chunks_bits"):
            if table in layout:  # one id at a time: `IN (...)` would make vec0 scan the whole table
                self.con.executemany(f"DELETE FROM {table} WHERE chunk_id = ?", ((c,) for c in chunk_ids))
        self.con.execute(
            "DELETE FROM message_chunks WHERE message_id IN (SELECT value FROM json_each(?))",
            (json_ids(message_ids),),
        )

    def knn_chunks(
        self,
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
        layout = self.facts().layout
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
        return search(
            self.con,
            layout,
            "vec_chunks",
            "chunk_id",
            "message_id",
            query,
            min(int(k), K_MAX),
            where,
            args,
            helper,
        )


# -- the same on a bare connection (one facts read per call) ------------------------------------------


def _once(con: apsw.Connection) -> VectorIndex:
    return VectorIndex(con, keep=False)


def recorded_model(con: apsw.Connection) -> tuple[str, int] | None:
    return _once(con).recorded_model()


def tables_exist(con: apsw.Connection) -> bool:
    return _once(con).tables_exist()


def mismatch(con: apsw.Connection, name: str, dim: int) -> str | None:
    return _once(con).mismatch(name, dim)


def ensure_tables(con: apsw.Connection, name: str, dim: int) -> None:
    _once(con).ensure_tables(name, dim)


def put_memory(con: apsw.Connection, memory_id: int, vec: np.ndarray, category: str, deleted: bool) -> None:
    _once(con).put_memory(memory_id, vec, category, deleted)


def knn_memories(
    con: apsw.Connection,
    query: np.ndarray,
    k: int,
    *,
    category: str | None = None,
    include_deleted: bool = False,
    helper: Helper | None = None,
) -> list[tuple[int, float]]:
    return _once(con).knn_memories(
        query, k, category=category, include_deleted=include_deleted, helper=helper
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
    return _once(con).knn_chunks(
        query, k, thread_id=thread_id, role=role, since=since, until=until, helper=helper
    )


__all__ = [
    "BIT_TABLES",
    "K_MAX",
    "SHARDS",
    "VEC_TABLES",
    "Helper",
    "VectorIndex",
    "ensure_tables",
    "get_setting",
    "knn_chunks",
    "knn_memories",
    "mismatch",
    "put_memory",
    "recorded_model",
    "set_setting",
    "tables_exist",
]
