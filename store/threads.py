"""Threads and messages: idempotent writes of imported conversations, paged reads.

A thread is identified across re-imports by (source, external_id), a message within its thread by its
external_id. Writing a ThreadIn adds only the messages not already there (appended after the last seq),
updates the title and last-activity time, and writes token counts, FTS rows and chunk vectors, all in
one transaction: a crash leaves the thread as it was before, never half-written.

Chunk embedding runs before the transaction, on the messages found new by a first read; the write
transaction re-checks, so two importers racing on the same file still add each message once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from store import vectors
from store.base import StoreBase, fts_put, json_dumps, json_loads
from store.errors import InvalidInputError, NotFoundError
from store.records import ROLES, Message, MessageIn, Summary, Thread, ThreadIn, ThreadWrite, now
from store.text import unpaired_surrogate

THREAD_COLUMNS = (
    "id, source, external_id, title, created_at, updated_at, message_count, token_count, metadata"
)
MESSAGE_COLUMNS = "id, thread_id, seq, role, content, token_count, external_id, created_at, metadata"
SORTS = {
    "updated": "updated_at DESC, id DESC",
    "created": "created_at DESC, id DESC",
    "title": "title COLLATE NOCASE, id",
    "messages": "message_count DESC, id DESC",
    "tokens": "token_count DESC, id DESC",
    "source": "source, updated_at DESC, id DESC",
}


def _thread(row: Sequence[Any]) -> Thread:
    return Thread(row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7], json_loads(row[8]))


def _message(row: Sequence[Any]) -> Message:
    return Message(row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7], json_loads(row[8]))


def _check_storable(thread: ThreadIn) -> None:
    """Refuse, before anything is written, text SQLite cannot store (an unpaired surrogate, e.g. from a
    JSON "\\ud800" escape in an export): InvalidInputError naming where, so an import skips this thread."""
    fields = [
        ("the title", thread.title),
        ("the source", thread.source),
        ("the id", thread.external_id or ""),
        ("the metadata", json_dumps(thread.metadata)),
    ]
    for i, m in enumerate(thread.messages):
        name = f"message {m.external_id or i}"
        fields += [
            (name, m.content),
            (f"{name}'s id", m.external_id or ""),
            (f"{name}'s metadata", json_dumps(m.metadata)),
        ]
    for where, text in fields:
        if (at := unpaired_surrogate(text)) is not None:
            raise InvalidInputError(
                f"{where} is not valid Unicode text (an unpaired surrogate at character {at}); "
                "the thread was not imported"
            )


@dataclass
class PreparedChunks:
    """Chunk spans and vectors for messages, computed outside the write transaction."""

    spans: list[list[tuple[int, int]]]
    vectors: np.ndarray | None  # all chunks of all messages, in order


class ThreadsMixin(StoreBase):
    # -- reads ---------------------------------------------------------------------------------------

    def get_thread(self, thread_id: int) -> Thread:
        row = self.con.execute(f"SELECT {THREAD_COLUMNS} FROM threads WHERE id = ?", (thread_id,)).fetchone()
        if row is None:
            raise NotFoundError(f"no thread with id {thread_id}")
        return _thread(row)

    def find_thread(self, source: str, external_id: str) -> Thread | None:
        row = self.con.execute(
            f"SELECT {THREAD_COLUMNS} FROM threads WHERE source = ? AND external_id = ?",
            (source, external_id),
        ).fetchone()
        return None if row is None else _thread(row)

    def list_threads(
        self,
        *,
        text: str | None = None,
        source: str | None = None,
        sort: str = "updated",
        limit: int = 100,
        offset: int = 0,
    ) -> list[Thread]:
        """A page of threads; `text` filters on the title (case-insensitive substring)."""
        if sort not in SORTS:
            raise InvalidInputError(f"unknown sort {sort!r}: use one of {', '.join(SORTS)}")
        where, args = ["1"], []
        if text:
            where.append("instr(lower(title), lower(?)) > 0")
            args.append(text)
        if source:
            where.append("source = ?")
            args.append(source)
        sql = (
            f"SELECT {THREAD_COLUMNS} FROM threads WHERE {' AND '.join(where)} ORDER BY {SORTS[sort]} "
            "LIMIT ? OFFSET ?"
        )
        return [_thread(r) for r in self.con.execute(sql, [*args, limit, offset])]

    def thread_ids(self) -> list[int]:
        """Every thread id, oldest first (for `--all` commands)."""
        return [int(r[0]) for r in self.con.execute("SELECT id FROM threads ORDER BY id")]

    def count_threads(self, *, text: str | None = None) -> int:
        if text:
            return int(
                self._scalar("SELECT count(*) FROM threads WHERE instr(lower(title), lower(?)) > 0", (text,))
            )
        return int(self._scalar("SELECT count(*) FROM threads"))

    def get_messages(self, thread_id: int, *, offset: int = 0, limit: int = 200) -> list[Message]:
        """Messages of a thread in order, a page at a time (seq-ordered, by index on (thread_id, seq))."""
        rows = self.con.execute(
            f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE thread_id = ? ORDER BY seq LIMIT ? OFFSET ?",
            (thread_id, limit, offset),
        )
        return [_message(r) for r in rows]

    def get_message(self, message_id: int) -> Message:
        row = self.con.execute(
            f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE id = ?", (message_id,)
        ).fetchone()
        if row is None:
            raise NotFoundError(f"no message with id {message_id}")
        return _message(row)

    def message_index(self, message_id: int) -> int:
        """0-based position of a message in its thread (to open a thread at that message)."""
        m = self.get_message(message_id)
        return int(
            self._scalar(
                "SELECT count(*) FROM messages WHERE thread_id = ? AND seq < ?", (m.thread_id, m.seq)
            )
        )

    def get_summary(self, thread_id: int) -> Summary | None:
        row = self.con.execute(
            "SELECT thread_id, content, last_message_seq, token_count, created_at, updated_at "
            "FROM thread_summaries WHERE thread_id = ?",
            (thread_id,),
        ).fetchone()
        return None if row is None else Summary(*row)

    def get_topics(self, thread_id: int, limit: int = 20) -> list[tuple[str, int]]:
        rows = self.con.execute(
            "SELECT topic, mention_count FROM memory_topics WHERE thread_id = ? "
            "ORDER BY mention_count DESC, topic LIMIT ?",
            (thread_id, limit),
        )
        return [(str(t), int(c)) for t, c in rows]

    # -- writes --------------------------------------------------------------------------------------

    def _existing_external_ids(self, thread_id: int) -> set[str]:
        return {
            str(r[0])
            for r in self.con.execute(
                "SELECT external_id FROM messages WHERE thread_id = ? AND external_id IS NOT NULL",
                (thread_id,),
            )
        }

    def _new_messages(self, thread: ThreadIn) -> list[MessageIn]:
        existing: set[str] = set()
        if thread.external_id is not None:
            found = self.find_thread(thread.source, thread.external_id)
            if found is not None:
                existing = self._existing_external_ids(found.id)
        seen: set[str] = set()
        out = []
        for m in thread.messages:
            if m.external_id is not None:
                if m.external_id in existing or m.external_id in seen:
                    continue
                seen.add(m.external_id)
            out.append(m)
        return out

    def prepare_chunks(self, messages: Sequence[MessageIn | Message]) -> PreparedChunks | None:
        """Split and embed message texts (slow; outside any transaction). None when no model is usable."""
        if self.vector_problem or self.embedder is None:
            return None
        spans = [self.embedder.chunk(m.content) for m in messages]
        texts = [m.content[a:b] for m, ss in zip(messages, spans, strict=True) for a, b in ss]
        vecs = self._embed(texts) if texts else np.zeros((0, self.embedder.dimension), dtype=np.float32)
        if vecs is None:
            return None
        return PreparedChunks(spans, vecs)

    def write_thread(
        self, thread: ThreadIn, *, embed: bool = True, prepared: PreparedChunks | None = None
    ) -> ThreadWrite:
        """Create or extend a thread with the messages not yet stored. Idempotent."""
        for m in thread.messages:
            if m.role not in ROLES:
                raise InvalidInputError(f"message {m.external_id!r} has unknown role {m.role!r}")
        _check_storable(thread)
        new = self._new_messages(thread)
        if prepared is not None and len(prepared.spans) != len(new):
            prepared = (
                None  # made for an older read of this thread (it has grown since): its spans would misalign
            )
        if prepared is None and embed and new:
            prepared = self.prepare_chunks(new)
        with self.con:
            return self._write_thread_tx(thread, new, prepared)

    def _write_thread_tx(
        self, thread: ThreadIn, candidates: list[MessageIn], prepared: PreparedChunks | None
    ) -> ThreadWrite:
        t = now()
        found = (
            self.find_thread(thread.source, thread.external_id) if thread.external_id is not None else None
        )
        created = found is None
        title = thread.title.strip() or (found.title if found else "") or "Untitled"
        if found is None:
            created_at = thread.created_at or t
            self.con.execute(
                "INSERT INTO threads(source, external_id, title, created_at, updated_at, metadata) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (
                    thread.source,
                    thread.external_id,
                    title,
                    created_at,
                    thread.updated_at or created_at,
                    json_dumps(thread.metadata),
                ),
            )
            thread_id = self.con.last_insert_rowid()
            existing: set[str] = set()
            title_changed = False
        else:
            thread_id = found.id
            existing = self._existing_external_ids(thread_id)
            title_changed = title != found.title
        next_seq = int(
            self._scalar("SELECT coalesce(max(seq), -1) + 1 FROM messages WHERE thread_id = ?", (thread_id,))
        )
        use_vectors = prepared is not None and prepared.vectors is not None
        if use_vectors:
            self._ensure_vector_tables()
        added = 0
        chunk_cursor = 0
        for i, m in enumerate(candidates):
            n_chunks = len(prepared.spans[i]) if prepared is not None else 0
            vec_slice = slice(chunk_cursor, chunk_cursor + n_chunks)
            chunk_cursor += n_chunks
            if m.external_id is not None and m.external_id in existing:
                continue  # written by someone else since the first read
            tokens = self.tokens.count(m.content)
            self.con.execute(
                "INSERT INTO messages(thread_id, seq, role, content, token_count, external_id, created_at, metadata) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    thread_id,
                    next_seq,
                    m.role,
                    m.content,
                    tokens,
                    m.external_id,
                    m.created_at,
                    json_dumps(m.metadata),
                ),
            )
            message_id = self.con.last_insert_rowid()
            fts_put(self.con, "fts_messages", message_id, m.content)
            if use_vectors and prepared is not None and prepared.vectors is not None and n_chunks:
                vectors.put_chunks(
                    self.con,
                    message_id,
                    thread_id,
                    m.role,
                    m.created_at,
                    prepared.spans[i],
                    prepared.vectors[vec_slice],
                )
            next_seq += 1
            added += 1
        last_activity = max([thread.updated_at or 0.0] + [m.created_at or 0.0 for m in candidates])
        self.con.execute(
            "UPDATE threads SET title = ?, "
            "updated_at = max(updated_at, ?), "
            "message_count = (SELECT count(*) FROM messages WHERE thread_id = ?), "
            "token_count = (SELECT coalesce(sum(token_count), 0) FROM messages WHERE thread_id = ?) "
            "WHERE id = ?",
            (title, last_activity, thread_id, thread_id, thread_id),
        )
        return ThreadWrite(thread_id, created, added, title_changed and not created)

    def delete_thread(self, thread_id: int) -> None:
        """Remove a thread, its messages and their index rows."""
        with self.con:
            self.get_thread(thread_id)
            ids = [
                int(r[0])
                for r in self.con.execute("SELECT id FROM messages WHERE thread_id = ?", (thread_id,))
            ]
            vectors.delete_message_chunks(self.con, ids)
            for mid in ids:
                self.con.execute("DELETE FROM fts_messages WHERE rowid = ?", (mid,))
            self.con.execute("DELETE FROM fts_summaries WHERE rowid = ?", (thread_id,))
            self.con.execute("DELETE FROM threads WHERE id = ?", (thread_id,))

    # -- vectors after the fact ---------------------------------------------------------------------

    def messages_missing_vectors(self, limit: int = 256) -> list[Message]:
        rows = self.con.execute(
            f"SELECT {MESSAGE_COLUMNS} FROM messages m WHERE trim(content) != '' AND NOT EXISTS "
            "(SELECT 1 FROM message_chunks c WHERE c.message_id = m.id) ORDER BY id LIMIT ?",
            (limit,),
        )
        return [_message(r) for r in rows]

    def embed_messages(self, messages: Sequence[Message]) -> int:
        """Chunk, embed and store vectors for already-stored messages (one transaction)."""
        prepared = self.prepare_chunks(messages)
        if prepared is None or prepared.vectors is None:
            return 0
        cursor = 0
        with self.con:
            self._ensure_vector_tables()
            for m, spans in zip(messages, prepared.spans, strict=True):
                vecs = prepared.vectors[cursor : cursor + len(spans)]
                cursor += len(spans)
                if spans:
                    vectors.put_chunks(self.con, m.id, m.thread_id, m.role, m.created_at, spans, vecs)
        return len(messages)

    def rebuild_keyword_index(self) -> None:
        """Rebuild every FTS table from the canonical rows (reindex)."""
        with self.con:
            for table, sql in (
                ("fts_messages", "SELECT id, content FROM messages"),
                ("fts_memories", "SELECT id, content FROM long_term_memories"),
                ("fts_summaries", "SELECT thread_id, content FROM thread_summaries"),
            ):
                self.con.execute(f"DELETE FROM {table}")
                for rowid, text in list(self.con.execute(sql)):
                    fts_put(self.con, table, rowid, text)

    def drop_vectors(self) -> None:
        """Forget every vector and the recorded model; `embed` then rebuilds with the current model."""
        with self.con:
            vectors.drop_tables(self.con)
