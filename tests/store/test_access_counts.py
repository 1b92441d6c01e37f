"""Access counts never make an answer wait and are never lost (issue 28, 21); a clock set back moves no
time backwards (issue 31, 14): last_accessed keeps its later value, and a memory trashed then is not
dated into the past, where the next purge would remove it at once."""

from __future__ import annotations

import time
from pathlib import Path

import apsw
import pytest

from store import Store, access, memories, memory_rows

DAY = 86400.0


def _counts(db: Path) -> dict[int, int]:
    con = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return {int(i): int(n) for i, n in con.execute("SELECT id, access_count FROM long_term_memories")}  # type: ignore[call-overload]
    finally:
        con.close()


def test_counts_wait_for_a_writer_without_making_the_caller_wait(store: Store, db_path: Path) -> None:
    a = store.add_memory("I prefer restic for backups", "preference").memory.id
    b = store.add_memory("My NAS is a Synology", "fact").memory.id
    other = apsw.Connection(str(db_path))  # another process writing (an import)
    other.execute("BEGIN IMMEDIATE")
    try:
        t = time.monotonic()
        store.touch_memories([a, b])
        store.touch_memories([a])
        assert time.monotonic() - t < 0.5  # not the 15 s busy timeout
        assert store.access_counts.pending() == {a: 2, b: 1}
        assert _counts(db_path) == {a: 0, b: 0}
    finally:
        other.execute("ROLLBACK")
        other.close()
    deadline = time.monotonic() + 10
    while _counts(db_path) != {a: 2, b: 1}:  # the background writer gets the lock once it is free
        assert time.monotonic() < deadline, store.access_counts.pending()
        time.sleep(0.05)
    assert store.access_counts.pending() == {}


def test_close_writes_what_is_still_pending(
    store: Store, db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a = store.add_memory("I prefer restic for backups", "preference").memory.id
    monkeypatch.setattr(access, "RETRY", 3600.0)  # the background writer would not try again in time
    other = apsw.Connection(str(db_path))
    other.execute("BEGIN IMMEDIATE")
    store.touch_memories([a])
    other.execute("ROLLBACK")
    other.close()
    store.close()
    assert _counts(db_path) == {a: 1}


def test_a_free_lock_writes_the_count_at_once_in_one_statement(store: Store) -> None:
    ids = [store.add_memory(f"memory {i} about gardens", "fact").memory.id for i in range(3)]
    store.touch_memories([*ids, ids[0]])  # a repeated id counts once per call
    assert store.access_counts.pending() == {}
    assert [store.get_memory(i).access_count for i in ids] == [1, 1, 1]


def test_last_accessed_never_moves_backwards(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    m = store.add_memory("I prefer restic for backups", "preference").memory
    monkeypatch.setattr(access, "now", lambda: 2_000_000_000.0)
    store.touch_memories([m.id])
    monkeypatch.setattr(access, "now", lambda: 1_000_000_000.0)  # the clock was set back 30 years
    store.touch_memories([m.id])
    after = store.get_memory(m.id)
    assert (after.access_count, after.last_accessed) == (2, 2_000_000_000.0)


def test_a_memory_trashed_while_the_clock_is_back_is_not_purged_at_once(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    keep = store.add_memory("trashed under a wrong clock", "fact").memory
    real = time.time()
    wrong = real - 365 * DAY  # a year back
    monkeypatch.setattr(memory_rows, "now", lambda: wrong)
    monkeypatch.setattr(memories, "now", lambda: wrong)
    store.delete_memory(keep.id)
    monkeypatch.undo()  # the clock is right again
    assert store.purge_trash() == []  # 30 days of retention: it has been in the trash for seconds
    assert store.get_memory(keep.id).deleted_at is not None
    assert store.get_memory(keep.id).deleted_at >= real - 60  # type: ignore[operator]
