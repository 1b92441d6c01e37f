"""Deleted threads and purged memories: what a file changes without having seen the delete is dropped.

Why this is needed (docs/design/decisions/2026-11-28-sync-delete-reimport.md): an imported thread's
uid comes from the export (`x:SOURCE/EXTERNAL_ID`), so a device that imports a conversation another
device has meanwhile deleted sends an insert of that very uid. A device without the row applies it
cleanly, one with the row lets the delete win: before this module, whether the thread survived
depended on the order the files arrived in, and devices disagreed. The same held for messages appended
and renames made elsewhere before the delete was seen, once a later import brought the thread back.

The rule, the same on every device whatever the order: a change to a thread (its row, a message added
to it or taken from it) in a file whose writer had not seen a delete of that thread is dropped (a device
that received the change before the delete loses it with the thread, so all agree); a file that had
seen it (its header's `deps`, or a later file of the deleting device) is applied, so importing the
export again after the delete brings the thread back everywhere. Each device remembers, per deleted
thread uid, the file of each device that deleted it (`tomb:UID` in `sync_state`: {device: seq}): the
files it applied, and its own, recorded when they are written.

Purged memories are remembered the same way (`purge:UID`), with a narrower drop: a memory's row (an
insert or an edit), or a conflict filed about it, in a file whose writer had not seen its purge is
dropped. A memory keeps its own rule (store.sync.merge): a purge that meets, on a device holding the
memory, a text, category or importance the purger had not seen keeps the memory there, and that device
sends it again whole in a file made after the purge, which every device applies. So whether the memory
survives never depends on which device heard of what first: a trash, a restore or an import of the same
memory made without seeing the purge is dropped everywhere (also where it arrived before the purge: it
goes with the row, or it is in the copy sent again, which every device gets), and an edit survives
everywhere through its author's copy. Pins and access counts are not dropped: they are sets and
counters that follow whichever row survives.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

import apsw

from store.sync.files import SyncFile
from store.sync.tables import CONFLICTS, MEMORIES, THREADS, WIRE

PREFIX = "tomb:"  # a deleted thread
PURGED = "purge:"  # a purged memory
# The table whose deletes are remembered -> the key prefix they are remembered under.
_KINDS = {THREADS.name: PREFIX, MEMORIES.name: PURGED}


def record(con: apsw.Connection, device: str, seq: int, changeset: bytes) -> None:
    """Remember the threads file `seq` of `device` deletes and the memories it purges (inside the
    caller's transaction)."""
    for change in apsw.Changeset.iter(changeset):
        prefix = _KINDS.get(change.name)
        if prefix is not None and change.op == "DELETE":
            uid = str(change.old[0])  # type: ignore[index]
            tomb = _tombs(con, [uid], prefix).get(uid, {})
            tomb[device] = max(seq, tomb.get(device, 0))
            con.execute(
                "INSERT INTO sync_state(key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (prefix + uid, json.dumps(tomb, sort_keys=True)),
            )


def forget(con: apsw.Connection) -> None:
    """Files of another folder are numbered anew: their deletes no longer say what a file has seen."""
    for prefix in _KINDS.values():
        con.execute("DELETE FROM sync_state WHERE key >= ? AND key < ?", (prefix, prefix[:-1] + ";"))


def _tombs(con: apsw.Connection, uids: Iterable[str], prefix: str = PREFIX) -> dict[str, dict[str, int]]:
    rows = con.execute(
        "SELECT key, value FROM sync_state WHERE key IN (SELECT ? || value FROM json_each(?))",
        (prefix, json.dumps(sorted(set(uids)))),
    )
    return {str(k)[len(prefix) :]: {str(d): int(s) for d, s in json.loads(str(v)).items()} for k, v in rows}


def _seen(f: SyncFile, device: str, seq: int) -> bool:
    """Whether the writer of `f` had seen file `seq` of `device` when it wrote `f`."""
    return (f.device == device and f.seq > seq) or f.deps.get(device, 0) >= seq


def _thread_of(change: apsw.TableChange) -> str | None:
    """The thread a change adds to, edits or removes messages from. A thread's own delete is not one:
    it always applies (a delete wins, and a device that had not seen another's delete may delete too)."""
    # An update carries its key in the old values (the new ones hold only what changed).
    row = change.new if change.op == "INSERT" else change.old
    if change.name == THREADS.name and change.op != "DELETE":
        return str(row[0])  # type: ignore[index]
    if change.name == WIRE:
        return str(row[1])  # type: ignore[index]
    return None


def _memories_of(change: apsw.TableChange) -> tuple[str, ...]:
    """The memories a change inserts or edits, or files a conflict between. A purge is not one: it
    always applies (a device that had not seen another's purge may purge too, and store.sync.merge
    decides what a purge keeps). A purge deletes the conflicts of its memory everywhere, so the same
    conflict filed by a device that had not seen the purge (its uid derives from the merge) goes too."""
    if change.name == MEMORIES.name and change.op != "DELETE":
        row = change.new if change.op == "INSERT" else change.old
        return (str(row[0]),)  # type: ignore[index]
    if change.name == CONFLICTS.name and change.op == "INSERT":
        row = change.new
        return tuple(str(row[CONFLICTS.index(c)]) for c in ("new_uid", "old_uid"))  # type: ignore[index]
    return ()


def _stale(con: apsw.Connection, f: SyncFile, uids: set[str], prefix: str) -> set[str]:
    """Which of `uids` a file deleted (under `prefix`) that `f`'s writer had not seen."""
    return {
        uid
        for uid, tomb in _tombs(con, uids, prefix).items()
        if not all(_seen(f, device, seq) for device, seq in tomb.items())
    }


def admit(con: apsw.Connection, f: SyncFile) -> bytes:
    """`f`'s changeset without its changes to threads deleted, and to memories purged, by a file its
    writer had not seen (the same bytes when there are none), inside the caller's transaction."""
    touched: set[str] = set()
    edited: set[str] = set()
    for change in apsw.Changeset.iter(f.changeset):  # a change is valid only while iterating
        if (thread := _thread_of(change)) is not None:
            touched.add(thread)
        edited.update(_memories_of(change))
    threads = _stale(con, f, touched, PREFIX)
    memories = _stale(con, f, edited, PURGED)
    if not threads and not memories:
        return f.changeset
    builder = apsw.ChangesetBuilder()
    try:
        builder.schema(con, "main")
        for change in apsw.Changeset.iter(f.changeset):
            if _thread_of(change) not in threads and not memories.intersection(_memories_of(change)):
                builder.add_change(change)
        return builder.output()
    finally:
        builder.close()
