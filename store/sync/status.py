"""`memapp sync status`: the devices in the folder, when each last synced, and what is waiting.

Read only and cheap (the TUI's status line asks every few seconds): file names and the small JSON files
are read, never a changeset; whether a waiting file is whole is checked from its trailer only when
`check_files` is asked for (`memapp sync status` does; the TUI does not).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from store.records import iso
from store.sync import files, state
from store.sync.capture import has_local_changes
from store.sync.engine import device_names

if TYPE_CHECKING:
    from store.store import Store


@dataclass
class Peer:
    id: str
    name: str
    files: int  # numbered files it has written (that are here)
    applied: int  # of those, applied here
    incomplete: int  # not whole yet (still arriving)
    last_sync: float | None  # its own clock: shown, never compared
    has_ours: int  # how many of our files it has applied (from its state.json)

    def to_json(self) -> dict[str, Any]:
        return {
            "device": self.id,
            "name": self.name,
            "files": self.files,
            "applied_here": self.applied,
            "waiting": self.files - self.applied,
            "incomplete": self.incomplete,
            "last_sync": iso(self.last_sync),
            "has_our_files": self.has_ours,
        }


@dataclass
class Status:
    device: str
    name: str
    folder: str
    folder_ok: bool
    sent: int  # our files written
    pending_local: bool  # local changes not yet in a file
    encrypted: bool
    last_sync: float | None
    peers: list[Peer] = field(default_factory=list)

    @property
    def incoming(self) -> int:
        return sum(p.files - p.applied for p in self.peers)

    def to_json(self) -> dict[str, Any]:
        return {
            "device": self.device,
            "name": self.name,
            "folder": self.folder,
            "folder_available": self.folder_ok,
            "files_sent": self.sent,
            "local_changes_pending": self.pending_local,
            "encrypted": self.encrypted,
            "last_sync": iso(self.last_sync),
            "incoming": self.incoming,
            "devices": [p.to_json() for p in self.peers],
        }


def status(store: Store, *, check_files: bool = False, encrypted: bool = False) -> Status:
    con = store.con
    dev = state.device(con)
    folder = Path(dev.folder)
    ok = folder.is_dir()
    mine = files.read_json(folder / dev.id / "state.json") if ok else None
    pending = bool(store.scalar("SELECT count(*) FROM sync_pending")) or has_local_changes(con)
    out = Status(
        dev.id,
        dev.name,
        str(folder),
        ok,
        state.out_seq(con),
        pending,
        encrypted,
        float(mine["last_sync"]) if mine and mine.get("last_sync") else None,
    )
    if not ok:
        return out
    applied = state.applied(con)
    for other, name in device_names(folder).items():
        if other == dev.id:
            continue
        numbered = files.numbered(folder / other)
        done = applied.get(other, 0)
        incomplete = 0
        if check_files:
            for seq, path in numbered.items():
                if seq > done:
                    try:
                        files.whole(path.read_bytes())
                    except files.Incomplete:
                        incomplete += 1
        info = files.read_json(folder / other / "state.json") or {}
        theirs = info.get("applied") if isinstance(info.get("applied"), dict) else {}
        out.peers.append(
            Peer(
                other,
                name,
                max(numbered, default=0),
                done,
                incomplete,
                float(info["last_sync"]) if info.get("last_sync") else None,
                int(theirs.get(dev.id, 0)) if theirs else 0,
            )
        )
    return out


def brief(store: Store, at: float) -> str | None:
    """One short phrase for a status line ("synced 3 min ago · 2 to apply"), or None when this chat.db
    does not sync. Reads only sync_state, file names and the small JSON files (no changeset, no compare)."""
    dev = state.device_or_none(store.con)
    if dev is None:
        return None
    folder = Path(dev.folder)
    if not folder.is_dir():
        return "sync folder missing"
    mine = files.read_json(folder / dev.id / "state.json") or {}
    last = mine.get("last_sync")
    applied = state.applied(store.con)
    incoming = sum(
        max(0, max(files.numbered(folder / other), default=0) - applied.get(other, 0))
        for other in device_names(folder)
        if other != dev.id
    )
    parts = [f"synced {_ago(at - float(last))}" if last else "never synced"]
    if incoming:
        parts.append(f"{incoming} to apply")
    if store.scalar("SELECT count(*) FROM sync_pending"):
        parts.append("changes to send")
    return " · ".join(parts)


def _ago(seconds: float) -> str:
    if seconds < 90:
        return "just now"
    if seconds < 90 * 60:
        return f"{round(seconds / 60)} min ago"
    if seconds < 36 * 3600:
        return f"{round(seconds / 3600)} h ago"
    return f"{round(seconds / 86400)} days ago"
