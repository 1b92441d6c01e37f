"""What sync promises, one case at a time (issue 29): conflicts go to the queue, delete vs edit keeps the
edit, access counts add up, a pin on either side wins, wall clocks never decide, a file is applied once
and only when whole, a device offline for a long time catches up, other processes' writes are kept."""

from __future__ import annotations

import threading
from pathlib import Path
from unittest import mock

from store.records import now
from store.sync import engine, files, state
from store.sync.dump import canonical_dump
from store.truth.conflicts import list_conflicts, resolve_conflict
from tests.store.sync.sim import Device, Fleet


def _shared_memory(fleet: Fleet, text: str = "Prefers tea in the morning") -> list[int]:
    """One memory on every device; its local id on each."""
    a = fleet.devices[0]
    uid = a.store.add_memory(text, "preference", importance=5).memory.id
    fleet.converge()
    key = a.store.scalar("SELECT uid FROM long_term_memories WHERE id = ?", (uid,))
    return [
        int(d.store.scalar("SELECT id FROM long_term_memories WHERE uid = ?", (key,))) for d in fleet.devices
    ]


def test_two_edits_of_one_memory_go_to_the_conflicts_queue(fleet: Fleet) -> None:
    a, b, _ = fleet.devices
    ida, idb, _ = _shared_memory(fleet)
    a.store.edit_memory(ida, content="Prefers green tea in the morning")
    b.store.edit_memory(idb, content="Prefers black coffee in the morning")
    fleet.converge()
    fleet.assert_same()
    for d in fleet.devices:
        open_ = list_conflicts(d.store)
        assert len(open_) == 1
        c = open_[0]
        assert {c.new.content, c.old.content} == {
            "Prefers green tea in the morning",
            "Prefers black coffee in the morning",
        }
        assert d.store.scalar("SELECT kind FROM memory_conflicts WHERE id = ?", (c.id,)) == "sync"
    # Resolving it on one device resolves it everywhere.
    c = list_conflicts(b.store)[0]
    resolve_conflict(b.store, c.id, "merge")
    fleet.converge()
    fleet.assert_same()
    assert all(not list_conflicts(d.store) for d in fleet.devices)


def test_category_and_importance_conflicts_are_recorded(fleet: Fleet) -> None:
    a, b, _ = fleet.devices
    ida, idb, _ = _shared_memory(fleet)
    a.store.edit_memory(ida, importance=9)
    b.store.edit_memory(idb, importance=2)
    fleet.converge()
    fleet.assert_same()
    notes = [h for h in a.store.memory_history(ida) if h.event == "conflict"]
    assert len(notes) == 1 and notes[0].old and notes[0].old["importance"] in (9, 2)


def test_delete_against_edit_keeps_the_edit_and_records_it(fleet: Fleet) -> None:
    a, b, _ = fleet.devices
    ida, idb, _ = _shared_memory(fleet)
    a.store.delete_memory(ida)
    b.store.edit_memory(idb, content="Prefers tea, no sugar")
    fleet.converge()
    fleet.assert_same()
    m = a.store.get_memory(ida)
    assert m.deleted_at is None and m.content == "Prefers tea, no sugar"
    assert any(
        h.event == "restore" and h.new and "edit is kept" in str(h.new) for h in a.store.memory_history(ida)
    )


def test_a_purge_against_an_edit_keeps_the_edit(fleet: Fleet) -> None:
    a, b, _ = fleet.devices
    ida, idb, _ = _shared_memory(fleet)
    a.store.delete_memory(ida)
    fleet.converge()
    b.store.restore_memory(idb)
    b.store.edit_memory(idb, content="Prefers tea after all")
    a.store.purge_trash(older_than_days=0)
    fleet.converge()
    fleet.assert_same()
    assert "Prefers tea after all" in [m.content for m in a.store.list_memories()]


def test_a_purge_with_no_edit_elsewhere_removes_it_everywhere(fleet: Fleet) -> None:
    a = fleet.devices[0]
    ida, _, _ = _shared_memory(fleet)
    a.store.delete_memory(ida)
    a.store.purge_trash(older_than_days=0)
    fleet.converge()
    fleet.assert_same()
    assert all(d.store.scalar("SELECT count(*) FROM long_term_memories") == 0 for d in fleet.devices)


def test_a_memory_purged_and_made_again_before_a_sync_stays_one_memory(fleet: Fleet) -> None:
    """A memory not typed by hand has its id from its text: purged and suggested again on device 2
    before a sync, it is the memory that was synced (with its creation time), while device 0 makes it
    meanwhile too. Before, device 2 sent the new creation time as an edit, which merged with device 0's
    copy differently depending on the order they arrived in."""
    a, _, c = fleet.devices

    def add(d: Device) -> None:
        d.store.add_memory("Lives in Lisbon", "fact", importance=5, origin="import", embed=False)

    add(c)
    c.sync()
    created = c.store.scalar("SELECT created_at FROM long_term_memories")
    c.store.delete_memory(c.memory_ids()[0])
    c.store.purge_trash(older_than_days=0)
    add(a)
    add(c)
    fleet.converge()
    fleet.assert_same()
    assert [d.store.scalar("SELECT count(*) FROM long_term_memories") for d in fleet.devices] == [1, 1, 1]
    assert c.store.scalar("SELECT created_at FROM long_term_memories") == created


def test_a_memory_purged_and_made_again_before_a_sync_keeps_its_last_access(fleet: Fleet) -> None:
    """Used on device 1, then trashed, purged and made again on device 0 before a sync: the memory's
    last access is the latest of every device's, so device 0 keeps the synced one too. Before, device 0
    kept none while the others kept device 1's (found by the memory-heavy random run)."""
    a, b, _ = fleet.devices

    def add(d: Device) -> None:
        d.store.add_memory("Lives in Lisbon", "fact", importance=5, origin="import", embed=False)

    add(a)
    fleet.converge()
    b.store.touch_memories(b.memory_ids())
    a.store.delete_memory(a.memory_ids()[0])
    fleet.converge()
    a.store.purge_trash(older_than_days=0)
    add(a)
    fleet.converge()
    fleet.assert_same()
    assert a.store.scalar("SELECT last_accessed FROM long_term_memories") is not None


def test_access_counts_add_their_increments(fleet: Fleet) -> None:
    a, b, c = fleet.devices
    ids = _shared_memory(fleet)
    for _ in range(2):
        a.store.touch_memories([ids[0]])
    for _ in range(3):
        b.store.touch_memories([ids[1]])
    c.store.touch_memories([ids[2]])
    fleet.converge()
    fleet.assert_same()
    assert [d.store.get_memory(i).access_count for d, i in zip(fleet.devices, ids, strict=True)] == [6, 6, 6]


def test_a_pin_on_either_side_wins(fleet: Fleet) -> None:
    a, b, _ = fleet.devices
    ida, idb, _ = _shared_memory(fleet)
    a.store.pin_memory(ida, True)
    fleet.converge()
    # Device a unpins; device b, not knowing, unpins and pins it again: b's new pin survives a's unpin.
    a.store.pin_memory(ida, False)
    b.store.pin_memory(idb, False)
    b.sync()
    b.store.pin_memory(idb, True)
    fleet.converge()
    fleet.assert_same()
    assert a.store.get_memory(ida).pinned and b.store.get_memory(idb).pinned
    # An unpin that saw every pin is kept.
    a.store.pin_memory(ida, False)
    fleet.converge()
    assert not b.store.get_memory(idb).pinned


def test_wall_clocks_hours_apart_never_decide(fleet: Fleet) -> None:
    """Device a's clock runs 10 hours fast. Device b edits after it has seen a's edit: b's edit is the
    later one and wins everywhere, although its wall time is hours earlier."""
    a, b, _ = fleet.devices
    ida, idb, _ = _shared_memory(fleet)
    ahead = now() + 10 * 3600
    with (
        mock.patch("store.memories.now", return_value=ahead),
        mock.patch("store.sync.engine.now", return_value=ahead),
    ):
        a.store.edit_memory(ida, content="Moved to Porto")
        a.sync()
    b.sync()
    b.store.edit_memory(idb, content="Moved to Lisbon")
    fleet.converge()
    fleet.assert_same()
    assert a.store.get_memory(ida).content == "Moved to Lisbon"
    assert not list_conflicts(a.store)  # a sequence, not a conflict


def test_applying_a_file_twice_changes_nothing(fleet: Fleet) -> None:
    a, b, _ = fleet.devices
    _shared_memory(fleet)
    a.store.add_memory("Plays chess on Sundays", "fact")
    a.sync()
    b.sync()
    before = canonical_dump(b.store.con)
    dev = state.device(b.store.con)
    folder = Path(dev.folder)
    adev = state.device(a.store.con).id
    for _, path in sorted(files.numbered(folder / adev).items()):
        f = files.read(path, None)
        engine.apply_file(b.store, dev, f, engine.device_names(folder), engine.Touched())
    assert canonical_dump(b.store.con) == before


def test_an_incomplete_file_waits_until_whole(fleet: Fleet) -> None:
    a, b, _ = fleet.devices
    a.store.add_memory("Uses vim", "skill")
    a.sync()
    folder = Path(state.device(a.store.con).folder) / state.device(a.store.con).id
    path = files.numbered(folder)[max(files.numbered(folder))]
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])  # as a synced folder shows a file still arriving
    report = b.sync()
    assert not report.applied and any("not whole" in w for w in report.waiting)
    assert b.store.scalar("SELECT count(*) FROM long_term_memories") == 0
    path.write_bytes(data)
    assert b.sync().applied
    assert b.store.scalar("SELECT count(*) FROM long_term_memories") == 1


def test_a_device_offline_for_months_catches_up_and_keeps_its_edits(fleet: Fleet) -> None:
    a, b, c = fleet.devices
    ids = _shared_memory(fleet)
    c.store.edit_memory(ids[2], importance=8)  # made offline
    for i in range(25):  # many files from the others meanwhile, each depending on the last
        a.store.add_memory(f"fact number {i} about berlin", "fact")
        a.sync()
        b.sync()
        b.store.touch_memories([ids[1]])
    report = c.sync()
    assert len(report.applied) >= 25
    fleet.converge()
    fleet.assert_same()
    assert a.store.get_memory(ids[0]).importance == 8


def test_a_file_waits_for_the_files_it_depends_on(fleet: Fleet) -> None:
    a, b, c = fleet.devices
    a.store.add_memory("Learns Portuguese", "project")
    a.sync()
    b.sync()
    mid = int(b.store.scalar("SELECT id FROM long_term_memories"))
    b.store.edit_memory(mid, content="Learns Portuguese and Spanish")
    b.sync()
    # c sees b's file before a's has arrived: it waits for it instead of editing a memory it lacks.
    afolder = Path(state.device(a.store.con).folder) / state.device(a.store.con).id
    hidden = {p: p.read_bytes() for p in files.numbered(afolder).values()}
    for p in hidden:
        p.unlink()
    report = c.sync()
    assert not report.applied and any("waits for" in w for w in report.waiting)
    for p, data in hidden.items():
        p.write_bytes(data)
    fleet.converge()
    fleet.assert_same()
    assert [m.content for m in c.store.list_memories()] == ["Learns Portuguese and Spanish"]


def test_writes_by_another_process_during_a_sync_are_kept(fleet: Fleet) -> None:
    """Another process edits a memory after this sync's first capture and before a file that changes the
    same memory is applied: the edit is captured then, and merged, not overwritten."""
    a, b, _ = fleet.devices
    ida, idb, _ = _shared_memory(fleet)
    a.store.edit_memory(ida, importance=7)
    a.sync()
    from store import Store
    from tests.store.sync.sim import tokens

    other = Store(b.store.path, embedder=None, tokens=tokens())  # another connection: a TUI, an MCP server

    def meanwhile(_: str) -> None:
        other.edit_memory(idb, content="Prefers tea with lemon")

    engine.sync(b.store, None, embed=False, progress=meanwhile)
    other.close()
    fleet.converge()
    fleet.assert_same()
    m = a.store.get_memory(ida)
    assert (m.content, m.importance) == ("Prefers tea with lemon", 7)


def test_two_devices_syncing_at_the_same_moment(fleet: Fleet) -> None:
    a, b, _ = fleet.devices
    errors: list[BaseException] = []

    def work(d: Device, n: int) -> None:
        try:
            for i in range(n):
                d.store.add_memory(f"{d.name} thought {i}", "fact")
                d.sync()
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(d, 8)) for d in (a, b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    fleet.converge()
    fleet.assert_same()
    assert a.store.scalar("SELECT count(*) FROM long_term_memories") == 16


def test_thread_rename_archive_and_messages_travel(fleet: Fleet) -> None:
    a, b, c = fleet.devices
    fleet.op_import(a, 0, False)
    fleet.op_import(b, 0, True)  # the same conversation, a newer export with more messages
    fleet.converge()
    fleet.assert_same()
    tid = a.thread_ids()[0]
    assert a.store.get_thread(tid).message_count == 6
    a.store.rename_thread(tid, "Planning the trip")
    c.store.archive_thread(c.thread_ids()[0])
    fleet.converge()
    fleet.assert_same()
    t = b.store.get_thread(b.thread_ids()[0])
    assert t.title == "Planning the trip" and t.archived_at is not None
    # the keyword index was written for what arrived
    assert b.store.scalar("SELECT count(*) FROM fts_messages WHERE fts_messages MATCH 'topic0'") == 6
    assert b.store.check_indexes() == []


def test_vectors_and_summaries_are_rebuilt_for_what_arrived(fleet: Fleet) -> None:
    """Derived data never travels: the receiving device embeds the text that arrived (when a model is
    usable) and its keyword rows are written in the apply's transaction."""
    a, b, _ = fleet.devices
    a.store.add_memory("Plays the cello in an amateur orchestra", "fact")
    fleet.op_import(a, 2, True)
    a.sync()
    report = engine.sync(b.store, None, embed=True)
    assert report.embedded > 0
    assert b.store.scalar("SELECT count(*) FROM vec_memories") == 1
    assert b.store.scalar("SELECT count(*) FROM message_chunks") == 6
    assert b.store.check_indexes() == []
    found = b.store.search("cello orchestra", k=3, touch=False)
    assert found.mode == "hybrid" and found.results and "cello" in found.results[0].content


def test_watch_syncs_when_something_changed(fleet: Fleet) -> None:
    from store.sync.watch import watch

    a, b, _ = fleet.devices
    runs: list[engine.Report] = []
    stop = threading.Event()

    def go() -> None:
        from store import Store
        from tests.store.sync.sim import tokens

        own = Store(a.store.path, embedder=None, tokens=tokens())  # the watcher's own connection
        watch(own, None, interval=0.05, embed=False, on_sync=runs.append, should_stop=stop.is_set)
        own.close()

    t = threading.Thread(target=go)
    t.start()
    try:
        deadline = now() + 30
        while not runs and now() < deadline:
            stop.wait(0.05)
        a.store.add_memory("Written while the watcher runs", "fact")  # another connection writes
        while not any(r.sent for r in runs) and now() < deadline:
            stop.wait(0.05)
    finally:
        stop.set()
        t.join()
    assert any(r.sent for r in runs)
    b.sync()
    assert [m.content for m in b.store.list_memories()] == ["Written while the watcher runs"]
