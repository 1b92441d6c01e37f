"""Capturing local changes: whatever any process wrote to chat.db since the last capture, as a changeset.

How changes made by any process are found (docs/design/sync.md, "Capture"): not by recording each
writer (a Session lives on one connection, and the TUI, the MCP server, hooks and the CLI each have
their own), nor by triggers on every write path (an outbox row per message costs every import), but by
comparing, at sync time, the canonical rows with the mirror (store.sync.tables): the rows whose values
differ, and the rows present on one side only. The comparison is one indexed join per table (about 0.1 s
for 50,000 messages, bench/perf/sync.py); the mirror is then brought up to date under an `apsw.Session`,
which turns exactly those mirror writes into a changeset, with the old values a device receiving it
uses to tell a fast-forward from a concurrent edit. Messages, which never change, are added to the
changeset by hand (ChangesetBuilder) from the canonical rows, so the mirror need not hold their text.

Everything runs inside the caller's write transaction and the changeset is stored in `sync_pending` by
that same transaction: a kill leaves either the mirror and the pending changeset both updated, or
neither.
"""

from __future__ import annotations

import json
import secrets
import weakref
from collections.abc import Sequence
from typing import Any

import apsw

from store.records import now
from store.sync import state
from store.sync.tables import (
    ACCESS,
    CONFLICTS,
    MEMORIES,
    MESSAGES,
    PINS,
    RECORDED,
    ROW_SPECS,
    THREADS,
    WIRE,
    Spec,
)

BATCH = 5000  # rows per captured changeset: a bound on one transaction's work and one file's size


def _placeholders(n: int) -> str:
    return ", ".join("?" * n)


# `only`: a JSON array of uids (memory uids for pins and access rows) to limit a capture to, or None.
_ONLY = "(?2 IS NULL OR {col} IN (SELECT value FROM json_each(?2)))"


def _changed_rows(
    con: apsw.Connection, spec: Spec, limit: int, only: str | None = None
) -> list[tuple[Any, ...]]:
    """(projected row..., mirror row...) for rows new or different since the last capture."""
    cols = spec.columns
    differ = " OR ".join(f"p.{c} IS NOT s.{c}" for c in cols)
    mirror = ", ".join(f"s.{c}" for c in spec.all_columns)
    sql = (
        f"SELECT p.uid, {', '.join('p.' + c for c in cols)}, {mirror} FROM ({spec.projection}) p "
        f"LEFT JOIN {spec.name} s ON s.uid = p.uid WHERE (s.uid IS NULL OR {differ}) "
        f"AND {_ONLY.format(col='p.uid')} LIMIT ?1"
    )
    return [tuple(r) for r in con.execute(sql, (limit, only))]


def _gone_rows(con: apsw.Connection, spec: Spec, limit: int, only: str | None = None) -> list[str]:
    sql = (
        f"SELECT s.uid FROM {spec.name} s WHERE NOT EXISTS "
        f"(SELECT 1 FROM ({spec.projection}) p WHERE p.uid = s.uid) AND {_ONLY.format(col='s.uid')} "
        # a row waiting for what it refers to (store.sync.materialize) was not deleted here
        "AND NOT EXISTS (SELECT 1 FROM sync_state WHERE key = 'orphan:' || s.uid) LIMIT ?1"
    )
    return [str(r[0]) for r in con.execute(sql, (limit, only))]


MEMORY_FIXED = ("origin", "created_at")


def _keep_fixed(con: apsw.Connection, uid: str, changed: list[str], old: dict[str, Any]) -> list[str]:
    """A memory's origin and creation time change here only when it was purged and made again before a
    sync (a memory not typed by hand has its uid from its text): it stays the memory that was synced,
    with the values it was synced with. Sent as an edit, the new values would merge with another
    device's copy of the memory differently depending on the order they arrived in (two copies keep the
    smaller value; an edit replaces it where nothing else changed it). Returns the other changes."""
    fixed = [c for c in changed if c in MEMORY_FIXED]
    for c in fixed:
        con.execute(f"UPDATE long_term_memories SET {c} = ? WHERE uid = ?", (old[c], uid))
    return [c for c in changed if c not in fixed]


def conflicts_deleted(con: apsw.Connection, deleted: dict[str, set[str]]) -> tuple[dict[str, str], set[str]]:
    """Before a changeset is applied, from what it deletes (table -> uids): the conflicts it deletes that
    this device holds (uid -> their stamps here) and the memories it deletes. See `keep_conflicts`."""
    stamps = {
        str(uid): str(st or "{}")
        for uid, st in con.execute(
            f"SELECT uid, stamps FROM {CONFLICTS.name} WHERE uid IN (SELECT value FROM json_each(?))",
            (json.dumps(sorted(deleted.get(CONFLICTS.name, ()))),),
        )
    }
    return stamps, set(deleted.get(MEMORIES.name, ()))


def keep_conflicts(
    con: apsw.Connection, deleted: tuple[dict[str, str], set[str]], resurrected: dict[str, str]
) -> set[str]:
    """After a changeset is applied, before the write-back: the conflicts here whose two memories both
    stay are kept, and go out again whole with their stamps (as a memory kept against a purge does,
    store.sync.merge). Returns their uids, which the write-back must leave alone.

    A conflict is only ever deleted with one of its memories, so a delete of one whose memories both
    stay here was made by a device that had not seen them kept (it gets them back, and the conflict
    with them); and a conflict naming a memory kept here against a purge was deleted by the purge on
    the devices that applied it, or dropped there for having been filed without seeing it
    (store.sync.tombstones). Without this, a device could keep a conflict no other device has, or two
    devices that filed the same conflict (from the same two edits: the same uid) could merge their
    copies on one of them only (its creation time keeps the smaller value)."""
    stamps, gone_memories = deleted
    gone = gone_memories - set(resurrected)
    wanted = json.dumps(sorted(stamps))
    near = json.dumps(sorted(resurrected))
    rows = con.execute(
        f"SELECT c.uid, n.uid, o.uid, s.stamps FROM memory_conflicts c "
        "JOIN long_term_memories n ON n.id = c.new_id JOIN long_term_memories o ON o.id = c.old_id "
        f"LEFT JOIN {CONFLICTS.name} s ON s.uid = c.uid "
        "WHERE c.uid IN (SELECT value FROM json_each(?1)) "
        "OR (s.uid IS NOT NULL AND (n.uid IN (SELECT value FROM json_each(?2)) "
        "OR o.uid IN (SELECT value FROM json_each(?2))))",
        (wanted, near),
    ).fetchall()
    kept = set()
    for uid, new_uid, old_uid, mirrored in rows:
        if new_uid in gone or old_uid in gone:
            continue
        state.put(con, f"resurrect:{uid}", str(mirrored or stamps.get(str(uid)) or "{}"))
        con.execute(f"DELETE FROM {CONFLICTS.name} WHERE uid = ?", (uid,))
        kept.add(str(uid))
    return kept


def _capture_rows(con: apsw.Connection, spec: Spec, stamp: str, budget: int, only: str | None) -> int:
    n = len(spec.columns)
    done = 0
    for row in _changed_rows(con, spec, budget, only):
        uid, new, mirror = row[0], row[1 : 1 + n], row[1 + n :]
        if mirror[0] is None:  # a row the mirror has never seen (or one sent again whole: its old stamps)
            stamps = {c: stamp for c in spec.lww}
            kept = state.get(con, f"resurrect:{uid}") if spec.stamped else None
            if kept:
                stamps.update(json.loads(kept))
                con.execute("DELETE FROM sync_state WHERE key = ?", (f"resurrect:{uid}",))
            values = [uid, *new] + ([json.dumps(stamps, sort_keys=True)] if spec.stamped else [])
            con.execute(f"INSERT INTO {spec.name} VALUES ({_placeholders(len(values))})", values)
        else:
            old = mirror[1 : 1 + n]
            changed = [c for c, a, b in zip(spec.columns, new, old, strict=True) if a != b]
            if spec is MEMORIES:
                changed = _keep_fixed(con, uid, changed, dict(zip(spec.columns, old, strict=True)))
                if not changed:
                    done += 1
                    continue
            sets = [f"{c} = ?" for c in changed]
            args = [new[spec.columns.index(c)] for c in changed]
            if spec.stamped:
                stamps = json.loads(mirror[-1] or "{}")
                stamps.update({c: stamp for c in changed if c in spec.lww})
                sets.append("stamps = ?")
                args.append(json.dumps(stamps, sort_keys=True))
            con.execute(f"UPDATE {spec.name} SET {', '.join(sets)} WHERE uid = ?", [*args, uid])
        done += 1
    for uid in _gone_rows(con, spec, max(0, budget - done), only):
        con.execute(f"DELETE FROM {spec.name} WHERE uid = ?", (uid,))
        done += 1
    return done


def _capture_pins(con: apsw.Connection, budget: int, only: str | None) -> int:
    """A pinned memory with no pin in the mirror gets a new pin; an unpinned (or gone) one loses the pins
    the mirror has, and only those (a pin that arrives later from elsewhere stays)."""
    done = 0
    for (uid,) in con.execute(
        "SELECT m.uid FROM long_term_memories m WHERE m.pinned AND m.uid IS NOT NULL "
        f"AND NOT EXISTS (SELECT 1 FROM {PINS} p WHERE p.memory_uid = m.uid) AND {_ONLY.format(col='m.uid')} "
        "LIMIT ?1",
        (budget, only),
    ).fetchall():
        con.execute(f"INSERT INTO {PINS} VALUES (?, ?)", (uid, secrets.token_hex(8)))
        done += 1
    for uid, token in con.execute(
        f"SELECT p.memory_uid, p.token FROM {PINS} p WHERE NOT EXISTS "
        "(SELECT 1 FROM long_term_memories m WHERE m.uid = p.memory_uid AND m.pinned) "
        f"AND {_ONLY.format(col='p.memory_uid')} LIMIT ?1",
        (max(0, budget - done), only),
    ).fetchall():
        con.execute(f"DELETE FROM {PINS} WHERE memory_uid = ? AND token = ?", (uid, token))
        done += 1
    return done


def _keep_last_access(con: apsw.Connection, uid: str, last: Any, synced_last: Any) -> bool:
    """A memory's last access is the latest of every device's: it is behind the synced one here only when
    the memory was purged and made again before a sync (a memory not typed by hand has its uid from its
    text). It stays the synced memory's, written back to the row (as `_keep_fixed` does for its origin);
    sent as it is, other devices would keep the later one. Returns whether it was behind."""
    if synced_last is None or (last is not None and last >= synced_last):
        return False
    con.execute("UPDATE long_term_memories SET last_accessed = ? WHERE uid = ?", (synced_last, uid))
    return True


def _capture_access(con: apsw.Connection, device: str, budget: int, only: str | None) -> int:
    """What this device added to a memory's access count since the last capture goes to its own row."""
    done = 0
    rows = con.execute(
        # The sums per memory by correlated lookups on the rows' primary key (a grouped subquery made
        # SQLite build an automatic index at every capture).
        "SELECT uid, access_count, last_accessed, total, last, mine, mine_last FROM (SELECT m.uid, "
        "m.access_count, m.last_accessed, "
        f"(SELECT coalesce(sum(count), 0) FROM {ACCESS} a WHERE a.memory_uid = m.uid) AS total, "
        f"(SELECT max(last_accessed) FROM {ACCESS} a WHERE a.memory_uid = m.uid) AS last, "
        f"(SELECT count FROM {ACCESS} a WHERE a.memory_uid = m.uid AND a.device = ?3) AS mine, "
        f"(SELECT last_accessed FROM {ACCESS} a WHERE a.memory_uid = m.uid AND a.device = ?3) AS mine_last "
        f"FROM long_term_memories m WHERE m.uid IS NOT NULL AND {_ONLY.format(col='m.uid')}) "
        "WHERE access_count != total OR last_accessed IS NOT last LIMIT ?1",
        (budget, only, device),
    ).fetchall()
    for uid, count, last, total, synced_last, mine, mine_last in rows:
        if _keep_last_access(con, str(uid), last, synced_last):
            if count == total:
                continue  # only the last access was behind: nothing of this device's to send
            last = synced_last
        new_count = int(mine or 0) + int(count or 0) - int(total or 0)  # type: ignore[arg-type]
        new_last = max((x for x in (last, mine_last) if x is not None), default=None)
        con.execute(
            f"INSERT INTO {ACCESS} VALUES (?, ?, ?, ?) ON CONFLICT(memory_uid, device) DO UPDATE "
            "SET count = excluded.count, last_accessed = excluded.last_accessed",
            (uid, device, new_count, new_last),
        )
        done += 1
    for uid, dev in con.execute(
        f"SELECT a.memory_uid, a.device FROM {ACCESS} a WHERE NOT EXISTS "
        "(SELECT 1 FROM long_term_memories m WHERE m.uid = a.memory_uid) "
        f"AND {_ONLY.format(col='a.memory_uid')} LIMIT ?1",
        (max(0, budget - done), only),
    ).fetchall():
        con.execute(f"DELETE FROM {ACCESS} WHERE memory_uid = ? AND device = ?", (uid, dev))
        done += 1
    return done


def _new_messages(con: apsw.Connection, limit: int) -> list[tuple[Any, ...]]:
    return [
        tuple(r)
        for r in con.execute(
            "SELECT m.uid, t.uid, m.seq, m.role, m.content, m.external_id, m.created_at, m.metadata "
            "FROM messages m JOIN threads t ON t.id = m.thread_id WHERE m.uid IS NOT NULL AND NOT EXISTS "
            f"(SELECT 1 FROM {MESSAGES} s WHERE s.uid = m.uid) ORDER BY m.id LIMIT ?",
            (limit,),
        )
    ]


def _gone_messages(con: apsw.Connection, limit: int) -> list[tuple[Any, ...]]:
    return [
        tuple(r)
        for r in con.execute(
            f"SELECT s.uid, s.thread_uid, s.pos FROM {MESSAGES} s "
            "WHERE NOT EXISTS (SELECT 1 FROM messages m WHERE m.uid = s.uid) LIMIT ?",
            (limit,),
        )
    ]


def _capture_messages(
    con: apsw.Connection, budget: int
) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """New messages into the mirror (their position is their place in the thread here, when first
    captured) and gone ones out of it; returns the wire rows to insert and to delete."""
    inserts = _new_messages(con, budget)
    con.executemany(f"INSERT INTO {MESSAGES} VALUES (?, ?, ?)", [r[:3] for r in inserts])
    deletes = _gone_messages(con, max(0, budget - len(inserts)))
    con.executemany(f"DELETE FROM {MESSAGES} WHERE uid = ?", [(r[0],) for r in deletes])
    return inserts, [(*r, None, None, None, None, None) for r in deletes]


def _recreated(con: apsw.Connection, only: str | None) -> list[str]:
    """Threads deleted and imported again here since the last capture: their creation time or metadata
    changed (no local write path edits either) or messages the mirror has are gone while the thread is
    not (messages go only with their thread)."""
    return [
        str(r[0])
        for r in con.execute(
            f"SELECT t.uid FROM threads t JOIN {THREADS.name} s ON s.uid = t.uid "
            "WHERE (?1 IS NULL OR t.uid IN (SELECT value FROM json_each(?1))) "
            "AND (t.created_at IS NOT s.created_at OR t.metadata IS NOT s.metadata OR EXISTS "
            f"(SELECT 1 FROM {MESSAGES} sm "
            "WHERE sm.thread_uid = t.uid AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.uid = sm.uid)))",
            (only,),
        )
    ]


def capture_deletes_of_recreated(con: apsw.Connection, only: str | None = None) -> bytes:
    """A thread deleted and imported again since the last capture is sent as what it was, a delete, then
    an insert in a later file (the caller puts a barrier between them): as one edit it would neither
    win over changes other devices made meanwhile (store.sync.tombstones), nor undo them in the same way
    on every device (messages removed here and added there). Returns the delete's changeset (or b"")."""
    uids = _recreated(con, only)
    if not uids:
        return b""
    session = apsw.Session(con, "main")
    try:
        session.attach(THREADS.name)
        deletes: list[tuple[Any, ...]] = []
        for uid in uids:
            con.execute(f"DELETE FROM {THREADS.name} WHERE uid = ?", (uid,))
            rows = con.execute(f"SELECT uid, thread_uid, pos FROM {MESSAGES} WHERE thread_uid = ?", (uid,))
            deletes += [(*r, None, None, None, None, None) for r in rows.fetchall()]
            con.execute(f"DELETE FROM {MESSAGES} WHERE thread_uid = ?", (uid,))
        recorded = session.changeset()
    finally:
        session.close()
    return _with_messages(con, recorded, [], deletes)


def capture_batch(
    con: apsw.Connection, device: str, budget: int = BATCH, only: str | None = None
) -> tuple[bytes, int]:
    """One batch of local changes as a changeset (empty bytes when there is none) and the number of rows
    it looked at (the batch is full when that reaches `budget`), inside the caller's transaction; the
    mirror then matches what was captured."""
    stamp = state.next_stamp(con, device)
    session = apsw.Session(con, "main")
    try:
        for table in RECORDED:
            session.attach(table)
        done = 0
        for spec in ROW_SPECS:
            done += _capture_rows(con, spec, stamp, budget - done, only)
            if done >= budget:
                break
        if done < budget:
            done += _capture_pins(con, budget - done, only)
        if done < budget:
            done += _capture_access(con, device, budget - done, only)
        # Messages never change, so a limited capture (before an apply) has none to protect.
        full = only is None and done < budget
        inserts, deletes = _capture_messages(con, max(0, budget - done)) if full else ([], [])
        recorded = session.changeset()
    finally:
        session.close()
    done += len(inserts) + len(deletes)
    if not inserts and not deletes:
        return recorded, done
    return _with_messages(con, recorded, inserts, deletes), done


def _with_messages(
    con: apsw.Connection,
    recorded: bytes,
    inserts: Sequence[tuple[Any, ...]],
    deletes: Sequence[tuple[Any, ...]],
) -> bytes:
    builder = apsw.ChangesetBuilder()
    try:
        builder.schema(con, "main")
        if recorded:
            builder.add(recorded)
        for row in inserts:
            builder.add_insert(WIRE, False, row)
        for row in deletes:
            builder.add_delete(WIRE, False, row)
        return builder.output()
    finally:
        builder.close()


# connection -> (data_version, total_changes) when its last capture left the mirror in step
_IN_STEP: weakref.WeakKeyDictionary[apsw.Connection, tuple[int, int]] = weakref.WeakKeyDictionary()


def _fingerprint(con: apsw.Connection) -> tuple[int, int]:
    """Changes when anything was committed to chat.db since: by another connection (SQLite's
    data_version) or by this one (its total_changes)."""
    return int(con.execute("PRAGMA data_version").fetchall()[0][0]), con.total_changes()  # type: ignore[arg-type]


def mark_in_step(con: apsw.Connection) -> None:
    """The mirror matches the canonical rows now (after an apply that left nothing to send): the next
    capture on this connection may skip its comparison until something is written."""
    _IN_STEP[con] = _fingerprint(con)


def capture(con: apsw.Connection, device: str, *, budget: int = BATCH, only: set[str] | None = None) -> int:
    """Capture local changes into `sync_pending`, a batch per transaction (each a savepoint when the
    caller holds one). Returns the batches. `only`: just these rows (an apply protects the rows it is
    about to change from being overwritten: other processes may have written them since the sync's
    first capture). Free when nothing was written since the last full capture."""
    if only is None and _IN_STEP.get(con) == _fingerprint(con):
        return 0
    scope = None if only is None else json.dumps(sorted(only))
    batches = 0
    with con:
        deleted = capture_deletes_of_recreated(con, scope)
        if deleted:
            clock = int(state.get(con, "clock") or 0)
            # The empty changeset after it is a barrier: export never puts what follows in the same file.
            con.executemany(
                "INSERT INTO sync_pending(changeset, clock, at) VALUES (?, ?, ?)",
                [(deleted, clock, now()), (b"", clock, now())],
            )
            batches += 1
    while True:
        with con:
            changeset, done = capture_batch(con, device, budget, scope)
            if changeset:
                con.execute(
                    "INSERT INTO sync_pending(changeset, clock, at) VALUES (?, ?, ?)",
                    (changeset, int(state.get(con, "clock") or 0), now()),
                )
                batches += 1
        if done < budget:
            if only is None and not con.in_transaction:
                mark_in_step(con)
            return batches


def has_local_changes(con: apsw.Connection) -> bool:
    """Whether a capture would find anything (a read: for `sync status`)."""
    for spec in ROW_SPECS:
        if _changed_rows(con, spec, 1) or _gone_rows(con, spec, 1):
            return True
    return bool(_new_messages(con, 1) or _gone_messages(con, 1))
