"""Simulated devices for the sync tests: several chat.db files syncing through one temp folder.

Each device is a real Store (apsw + sqlite-vec, the fake embedder) made from a template file migrated
once, so an example of the property test costs a file copy per device, not three migrations. `Fleet`
runs the operations a user does (imports, edits, pins, deletes, cleanups, conflict resolutions, thread
renames, archives and deletes, purges, uses) and records what must not be lost: every text an edit
wrote, unless the device it was made on replaced or purged that text itself (then the user saw it go).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from embeddings import FakeEmbedder, TokenCounter
from store import Store
from store.cleanup import Thresholds, apply_cleanup
from store.errors import StoreError
from store.records import MessageIn, ThreadIn, now
from store.sync import engine
from store.sync.dump import canonical_dump
from store.sync.files import Sealer
from store.truth.conflicts import list_conflicts, resolve_conflict

_TEMPLATE: Path | None = None
# Memory-backed when the machine has it: thousands of examples each fsync their files and databases,
# which on a disk costs most of an example's time; the code under test is the same.
SCRATCH = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
_TOKENS: TokenCounter | None = None


def tokens() -> TokenCounter:
    """One token counter for every simulated device (loading the BPE file is most of a Store's start)."""
    global _TOKENS
    if _TOKENS is None:
        _TOKENS = TokenCounter()
    return _TOKENS


def template() -> Path:
    """A migrated, empty chat.db to copy (made once per test process)."""
    global _TEMPLATE
    if _TEMPLATE is None or not _TEMPLATE.exists():
        folder = Path(tempfile.mkdtemp(prefix="memapp-sync-template-", dir=SCRATCH))
        _TEMPLATE = folder / "template.db"
        Store(_TEMPLATE, embedder=None).close()
    return _TEMPLATE


# Conversations every device may import, each in two versions (the second adds messages, as a newer
# export of the same account would).
THREADS = {
    f"conv{k}": [
        MessageIn(
            role="user" if i % 2 == 0 else "assistant",
            content=f"conversation {k} turn {i} about topic{k}",
            external_id=f"c{k}m{i}",
        )
        for i in range(6)
    ]
    for k in range(3)
}
WORDS = ["tea", "coffee", "rust", "python", "berlin", "lisbon", "piano", "chess", "sql", "vim"]
# Texts every device may be given by an import or an accepted suggestion: a memory not typed by hand has
# its uid from its text, so these make the same memory wherever (and whenever again) they are added.
KNOWN = [f"Known fact about {w}" for w in WORDS[:3]]


@dataclass
class Device:
    name: str
    store: Store
    sealer: Sealer | None = None
    applied: int = 0

    def sync(self) -> engine.Report:
        report = engine.sync(self.store, self.sealer, embed=False)
        self.applied += len(report.applied)
        return report

    def memory_ids(self, *, trash: bool | None = False) -> list[int]:
        where = (
            "" if trash is None else ("WHERE deleted_at IS NOT NULL" if trash else "WHERE deleted_at IS NULL")
        )
        return [
            int(r[0])
            for r in self.store.con.execute(f"SELECT id FROM long_term_memories {where} ORDER BY uid")
        ]

    def thread_ids(self) -> list[int]:
        return [int(r[0]) for r in self.store.con.execute("SELECT id FROM threads ORDER BY uid")]


@dataclass
class Fleet:
    root: Path
    devices: list[Device]
    written: set[str] = field(default_factory=set)  # texts edits wrote
    let_go: set[str] = field(default_factory=set)  # texts the device holding them replaced or purged
    counter: int = 0

    @classmethod
    def make(cls, n: int = 3, sealers: list[Sealer | None] | None = None, root: Path | None = None) -> Fleet:
        root = root or Path(tempfile.mkdtemp(prefix="memapp-sync-", dir=SCRATCH))
        folder = root / "folder"
        folder.mkdir()
        devices = []
        for i in range(n):
            path = root / f"dev{i}.db"
            shutil.copyfile(template(), path)
            store = Store(path, embedder=FakeEmbedder(), tokens=tokens())
            engine.init(store, folder, f"device-{i}")
            devices.append(Device(f"device-{i}", store, sealers[i] if sealers else None))
        return cls(root, devices)

    def close(self) -> None:
        for d in self.devices:
            d.store.close()
        shutil.rmtree(self.root, ignore_errors=True)

    def assert_same(self) -> None:
        """Every device holds the same rows (canonical dumps compared); the first difference is shown."""
        first, *rest = self.dumps()
        for i, other in enumerate(rest, 1):
            assert first == other, f"device-0 and device-{i} differ:\n{differences(first, other)}"

    def text(self) -> str:
        self.counter += 1
        return f"note {self.counter} {WORDS[self.counter % len(WORDS)]}"

    # -- operations (each picks its target by index among what the device has) -------------------------

    def op_import(self, d: Device, k: int, full: bool) -> None:
        name = f"conv{k % len(THREADS)}"
        messages = THREADS[name] if full else THREADS[name][:3]
        d.store.write_thread(
            ThreadIn(source="jsonl", external_id=name, title=f"Conversation {name}", messages=messages),
            embed=False,
        )

    def op_add(self, d: Device, imported: bool, low: bool) -> None:
        text = self.text()
        origin = "import" if imported else "manual"
        d.store.add_memory(text, "fact", importance=1 if low else 5, origin=origin, embed=False)

    def op_known(self, d: Device, k: int, low: bool) -> None:
        """One of a few texts, not typed by hand (a no-op where it is already there, live or in the
        trash; after a purge, the same memory made again)."""
        d.store.add_memory(
            KNOWN[k % len(KNOWN)], "fact", importance=1 if low else 5, origin="import", embed=False
        )

    def op_edit(self, d: Device, pick: int) -> None:
        ids = d.memory_ids()
        if not ids:
            return
        m = d.store.get_memory(ids[pick % len(ids)])
        text = self.text()
        d.store.edit_memory(m.id, content=text)
        self.written.add(text)
        self.let_go.add(m.content)

    def op_pin(self, d: Device, pick: int, pinned: bool) -> None:
        ids = d.memory_ids()
        if ids:
            d.store.pin_memory(ids[pick % len(ids)], pinned)

    def op_importance(self, d: Device, pick: int, value: int) -> None:
        ids = d.memory_ids()
        if ids:
            d.store.edit_memory(ids[pick % len(ids)], importance=value)

    def op_delete(self, d: Device, pick: int) -> None:
        ids = d.memory_ids()
        if ids:
            d.store.delete_memory(ids[pick % len(ids)])

    def op_restore(self, d: Device, pick: int) -> None:
        ids = d.memory_ids(trash=True)
        if ids:
            d.store.restore_memory(ids[pick % len(ids)])

    def op_purge(self, d: Device) -> None:
        for mid in d.memory_ids(trash=True):
            self.let_go.add(d.store.get_memory(mid).content)
        d.store.purge_trash(older_than_days=0)

    def op_cleanup(self, d: Device) -> None:
        apply_cleanup(d.store, Thresholds(min_access=2, max_importance=3, older_than_days=0), at=now() + 1)

    def op_touch(self, d: Device, pick: int) -> None:
        ids = d.memory_ids()
        if ids:
            d.store.touch_memories([ids[pick % len(ids)]])

    def op_resolve(self, d: Device, pick: int, keep: str) -> None:
        open_ = list_conflicts(d.store)
        if not open_:
            return
        c = open_[pick % len(open_)]
        if keep == "merge":
            self.let_go.add(c.old.content)
        with contextlib.suppress(StoreError):  # e.g. one of the pair is in the trash
            resolve_conflict(d.store, c.id, keep)

    def op_thread(self, d: Device, pick: int, action: str) -> None:
        ids = d.thread_ids()
        if not ids:
            return
        tid = ids[pick % len(ids)]
        if action == "rename":
            d.store.rename_thread(tid, self.text())
        elif action == "archive":
            d.store.archive_thread(tid, d.store.get_thread(tid).archived_at is None)
        else:
            d.store.delete_thread(tid)

    # -- checks -------------------------------------------------------------------------------------------

    def converge(self, rounds: int = 8) -> None:
        """Every device syncs, in turn, until none has anything left to send or apply."""
        for _ in range(rounds):
            moved = False
            for d in self.devices:
                r = d.sync()
                moved |= bool(r.sent or r.applied)
            if not moved:
                return
        raise AssertionError("the devices still exchange files after several rounds")

    @property
    def applied(self) -> int:
        return sum(d.applied for d in self.devices)

    def dumps(self) -> list[dict[str, list[tuple[object, ...]]]]:
        return [canonical_dump(d.store.con) for d in self.devices]

    def lost_edits(self) -> set[str]:
        """Edited texts no device still holds as a memory (live or in the trash) that were not let go."""
        lost = set()
        for d in self.devices:
            contents = {str(r[0]) for r in d.store.con.execute("SELECT content FROM long_term_memories")}
            lost |= {t for t in self.written - self.let_go if t not in contents}
        return lost


def differences(a: dict[str, list[tuple[object, ...]]], b: dict[str, list[tuple[object, ...]]]) -> str:
    out = []
    for table in a:
        left, right = set(a[table]), set(b[table])
        for row in sorted(left - right, key=repr)[:5]:
            out.append(f"{table} only in first: {row}")
        for row in sorted(right - left, key=repr)[:5]:
            out.append(f"{table} only in second: {row}")
    return "\n".join(out)
