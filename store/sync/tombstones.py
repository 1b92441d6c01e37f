"""Deleted threads: a delete wins over every change to the thread made without having seen it.

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
"""

from __future__ import annotations

import json
from collections.abc import Iterable

import apsw

from store.sync.files import SyncFile
from store.sync.tables import THREADS, WIRE

PREFIX = "tomb:"


def record(con: apsw.Connection, device: str, seq: int, changeset: bytes) -> None:
    """Remember the threads file `seq` of `device` deletes (inside the caller's transaction)."""
    for change in apsw.Changeset.iter(changeset):
        if change.name == THREADS.name and change.op == "DELETE":
            uid = str(change.old[0])  # type: ignore[index]
            tomb = _tombs(con, [uid]).get(uid, {})
            tomb[device] = max(seq, tomb.get(device, 0))
            con.execute(
                "INSERT INTO sync_state(key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (PREFIX + uid, json.dumps(tomb, sort_keys=True)),
            )


def forget(con: apsw.Connection) -> None:
    """Files of another folder are numbered anew: their deletes no longer say what a file has seen."""
    con.execute("DELETE FROM sync_state WHERE key >= ? AND key < ?", (PREFIX, PREFIX[:-1] + ";"))


def _tombs(con: apsw.Connection, uids: Iterable[str]) -> dict[str, dict[str, int]]:
    rows = con.execute(
        "SELECT key, value FROM sync_state WHERE key IN (SELECT ? || value FROM json_each(?))",
        (PREFIX, json.dumps(sorted(set(uids)))),
    )
    return {str(k)[len(PREFIX) :]: {str(d): int(s) for d, s in json.loads(str(v)).items()} for k, v in rows}


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


def admit(con: apsw.Connection, f: SyncFile) -> bytes:
    """`f`'s changeset without its changes to threads deleted by a file its writer had not seen (the
    same bytes when there are none), inside the caller's transaction."""
    touched = {t for c in apsw.Changeset.iter(f.changeset) if (t := _thread_of(c)) is not None}
    stale = {
        uid
        for uid, tomb in _tombs(con, touched).items()
        if not all(_seen(f, device, seq) for device, seq in tomb.items())
    }
    if not stale:
        return f.changeset
    builder = apsw.ChangesetBuilder()
    try:
        builder.schema(con, "main")
        for change in apsw.Changeset.iter(f.changeset):
            if _thread_of(change) not in stale:
                builder.add_change(change)
        return builder.output()
    finally:
        builder.close()
