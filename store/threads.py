"""Threads and messages: idempotent writes of imported conversations, paged reads.

A thread is identified across re-imports by (source, external_id), a message within its thread by its
external_id. Writing a ThreadIn adds only the messages not already there (appended after the last seq),
updates the title and last-activity time, and writes token counts, FTS rows and chunk vectors, all in
one transaction: a crash leaves the thread as it was before, never half-written.

Chunk embedding runs before the transaction, on the messages found new by a first read; the write
transaction re-checks, so two importers racing on the same file still add each message once. That first
read also answers a re-import of a thread stored whole (same title, no new message, no later activity)
without a write transaction: re-importing an export takes no write lock per thread.

A thread's new messages are written with one statement per table (executemany), with ids given
explicitly from max(id) + 1 (what SQLite would choose), so their keyword-index rows need no id read
back per message. Token counts can arrive counted ahead (`token_counts`: an import counts them in
another process, see store.importing); whatever is missing is counted here, in one call.
"""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any

import numpy as np

from store.core import StoreCore
from store.errors import InvalidInputError, NotFoundError
from store.records import (
    ROLES,
    Message,
    MessageIn,
    Summary,
    Thread,
    ThreadIn,
    ThreadWrite,
    json_dumps,
    json_loads,
    now,
)
from store.text import index_text, rebuild_fts, unpaired_surrogate
from store.titles import imported_title, unchanged

THREAD_COLUMNS = (
    "id, source, external_id, title, created_at, updated_at, message_count, token_count, metadata, archived_at, "
    "source_title"
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
    r = row
    return Thread(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], json_loads(r[8]), r[9], r[10])


def thread_where(text: str | None, archived: bool | None) -> tuple[list[str], list[Any]]:
    """WHERE terms for a title filter and the archive state (shared by listing and counting)."""
    where: list[str] = ["1"]
    args: list[Any] = []
    if text:
        where.append("instr(lower(title), lower(?)) > 0")
        args.append(text)
    if archived is not None:
        where.append("archived_at IS NOT NULL" if archived else "archived_at IS NULL")
    return where, args


def _message(row: Sequence[Any]) -> Message:
    return Message(row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7], json_loads(row[8]))


def _check_storable(thread: ThreadIn, positions: Sequence[int]) -> list[str]:
    """Refuse, before anything is written, an unknown role and text SQLite cannot store (an unpaired
    surrogate, e.g. from a JSON "\\ud800" escape in an export): InvalidInputError naming where, so an
    import skips this thread. Only the thread's own fields and the messages at `positions` (those to be
    written) are checked: a stored message was checked when it was written. Returns their metadata JSON,
    by position in `positions`, for the insert."""
    for i in positions:
        m = thread.messages[i]
        if m.role not in ROLES:
            raise InvalidInputError(f"message {m.external_id!r} has unknown role {m.role!r}")
    metadata = [_metadata_json(thread.messages[i].metadata) for i in positions]
    fields = [
        ("the title", thread.title),
        ("the source", thread.source),
        ("the id", thread.external_id or ""),
        ("the metadata", _metadata_json(thread.metadata)),
    ]
    for i, meta in zip(positions, metadata, strict=True):
        m = thread.messages[i]
        name = f"message {m.external_id or i}"
        fields += [(name, m.content), (f"{name}'s id", m.external_id or ""), (f"{name}'s metadata", meta)]
    for where, text in fields:
        if (at := unpaired_surrogate(text)) is not None:
            raise InvalidInputError(
                f"{where} is not valid Unicode text (an unpaired surrogate at character {at}); "
                "the thread was not imported"
            )
    return metadata


def _metadata_json(metadata: dict[str, Any]) -> str:
    return json_dumps(metadata) if metadata else "{}"


def _new_positions(thread: ThreadIn, existing: AbstractSet[str]) -> list[int]:
    """Positions in `thread.messages` of the messages not stored yet (an id seen twice counts once)."""
    seen: set[str] = set()
    out = []
    for i, m in enumerate(thread.messages):
        if m.external_id is not None:
            if m.external_id in existing or m.external_id in seen:
                continue
            seen.add(m.external_id)
        out.append(i)
    return out


@dataclass(frozen=True)
class StoredThread:
    """What a read found of a thread before writing it: the stored thread it extends (same source and
    external id), if any, and the external ids of its messages."""

    thread: Thread | None
    external_ids: frozenset[str]

    def new_positions(self, thread: ThreadIn) -> list[int]:
        """Positions in `thread.messages` of the messages not stored yet."""
        return _new_positions(thread, self.external_ids)


@dataclass
class PreparedChunks:
    """Chunk spans and vectors for messages, computed outside the write transaction."""

    spans: list[list[tuple[int, int]]]
    vectors: np.ndarray | None  # all chunks of all messages, in order


class ThreadsMixin(StoreCore):
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
        archived: bool | None = False,
        since: float | None = None,
        until: float | None = None,
    ) -> list[Thread]:
        """A page of threads; `text` filters on the title (case-insensitive substring). `archived`:
        False (the default) hides archived threads, True shows only them, None shows both. `since`/`until`
        (epoch seconds, half-open) keep the threads active in that span: begun before `until` and last
        active at or after `since`."""
        if sort not in SORTS:
            raise InvalidInputError(f"unknown sort {sort!r}: use one of {', '.join(SORTS)}")
        if since is not None and until is not None and since >= until:
            raise InvalidInputError("since must be before until")
        where, args = thread_where(text, archived)
        if source:
            where.append("source = ?")
            args.append(source)
        if since is not None:
            where.append("updated_at >= ?")
            args.append(since)
        if until is not None:
            where.append("created_at < ?")
            args.append(until)
        sql = (
            f"SELECT {THREAD_COLUMNS} FROM threads WHERE {' AND '.join(where)} ORDER BY {SORTS[sort]} "
            "LIMIT ? OFFSET ?"
        )
        return [_thread(r) for r in self.con.execute(sql, [*args, limit, offset])]

    def thread_ids(self) -> list[int]:
        """Every thread id, oldest first (for `--all` commands)."""
        return [int(r[0]) for r in self.con.execute("SELECT id FROM threads ORDER BY id")]

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
            self.scalar("SELECT count(*) FROM messages WHERE thread_id = ? AND seq < ?", (m.thread_id, m.seq))
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

    def stored_thread(self, thread: ThreadIn) -> StoredThread:
        """The stored thread that `thread` extends and its message ids (a read: no lock taken). An import
        reads this once and hands it to write_thread with the batch."""
        if thread.external_id is None:
            return StoredThread(None, frozenset())
        found = self.find_thread(thread.source, thread.external_id)
        return StoredThread(found, frozenset(self._existing_external_ids(found.id)) if found else frozenset())

    def prepare_chunks(self, messages: Sequence[MessageIn | Message]) -> PreparedChunks | None:
        """Split and embed message texts (slow; outside any transaction). None when no model is usable."""
        if self.vector_problem or self.embedder is None:
            return None
        spans = [self.embedder.chunk(m.content) for m in messages]
        texts = [m.content[a:b] for m, ss in zip(messages, spans, strict=True) for a, b in ss]
        vecs = (
            self.embed_texts(texts, checked=True)
            if texts
            else np.zeros((0, self.embedder.dimension), dtype=np.float32)
        )
        if vecs is None:
            return None
        return PreparedChunks(spans, vecs)

    def write_thread(
        self,
        thread: ThreadIn,
        *,
        embed: bool = True,
        prepared: PreparedChunks | None = None,
        token_counts: Sequence[int | None] | None = None,
        stored: StoredThread | None = None,
        redacted: bool = False,
    ) -> ThreadWrite:
        """Create or extend a thread with the messages not yet stored. Idempotent.

        Its text passes the secret gate (Store.redact_thread) first, unless `redacted` says the caller
        already passed it through (an import does, before counting tokens and chunking for vectors).

        `prepared`: chunks and vectors of the new messages, made outside the transaction (dropped if the
        thread has grown since). `token_counts`: exact counts of `thread.messages`, by position, counted
        ahead; None entries (or no list) are counted here. `stored`: what `stored_thread(thread)` found
        a moment ago (the import's read), so the thread is not read again before the transaction (which
        re-checks in any case).
        """
        if token_counts is not None and len(token_counts) != len(thread.messages):
            raise ValueError(f"{len(token_counts)} token counts for {len(thread.messages)} messages")
        if not redacted:
            gated = self.redact_thread(thread)
            if gated is not thread and (prepared is not None or token_counts is not None):
                prepared, token_counts = None, None  # made from the text before it was redacted
            thread = gated
        if stored is None:
            stored = self.stored_thread(thread)
        found = stored.thread
        positions = stored.new_positions(thread)
        if not positions and found is not None and unchanged(thread, found):
            return ThreadWrite(found.id, False, 0, False)  # stored whole: nothing to write, no lock
        metadata = _check_storable(thread, positions)
        if prepared is not None and len(prepared.spans) != len(positions):
            prepared = (
                None  # made for an older read of this thread (it has grown since): its spans would misalign
            )
        if prepared is None and embed and positions:
            prepared = self.prepare_chunks([thread.messages[i] for i in positions])
        with self.con:
            return self._write_thread_tx(thread, positions, prepared, token_counts, metadata)

    def _write_thread_tx(
        self,
        thread: ThreadIn,
        positions: list[int],
        prepared: PreparedChunks | None,
        token_counts: Sequence[int | None] | None,
        metadata: list[str],
    ) -> ThreadWrite:
        t = now()
        found = (
            self.find_thread(thread.source, thread.external_id) if thread.external_id is not None else None
        )
        created = found is None
        title, source_title = imported_title(
            thread.title, found.title if found else None, found.source_title if found else None
        )
        if found is None:
            created_at = thread.created_at or t
            self.con.execute(
                "INSERT INTO threads(source, external_id, title, source_title, created_at, updated_at, metadata) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    thread.source,
                    thread.external_id,
                    title,
                    source_title,
                    created_at,
                    thread.updated_at or created_at,
                    _metadata_json(thread.metadata),
                ),
            )
            thread_id = self.con.last_insert_rowid()
            existing: set[str] = set()
            title_changed = False
            next_seq = 0
        else:
            thread_id = found.id
            existing = self._existing_external_ids(thread_id)
            title_changed = title != found.title
            next_seq = int(
                self.scalar(
                    "SELECT coalesce(max(seq), -1) + 1 FROM messages WHERE thread_id = ?", (thread_id,)
                )
            )
        # (position in `prepared`, position in thread.messages, first chunk) of each message to add; one
        # another writer stored since the first read is skipped, its chunks with it.
        chosen: list[tuple[int, int, int]] = []
        cursor = 0
        for k, i in enumerate(positions):
            ext = thread.messages[i].external_id
            if ext is None or ext not in existing:
                chosen.append((k, i, cursor))
            cursor += len(prepared.spans[k]) if prepared is not None else 0
        if chosen:
            self._insert_messages(thread, thread_id, next_seq, chosen, prepared, token_counts, metadata)
        last_activity = max(
            [thread.updated_at or 0.0] + [thread.messages[i].created_at or 0.0 for i in positions]
        )
        self.con.execute(
            "UPDATE threads SET title = ?, source_title = ?, "
            "updated_at = max(updated_at, ?), "
            "message_count = (SELECT count(*) FROM messages WHERE thread_id = ?), "
            "token_count = (SELECT coalesce(sum(token_count), 0) FROM messages WHERE thread_id = ?) "
            "WHERE id = ?",
            (title, source_title, last_activity, thread_id, thread_id, thread_id),
        )
        return ThreadWrite(thread_id, created, len(chosen), title_changed and not created)

    def _insert_messages(
        self,
        thread: ThreadIn,
        thread_id: int,
        first_seq: int,
        chosen: list[tuple[int, int, int]],
        prepared: PreparedChunks | None,
        token_counts: Sequence[int | None] | None,
        metadata: list[str],
    ) -> None:
        """Rows, token counts, keyword-index rows and chunk vectors of new messages (inside the transaction).
        `metadata`: the JSON of each message's metadata, by position in `positions` (built by the check)."""
        messages = [thread.messages[i] for _, i, _ in chosen]
        counts = [token_counts[i] if token_counts is not None else None for _, i, _ in chosen]
        missing = [n for n, c in enumerate(counts) if c is None]
        if missing:
            for n, c in zip(
                missing, self.tokens.count_many([messages[n].content for n in missing]), strict=True
            ):
                counts[n] = c
        first_id = int(self.scalar("SELECT coalesce(max(id), 0) + 1 FROM messages"))
        ids = range(first_id, first_id + len(messages))
        self.con.executemany(
            "INSERT INTO messages(id, thread_id, seq, role, content, token_count, external_id, created_at, "
            "metadata) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    mid,
                    thread_id,
                    first_seq + n,
                    m.role,
                    m.content,
                    counts[n],
                    m.external_id,
                    m.created_at,
                    metadata[k],
                )
                for n, (mid, m, (k, _, _)) in enumerate(zip(ids, messages, chosen, strict=True))
            ],
        )
        # Ids above every stored message's: no keyword-index row can carry them yet (delete_thread removes
        # a thread's rows with it), so the rows are inserted without the delete that fts_put does first.
        self.con.executemany(
            "INSERT INTO fts_messages(rowid, body) VALUES (?, ?)",
            [(mid, index_text(m.content)) for mid, m in zip(ids, messages, strict=True)],
        )
        if prepared is None or prepared.vectors is None:
            return
        self.ensure_vector_tables()
        for mid, m, (k, _, first) in zip(ids, messages, chosen, strict=True):
            spans = prepared.spans[k]
            if spans:
                self.vectors.put_chunks(
                    mid,
                    thread_id,
                    m.role,
                    m.created_at,
                    spans,
                    prepared.vectors[first : first + len(spans)],
                    new=True,  # ids above every stored message's: no chunks to replace
                )

    def delete_thread(self, thread_id: int) -> None:
        """Remove a thread, its messages and their index rows."""
        with self.con:
            self.get_thread(thread_id)
            ids = [
                int(r[0])
                for r in self.con.execute("SELECT id FROM messages WHERE thread_id = ?", (thread_id,))
            ]
            self.vectors.delete_message_chunks(ids)
            for mid in ids:
                self.con.execute("DELETE FROM fts_messages WHERE rowid = ?", (mid,))
            self.con.execute("DELETE FROM fts_summaries WHERE rowid = ?", (thread_id,))
            self.con.execute("DELETE FROM threads WHERE id = ?", (thread_id,))

    # -- vectors after the fact ---------------------------------------------------------------------

    def messages_missing_vectors(self, limit: int = 256, *, thread_id: int | None = None) -> list[Message]:
        """Messages with text but no chunk vectors yet (of one thread when `thread_id` is given)."""
        rows = self.con.execute(
            f"SELECT {MESSAGE_COLUMNS} FROM messages m WHERE trim(content) != '' AND NOT EXISTS "
            "(SELECT 1 FROM message_chunks c WHERE c.message_id = m.id) "
            "AND (?1 IS NULL OR thread_id = ?1) ORDER BY id LIMIT ?2",
            (thread_id, limit),
        )
        return [_message(r) for r in rows]

    def embed_messages(self, messages: Sequence[Message]) -> int:
        """Chunk, embed and store vectors for already-stored messages (one transaction)."""
        prepared = self.prepare_chunks(messages)
        if prepared is None or prepared.vectors is None:
            return 0
        cursor = 0
        with self.con:
            self.ensure_vector_tables()
            for m, spans in zip(messages, prepared.spans, strict=True):
                vecs = prepared.vectors[cursor : cursor + len(spans)]
                cursor += len(spans)
                if spans:
                    self.vectors.put_chunks(m.id, m.thread_id, m.role, m.created_at, spans, vecs)
        return len(messages)

    def rebuild_keyword_index(self) -> None:
        """Re-create every FTS table (with the current tokenizer) from the canonical rows (reindex)."""
        with self.con:
            rebuild_fts(self.con)

    def drop_vectors(self) -> None:
        """Forget every vector and the recorded model; `embed` then rebuilds with the current model."""
        with self.con:
            self.vectors.drop_tables()
