"""`memapp sync`: send this device's changes to the folder, then apply every other device's, in order.

One sync, step by step (each step survives a kill at any moment; docs/design/sync.md, "Safety"):

1. Take this device's sync lock (a second `memapp sync` of the same chat.db waits).
2. Recover: a file of ours numbered past `out_seq` was written by a sync killed before it could record
   it; its header names the pending changesets it holds, which are then marked sent.
3. Capture local changes into `sync_pending` (store.sync.capture), one transaction per batch.
4. Export: pending changesets become the next numbered file (written whole, then recorded).
5. Apply, one file per transaction: the next file of each other device whose trailer vouches for it and
   whose dependencies (the files its writer had applied) are applied here. Order comes from each
   device's numbering and those dependencies, never from a wall clock. Each transaction first captures
   what other processes wrote meanwhile, applies the changeset to the mirror (store.sync.merge), writes
   the canonical rows back (store.sync.materialize), files conflicts, and records the file as applied:
   applying it again is impossible, and would change nothing.
6. Capture and export again (the conflicts and notes step 5 made), write state.json, then embed the new
   text and summarise grown threads outside any transaction.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import apsw

from store.errors import StoreError
from store.records import now
from store.sync import files, state, tombstones
from store.sync.capture import capture, conflicts_deleted, keep_conflicts
from store.sync.files import Incomplete, Sealer, SyncFile, SyncFileError
from store.sync.followups import Followup, apply_followups
from store.sync.materialize import Touched, write_back
from store.sync.merge import Handler, Stashed, changed_uids, merge_row
from store.sync.tables import (
    ACCESS,
    BY_NAME,
    CONFLICTS,
    MEMORIES,
    MESSAGES,
    PINS,
    RECORDED,
    ROW_SPECS,
    THREADS,
    WIRE,
)

if TYPE_CHECKING:
    from store.store import Store

FILE_BYTES = 32 * 1024**2  # pending changesets per file, at most (a bound on one apply's transaction)
LOCK_WAIT = 120.0
Progress = Callable[[str], None] | None


@dataclass
class Report:
    device: str
    sent: list[int] = field(default_factory=list)  # our files written by this sync
    applied: list[tuple[str, int, int]] = field(default_factory=list)  # (device, seq, changes)
    conflicts: int = 0
    waiting: list[str] = field(default_factory=list)  # why some files were not applied yet
    embedded: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "device": self.device,
            "sent": self.sent,
            "applied": [{"device": d, "seq": s, "changes": n} for d, s, n in self.applied],
            "conflicts": self.conflicts,
            "waiting": self.waiting,
            "embedded": self.embedded,
        }


# -- joining a folder ---------------------------------------------------------------------------------


def init(
    store: Store, folder: Path, name: str, *, key_file: str | None = None, new_device: bool = False
) -> state.Device:
    """This chat.db joins the sync folder `folder` as a device called `name` (idempotent: a second init
    with the same folder keeps the device). `new_device`: a copy of another device's chat.db (a restored
    backup) becomes a device of its own, which has seen the old one's files up to where the copy was."""
    con = store.con
    folder = folder.expanduser().resolve()
    if not name.strip():
        raise StoreError("the device name is empty")
    with con:
        current = state.device_or_none(con)
        moved = current is not None and Path(current.folder) != folder
        if current is not None and not new_device and not moved:
            state.put(con, "name", name.strip())
            dev = current.id
        else:
            if moved and not new_device:
                _forget_synced(con)  # a new folder has none of what was sent to the old one: send it all
            if current is not None:  # the copy has applied everything the old device had sent
                con.execute(
                    "INSERT INTO sync_applied(device, seq, at) VALUES (?, ?, ?) ON CONFLICT(device) DO UPDATE "
                    "SET seq = max(seq, excluded.seq)",
                    (current.id, state.out_seq(con), now()),
                )
            dev = state.new_device_id()
            for key, value in (("device", dev), ("name", name.strip()), ("folder", str(folder))):
                state.put(con, key, value)
            state.put(con, "nonce", os.urandom(8).hex())
            state.put(con, "out_seq", 0)
        if key_file is not None:
            state.put(con, "key_file", str(Path(key_file).expanduser().resolve()) if key_file else "")
    (folder / dev).mkdir(parents=True, exist_ok=True, mode=0o700)
    files.write_json(folder / dev / "device.json", {"device": dev, "name": name.strip(), "format": 1})
    return state.device(con)


def _forget_synced(con: apsw.Connection) -> None:
    """Empty the mirror and the ledgers: the next capture sends every row again (devices that had them
    merge the copies into what they hold: the same uids)."""
    for table in (*(s.name for s in ROW_SPECS), MESSAGES, PINS, ACCESS, "sync_applied", "sync_pending"):
        con.execute(f"DELETE FROM {table}")
    tombstones.forget(con)


# -- one sync -------------------------------------------------------------------------------------------


@contextlib.contextmanager
def _lock(db_path: Path) -> Iterator[None]:
    """One sync at a time per chat.db (a `--watch` and a manual `sync`): an flock beside the database."""
    try:
        import fcntl
    except ImportError:  # Windows: no second sync is prevented; the numbered files refuse to be replaced
        yield
        return
    if str(db_path) == ":memory:":
        yield
        return
    path = db_path.with_name(db_path.name + "-synclock")
    fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o600)
    try:
        deadline = time.monotonic() + LOCK_WAIT
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise StoreError("another `memapp sync` of this database is still running") from None
                time.sleep(0.2)
        yield
    finally:
        os.close(fd)


def sync(store: Store, sealer: Sealer | None, *, embed: bool = True, progress: Progress = None) -> Report:
    dev = state.device(store.con)
    folder = Path(dev.folder)
    if not folder.is_dir():
        raise StoreError(f"the sync folder {folder} is not there (not mounted, or moved?)")
    mine = folder / dev.id
    mine.mkdir(exist_ok=True, mode=0o700)
    report = Report(dev.id)
    touched = Touched()
    with _lock(store.path):
        _recover(store, dev, mine, sealer)
        capture(store.con, dev.id)
        report.sent += export(store, dev, mine, sealer)
        _apply_ready(store, dev, folder, sealer, report, touched, progress)
        capture(store.con, dev.id)
        report.sent += export(store, dev, mine, sealer)
        if report.sent or report.applied or not (mine / "state.json").exists():
            _write_state(store, dev, mine)
    if embed:
        report.embedded = embed_new(store, touched)
    return report


def _recover(store: Store, dev: state.Device, mine: Path, sealer: Sealer | None) -> None:
    con = store.con
    for seq, path in sorted(files.numbered(mine).items()):
        if seq <= state.out_seq(con):
            continue
        f = files.read(path, sealer)
        if f.header.get("db") != dev.db_nonce:
            raise StoreError(
                f"{path} was written by another chat.db that syncs as this device ({dev.name}): a copy of "
                "this database is syncing too. On the copy, run `memapp sync init PATH --new-device`"
            )
        last = int(f.header.get("pending_last", 0))
        with con:
            con.execute("DELETE FROM sync_pending WHERE id <= ?", (last,))
            state.put(con, "out_seq", seq)
            tombstones.record(con, dev.id, seq, f.changeset)


def export(store: Store, dev: state.Device, mine: Path, sealer: Sealer | None) -> list[int]:
    """Pending changesets into numbered files. Returns the numbers written."""
    con = store.con
    written: list[int] = []
    while True:
        rows: list[tuple[int, bytes, int]] = []
        size = 0
        for pid, blob, clock in con.execute("SELECT id, changeset, clock FROM sync_pending ORDER BY id"):
            if rows and (not blob or size + len(blob) > FILE_BYTES):
                break  # an empty changeset is a barrier (store.sync.capture): what follows, in a later file
            rows.append((int(pid), bytes(blob), int(clock)))
            size += len(blob)
        if not rows:
            return written
        changeset = _combine([r[1] for r in rows if r[1]])
        last = rows[-1][0]
        if not changeset:  # the pending changes cancelled out
            with con:
                con.execute("DELETE FROM sync_pending WHERE id <= ?", (last,))
            continue
        seq = state.out_seq(con) + 1
        header = {
            "format": files.FORMAT_VERSION,
            "device": dev.id,
            "seq": seq,
            "deps": state.applied(con),
            "clock": max(r[2] for r in rows),
            "db": dev.db_nonce,
            "pending_last": last,
            "written": now(),
        }
        files.write(mine, seq, files.encode(header, changeset, sealer))
        with con:
            con.execute("DELETE FROM sync_pending WHERE id <= ?", (last,))
            state.put(con, "out_seq", seq)
            tombstones.record(con, dev.id, seq, changeset)
        written.append(seq)


def _combine(changesets: list[bytes]) -> bytes:
    if len(changesets) <= 1:
        return changesets[0] if changesets else b""
    builder = apsw.ChangesetBuilder()
    try:
        for cs in changesets:
            builder.add(cs)
        return builder.output()
    finally:
        builder.close()


# -- applying -------------------------------------------------------------------------------------------


def device_names(folder: Path) -> dict[str, str]:
    out = {}
    for entry in sorted(folder.iterdir()) if folder.is_dir() else []:
        info = files.read_json(entry / "device.json") if entry.is_dir() else None
        if info is not None and info.get("device") == entry.name:
            out[entry.name] = str(info.get("name") or entry.name)
    return out


def _apply_ready(
    store: Store,
    dev: state.Device,
    folder: Path,
    sealer: Sealer | None,
    report: Report,
    touched: Touched,
    progress: Progress,
) -> None:
    names = device_names(folder)
    progressed = True
    while progressed:
        progressed = False
        report.waiting = []
        done = state.applied(store.con)
        for other in sorted(names):
            if other == dev.id:
                continue
            seq = done.get(other, 0) + 1
            path = files.numbered(folder / other).get(seq)
            if path is None:
                continue
            try:
                f = files.read(path, sealer)
            except Incomplete:
                report.waiting.append(f"{names[other]}: file {seq} is not whole yet")
                continue
            missing = {d: s for d, s in f.deps.items() if d != dev.id and done.get(d, 0) < s}
            if missing:
                who = ", ".join(f"{names.get(d, d)} file {s}" for d, s in sorted(missing.items()))
                report.waiting.append(f"{names[other]}: file {seq} waits for {who}")
                continue
            if f.device != other or f.seq != seq:
                raise SyncFileError(f"{path} says it is file {f.seq} of {f.device}: it was moved or renamed")
            if progress is not None:
                progress(f"applying {names[other]} file {seq}")
            changes, conflicts = _apply_after_local(store, dev, folder / dev.id, sealer, f, names, touched)
            report.applied.append((other, seq, changes))
            report.conflicts += conflicts
            progressed = True


class _LocalFirst(Exception):
    """Local changes to the rows a file touches appeared inside its transaction: they are sent first."""


def _apply_after_local(
    store: Store,
    dev: state.Device,
    mine: Path,
    sealer: Sealer | None,
    f: SyncFile,
    names: dict[str, str],
    touched: Touched,
) -> tuple[int, int]:
    """What other processes wrote to the rows `f` touches since this sync began is captured and sent
    before `f` is applied: a file of ours then never carries, after `f`, a change made before it (the
    other devices would apply the two in the other order than we did)."""
    only = {u for t, found in changed_uids(f.changeset).items() if t != WIRE for u in found}
    for _ in range(5):
        capture(store.con, dev.id, only=only)
        export(store, dev, mine, sealer)
        try:
            return apply_file(store, dev, f, names, touched, local_first=True)
        except _LocalFirst:
            continue
    raise StoreError("chat.db kept changing under the sync (another process writes to it): run it again")


def apply_file(
    store: Store,
    dev: state.Device,
    f: SyncFile,
    names: dict[str, str],
    touched: Touched,
    *,
    local_first: bool = False,
) -> tuple[int, int]:
    """Apply one file in one transaction. Returns (changes in it, conflicts filed). `local_first`: if a
    local change to the rows it touches is found inside the transaction, roll back (_LocalFirst)."""
    con = store.con
    with con:
        # Changes to threads deleted, and memories purged, by a file the sender had not seen are dropped.
        changeset = tombstones.admit(con, f)
        tombstones.record(con, f.device, f.seq, changeset)
        gone: dict[str, set[str]] = {}
        uids = changed_uids(changeset, gone)
        # What other processes wrote to these rows since this sync began, before anything overwrites them.
        capture(con, dev.id, only={u for t, found in uids.items() if t != WIRE for u in found})
        if local_first and store.scalar("SELECT count(*) FROM sync_pending"):
            raise _LocalFirst
        state.observe(con, int(f.header.get("clock", 0)))
        deleted = conflicts_deleted(con, gone)
        handler = Handler()
        apsw.Changeset.apply(changeset, con, filter=lambda t: t in RECORDED, conflict=handler.conflict)
        for table, found in uids.items():
            for uid in found:
                touched.add(table, uid)
        local = Touched(uids={t: set(u) for t, u in uids.items()}, keep=set(handler.resurrect))
        for uid, stamps in handler.resurrect.items():  # the next capture sends it whole, with these stamps
            state.put(con, f"resurrect:{uid}", stamps)
        _messages(con, changeset, local)
        followups = _merge(con, handler.stashed)
        local.uids.get(CONFLICTS.name, set()).difference_update(
            keep_conflicts(con, deleted, handler.resurrect)
        )
        write_back(store, local)
        conflicts = apply_followups(store, followups, names, local)
        con.execute(
            "INSERT INTO sync_applied(device, seq, at) VALUES (?, ?, ?) ON CONFLICT(device) DO UPDATE "
            "SET seq = excluded.seq, at = excluded.at",
            (f.device, f.seq, now()),
        )
    touched.new_text |= local.new_text
    touched.new_messages |= local.new_messages
    touched.grown_threads |= local.grown_threads
    return sum(len(u) for u in uids.values()), conflicts


def _messages(con: apsw.Connection, changeset: bytes, touched: Touched) -> None:
    """Messages never change: an insert adds one this device lacks (unless its thread is gone here), a
    delete removes it."""
    for change in apsw.Changeset.iter(changeset):
        if change.name != WIRE:
            continue
        if change.op == "INSERT":
            row = tuple(change.new)  # type: ignore[arg-type]
            uid, thread_uid, pos = str(row[0]), str(row[1]), int(row[2])  # type: ignore[arg-type]
            if con.execute(f"SELECT 1 FROM {MESSAGES} WHERE uid = ?", (uid,)).fetchone():
                continue
            if con.execute(f"SELECT 1 FROM {THREADS.name} WHERE uid = ?", (thread_uid,)).fetchone() is None:
                continue
            con.execute(f"INSERT INTO {MESSAGES} VALUES (?, ?, ?)", (uid, thread_uid, pos))
            touched.wire_inserts.append(row)
        elif change.op == "DELETE":
            uid = str(change.old[0])  # type: ignore[index]
            con.execute(f"DELETE FROM {MESSAGES} WHERE uid = ?", (uid,))
            touched.wire_deletes.append(uid)


def _merge(con: apsw.Connection, stashed: list[Stashed]) -> list[Followup]:
    followups: list[Followup] = []
    for st in stashed:
        spec = BY_NAME[st.table]
        if st.local is None:
            continue
        # Read again: an earlier merge in this file may have changed the row since the handler saw it.
        uid = st.local[0]
        current = con.execute(f"SELECT * FROM {spec.name} WHERE uid = ?", (uid,)).fetchone()
        if current is None:
            continue
        merged = merge_row(spec, Stashed(st.table, st.op, st.old, st.new, tuple(current)))
        names = spec.all_columns[1:]
        con.execute(
            f"UPDATE {spec.name} SET {', '.join(f'{c} = ?' for c in names)} WHERE uid = ?",
            [*merged.row[1:], uid],
        )
        if spec is MEMORIES and (merged.losers or merged.restored):
            followups.append(
                Followup(str(uid), merged.losers, merged.restored, merged.stamps.get("deleted_at", ""))
            )
    return followups


# -- after the transactions -------------------------------------------------------------------------------


def embed_new(store: Store, touched: Touched) -> int:
    """Vectors for the text a sync brought (when a model is usable; `memapp embed` does it later
    otherwise) and summaries for the threads that grew, as an import does."""
    if store.vector_problem is not None:
        return 0
    done = 0
    ids = sorted(touched.new_text)
    for i in range(0, len(ids), 256):
        memories = [
            store.get_memory(m)
            for m in ids[i : i + 256]
            if store.scalar("SELECT 1 FROM long_term_memories WHERE id = ?", (m,))
        ]
        done += store.embed_memories(memories)
    mids = sorted(touched.new_messages)
    for i in range(0, len(mids), 256):
        batch = [
            store.get_message(m)
            for m in mids[i : i + 256]
            if store.scalar("SELECT 1 FROM messages WHERE id = ?", (m,))
        ]
        done += store.embed_messages([m for m in batch if m.content.strip()])
    from store.extract.summaries import maybe_summarize

    for tid in sorted(touched.grown_threads):
        if store.scalar("SELECT 1 FROM threads WHERE id = ?", (tid,)):
            maybe_summarize(store, tid)
    return done


def _write_state(store: Store, dev: state.Device, mine: Path) -> None:
    files.write_json(
        mine / "state.json",
        {
            "device": dev.id,
            "last_sync": now(),
            "out_seq": state.out_seq(store.con),
            "applied": state.applied(store.con),
        },
    )
