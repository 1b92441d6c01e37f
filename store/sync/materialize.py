"""Writing the canonical rows back from the mirror, for the rows an apply touched, with their derived data.

State, not operations: for each touched uid, the canonical row is made to match its mirror row (inserted,
updated, or deleted when the mirror has none), so writing the same uid twice changes nothing and the
order changes arrived in does not matter. Local integer ids are chosen here (a memory's id is new even to
memory_history, as store.memories chooses it). Derived data is rebuilt for what changed, in the same
transaction: keyword rows, vector metadata (category, trash), a memory's hash and token count, a
thread's message and token counts. Vectors for new text are left to `embed_new` after the commit (the
model may take seconds; no write lock is held meanwhile), and so are the summaries of threads that grew.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from store.memory_rows import content_hash
from store.sync.tables import ACCESS, CONFLICTS, HISTORY, MEMORIES, MESSAGES, PINS, THREADS, WIRE_COLUMNS
from store.text import fts_delete, fts_put, index_text

if TYPE_CHECKING:
    from store.store import Store


@dataclass
class Touched:
    """What an apply changed, for writing back and rebuilding."""

    uids: dict[str, set[str]] = field(default_factory=dict)  # mirror table -> uids
    wire_inserts: list[tuple[Any, ...]] = field(default_factory=list)
    wire_deletes: list[str] = field(default_factory=list)
    keep: set[str] = field(default_factory=set)  # memories to keep although the mirror lost them
    new_text: set[int] = field(default_factory=set)  # memory ids whose vector must be made again
    new_messages: set[int] = field(default_factory=set)
    grown_threads: set[int] = field(default_factory=set)

    def add(self, table: str, uid: str) -> None:
        self.uids.setdefault(table, set()).add(uid)


def _id_of(store: Store, table: str, uid: str | None) -> int | None:
    if uid is None:
        return None
    row = store.con.execute(f"SELECT id FROM {table} WHERE uid = ?", (uid,)).fetchone()
    return None if row is None else int(row[0])


def _mirror(store: Store, table: str, columns: Sequence[str], uid: str) -> dict[str, Any] | None:
    row = store.con.execute(f"SELECT {', '.join(columns)} FROM {table} WHERE uid = ?", (uid,)).fetchone()
    return None if row is None else dict(zip(columns, row, strict=True))


# -- threads and messages -----------------------------------------------------------------------------


def _threads(store: Store, uids: Iterable[str]) -> None:
    con = store.con
    for uid in sorted(uids):
        m = _mirror(store, THREADS.name, THREADS.all_columns, uid)
        tid = _id_of(store, "threads", uid)
        if m is None:
            if tid is not None:
                store.delete_thread(tid)
                con.execute(f"DELETE FROM {MESSAGES} WHERE thread_uid = ?", (uid,))
            continue
        values = [m["source"], m["external_id"], m["title"], m["created_at"], m["updated_at"], m["metadata"]]
        if tid is None:
            con.execute(
                "INSERT INTO threads(source, external_id, title, created_at, updated_at, metadata, archived_at, "
                "uid) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(source, external_id) DO UPDATE SET uid = excluded.uid",
                [*values, m["archived_at"], uid],
            )
        else:
            con.execute(
                "UPDATE threads SET source = ?, external_id = ?, title = ?, created_at = ?, updated_at = ?, "
                "metadata = ?, archived_at = ? WHERE id = ?",
                [*values, m["archived_at"], tid],
            )


def _messages(store: Store, touched: Touched) -> None:
    con = store.con
    for uid in touched.wire_deletes:
        mid = _id_of(store, "messages", uid)
        if mid is not None:
            thread_id = int(store.scalar("SELECT thread_id FROM messages WHERE id = ?", (mid,)))
            store.vectors.delete_message_chunks([mid])
            fts_delete(con, "fts_messages", mid)
            con.execute("DELETE FROM messages WHERE id = ?", (mid,))
            touched.grown_threads.add(thread_id)
    rows = [dict(zip(WIRE_COLUMNS, r, strict=True)) for r in touched.wire_inserts]
    have = {
        str(r[0])
        for r in con.execute(
            "SELECT uid FROM messages WHERE uid IN (SELECT value FROM json_each(?))",
            (json.dumps([r["uid"] for r in rows]),),
        )
    }
    rows = [r for r in rows if r["uid"] not in have]
    if not rows:
        return
    counts = store.tokens.count_many([str(r["content"]) for r in rows])
    by_thread: dict[str, list[tuple[dict[str, Any], int]]] = {}
    for r, tokens in zip(rows, counts, strict=True):
        by_thread.setdefault(str(r["thread_uid"]), []).append((r, tokens))
    next_id = int(store.scalar("SELECT coalesce(max(id), 0) + 1 FROM messages"))
    for thread_uid, items in by_thread.items():
        tid = _id_of(store, "threads", thread_uid)
        if tid is None:  # its thread was deleted here: a deleted thread's messages go with it
            con.executemany(f"DELETE FROM {MESSAGES} WHERE uid = ?", [(r["uid"],) for r, _ in items])
            continue
        seq = int(store.scalar("SELECT coalesce(max(seq), -1) + 1 FROM messages WHERE thread_id = ?", (tid,)))
        ids = range(next_id, next_id + len(items))
        con.executemany(
            "INSERT INTO messages(id, thread_id, seq, role, content, token_count, external_id, created_at, "
            "metadata, uid) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    mid,
                    tid,
                    seq + k,
                    r["role"],
                    r["content"],
                    tokens,
                    r["external_id"],
                    r["created_at"],
                    r["metadata"],
                    r["uid"],
                )
                for k, (mid, (r, tokens)) in enumerate(zip(ids, items, strict=True))
            ],
        )
        con.executemany(
            "INSERT INTO fts_messages(rowid, body) VALUES (?, ?)",
            [(mid, index_text(str(r["content"]))) for mid, (r, _) in zip(ids, items, strict=True)],
        )
        touched.new_messages.update(ids)
        touched.grown_threads.add(tid)
        next_id += len(items)


def _order_thread(store: Store, thread_id: int) -> None:
    """Messages in the order every device agrees on: by their position where they were first written,
    then by uid (two devices that appended different messages to one thread interleave them the same
    way). Renumbered only when the order here differs."""
    con = store.con
    rows = con.execute(
        f"SELECT m.id, m.seq FROM messages m LEFT JOIN {MESSAGES} s ON s.uid = m.uid "
        "WHERE m.thread_id = ? ORDER BY coalesce(s.pos, m.seq), m.uid",
        (thread_id,),
    ).fetchall()
    if all(seq == i for i, (_, seq) in enumerate(rows)):
        return
    con.execute("UPDATE messages SET seq = -1 - seq WHERE thread_id = ?", (thread_id,))
    con.executemany("UPDATE messages SET seq = ? WHERE id = ?", [(i, mid) for i, (mid, _) in enumerate(rows)])


def _thread_totals(store: Store, thread_ids: Iterable[int]) -> None:
    for tid in thread_ids:
        if store.scalar("SELECT 1 FROM threads WHERE id = ?", (tid,)) is None:
            continue
        _order_thread(store, tid)
        store.con.execute(
            "UPDATE threads SET message_count = (SELECT count(*) FROM messages WHERE thread_id = ?1), "
            "token_count = (SELECT coalesce(sum(token_count), 0) FROM messages WHERE thread_id = ?1) WHERE id = ?1",
            (tid,),
        )


# -- memories -------------------------------------------------------------------------------------------


def _new_memory_id(store: Store) -> int:
    return int(
        store.scalar(
            "SELECT 1 + max(coalesce((SELECT max(id) FROM long_term_memories), 0), "
            "coalesce((SELECT max(memory_id) FROM memory_history), 0))"
        )
    )


def _counts(store: Store, uid: str) -> tuple[int, int, float | None]:
    pinned = store.scalar(f"SELECT count(*) FROM {PINS} WHERE memory_uid = ?", (uid,))
    row = store.con.execute(
        f"SELECT coalesce(sum(count), 0), max(last_accessed) FROM {ACCESS} WHERE memory_uid = ?", (uid,)
    ).fetchone()
    assert row is not None
    return int(bool(pinned)), int(row[0]), row[1]


def _memory(store: Store, uid: str, touched: Touched) -> None:
    con = store.con
    m = _mirror(store, MEMORIES.name, MEMORIES.all_columns, uid)
    mid = _id_of(store, "long_term_memories", uid)
    if m is None:
        if mid is not None and uid not in touched.keep:
            fts_delete(con, "fts_memories", mid)
            store.vectors.delete_memory(mid)
            con.execute("DELETE FROM long_term_memories WHERE id = ?", (mid,))
        return
    pinned, access, last = _counts(store, uid)
    fields = {
        "category": m["category"],
        "content": m["content"],
        "importance": m["importance"],
        "origin": m["origin"],
        "user_edited": m["user_edited"],
        "source_thread_id": _id_of(store, "threads", m["source_thread_uid"]),
        "source_message_id": _id_of(store, "messages", m["source_message_uid"]),
        "source_note": m["source_note"],
        "created_at": m["created_at"],
        "updated_at": m["updated_at"],
        "deleted_at": m["deleted_at"],
        "valid_from": m["valid_from"],
        "valid_until": m["valid_until"],
        "pinned": pinned,
        "access_count": access,
        "last_accessed": last,
        "content_hash": content_hash(str(m["content"])),
    }
    if mid is None:
        mid = _new_memory_id(store)
        fields["token_count"] = store.tokens.count(str(m["content"]))
        names = ["id", "uid", *fields]
        con.execute(
            f"INSERT INTO long_term_memories({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
            [mid, uid, *fields.values()],
        )
        fts_put(con, "fts_memories", mid, str(m["content"]))
        touched.new_text.add(mid)
        return
    before = con.execute(
        "SELECT content, category, deleted_at FROM long_term_memories WHERE id = ?", (mid,)
    ).fetchone()
    assert before is not None
    if before[0] != m["content"]:
        fields["token_count"] = store.tokens.count(str(m["content"]))
    con.execute(
        f"UPDATE long_term_memories SET {', '.join(f'{k} = ?' for k in fields)} WHERE id = ?",
        [*fields.values(), mid],
    )
    if before[0] != m["content"]:
        fts_put(con, "fts_memories", mid, str(m["content"]))
        store.vectors.delete_memory(mid)
        touched.new_text.add(mid)
    elif before[1] != m["category"] or (before[2] is None) != (m["deleted_at"] is None):
        store.vectors.update_memory_meta(
            mid, category=str(m["category"]), deleted=m["deleted_at"] is not None
        )


def _superseded(store: Store, uids: Iterable[str]) -> None:
    """superseded_by points at another memory, which may have arrived later in the same changeset."""
    for uid in uids:
        target = store.scalar(f"SELECT superseded_by_uid FROM {MEMORIES.name} WHERE uid = ?", (uid,))
        store.con.execute(
            "UPDATE long_term_memories SET superseded_by = ? WHERE uid = ?",
            (_id_of(store, "long_term_memories", target), uid),
        )


# -- history and conflicts -------------------------------------------------------------------------------


def _history(store: Store, uids: Iterable[str]) -> None:
    con = store.con
    for uid in sorted(uids):
        h = _mirror(store, HISTORY.name, HISTORY.all_columns, uid)
        if h is None:
            con.execute("DELETE FROM memory_history WHERE uid = ?", (uid,))
            continue
        if _id_of(store, "memory_history", uid) is not None:  # the same row made on two devices: agree
            con.execute(
                "UPDATE memory_history SET event = ?, old = ?, new = ?, at = ? WHERE uid = ?",
                (h["event"], h["old"], h["new"], h["at"], uid),
            )
            continue
        memory_id = _id_of(store, "long_term_memories", h["memory_uid"])
        if memory_id is None:  # a memory purged before it reached this device: its history still reads
            memory_id = _new_memory_id(store)
        con.execute(
            "INSERT INTO memory_history(memory_id, event, old, new, at, uid, memory_uid) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (memory_id, h["event"], h["old"], h["new"], h["at"], uid, h["memory_uid"]),
        )


# The same pair filed as a conflict on two devices (two uids; the pair is unique here) becomes the
# conflict with the smaller uid, and its fixed values (store.sync.tables) are that conflict's: kept as
# they were here, a capture would send them as an edit of the smaller one, which devices that merged
# the two copies the other way round would not have.
_FOLLOW_SMALLER = ", ".join(
    f"{c} = CASE WHEN excluded.uid < uid THEN excluded.{c} ELSE {c} END"
    for c in CONFLICTS.columns
    if c not in CONFLICTS.lww and c not in ("new_uid", "old_uid")  # the pair: the same on both
)


def _conflicts(store: Store, uids: Iterable[str]) -> None:
    con = store.con
    for uid in sorted(uids):
        c = _mirror(store, CONFLICTS.name, CONFLICTS.all_columns, uid)
        cid = _id_of(store, "memory_conflicts", uid)
        new_id = _id_of(store, "long_term_memories", c["new_uid"]) if c else None
        old_id = _id_of(store, "long_term_memories", c["old_uid"]) if c else None
        if c is None or new_id is None or old_id is None:
            if cid is not None:
                con.execute("DELETE FROM memory_conflicts WHERE id = ?", (cid,))
            # A pair whose memory is not here (yet: a purged memory another device sends again) waits in
            # the mirror; capture leaves it alone, and every write-back tries it again.
            orphan = c is not None and cid is None
            con.execute(
                "INSERT INTO sync_state(key, value) SELECT ?, '1' WHERE ? ON CONFLICT(key) DO NOTHING",
                (f"orphan:{uid}", orphan),
            )
            if not orphan:
                con.execute("DELETE FROM sync_state WHERE key = ?", (f"orphan:{uid}",))
            continue
        con.execute("DELETE FROM sync_state WHERE key = ?", (f"orphan:{uid}",))
        values = [
            new_id,
            old_id,
            c["relation"],
            c["similarity"],
            c["reasons"],
            c["kind"],
            c["status"],
            c["resolution"],
            c["created_at"],
            c["resolved_at"],
        ]
        if cid is None:
            con.execute(
                "INSERT INTO memory_conflicts(new_id, old_id, relation, similarity, reasons, kind, status, "
                "resolution, created_at, resolved_at, uid) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                f"ON CONFLICT(new_id, old_id) DO UPDATE SET uid = min(uid, excluded.uid), {_FOLLOW_SMALLER}",
                [*values, uid],
            )
        else:
            con.execute(
                "UPDATE memory_conflicts SET new_id = ?, old_id = ?, relation = ?, similarity = ?, reasons = ?, "
                "kind = ?, status = ?, resolution = ?, created_at = ?, resolved_at = ? WHERE id = ?",
                [*values, cid],
            )


def write_back(store: Store, touched: Touched) -> None:
    """Make the canonical rows of everything touched match the mirror (inside the apply's transaction)."""
    _threads(store, touched.uids.get(THREADS.name, ()))
    _messages(store, touched)
    memory_uids = set(touched.uids.get(MEMORIES.name, ())) | set(touched.uids.get(PINS, ()))
    memory_uids |= set(touched.uids.get(ACCESS, ())) | touched.keep
    for uid in sorted(memory_uids):
        _memory(store, uid, touched)
    _superseded(store, sorted(memory_uids))
    _history(store, touched.uids.get(HISTORY.name, ()))
    waiting = {
        str(r[0])[len("orphan:") :]
        for r in store.con.execute("SELECT key FROM sync_state WHERE key LIKE 'orphan:%'")
    }
    _conflicts(store, set(touched.uids.get(CONFLICTS.name, ())) | waiting)
    _thread_totals(store, sorted(touched.grown_threads))


def history_note(store: Store, uid: str, memory_uid: str, event: str, old: Any, new: Any, at: float) -> None:
    """A history row written the same way on every device that makes it (a deterministic uid), so two
    devices noting the same merge end with one row."""
    if _id_of(store, "memory_history", uid) is not None:
        return
    memory_id = _id_of(store, "long_term_memories", memory_uid)
    if memory_id is None:
        return
    store.con.execute(
        "INSERT INTO memory_history(memory_id, event, old, new, at, uid, memory_uid) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            memory_id,
            event,
            None if old is None else json.dumps(old, sort_keys=True),
            None if new is None else json.dumps(new, sort_keys=True),
            at,
            uid,
            memory_uid,
        ),
    )
