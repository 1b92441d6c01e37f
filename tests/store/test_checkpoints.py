"""A plain copy of chat.db is whole soon after writes stop, and when a process exits (issue 31, 2: while
a server ran, a copy of chat.db alone held none of 20 acknowledged memories, all in the WAL, and passed
integrity_check; a new chat.db copied that way had no tables)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import apsw
import pytest

from store import Store, checkpoints
from tests.reliability.processes import REPO, runner_env

pytestmark = pytest.mark.serial  # timed: a checkpoint DELAY after the last commit


def _copy_alone(db: Path, tmp: Path) -> apsw.Connection:
    """chat.db copied without its -wal (what "back up by copying the file" gets), opened read-only."""
    copy = tmp / f"copy-{time.monotonic_ns()}.db"
    shutil.copyfile(db, copy)
    return apsw.Connection(str(copy), flags=apsw.SQLITE_OPEN_READONLY)


def _memories(con: apsw.Connection) -> int:
    try:
        return int(str(con.execute("SELECT count(*) FROM long_term_memories").fetchall()[0][0]))
    except apsw.SQLError:  # no such table: the copy has no schema at all
        return -1


def test_a_copy_taken_two_seconds_after_writes_holds_them(tmp_path: Path) -> None:
    db = tmp_path / "chat.db"
    store = Store(db, embedder=None)  # stays open, like a server: no last-connection checkpoint
    reader = apsw.Connection(str(db))  # another process's idle connection
    try:
        time.sleep(checkpoints.DELAY + 1.0)
        assert _memories(_copy_alone(db, tmp_path)) == 0  # a new chat.db: the copy has the tables
        for i in range(20):
            store.add_memory(f"acknowledged memory number {i}", "fact")
        time.sleep(checkpoints.DELAY + 1.0)
        copy = _copy_alone(db, tmp_path)
        assert copy.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert _memories(copy) == 20
    finally:
        reader.close()
        store.close()


def test_a_reader_holding_old_pages_delays_the_checkpoint_until_it_ends(tmp_path: Path) -> None:
    db = tmp_path / "chat.db"
    store = Store(db, embedder=None)
    reader = apsw.Connection(str(db))
    try:
        store.add_memory("before the snapshot", "fact")
        time.sleep(checkpoints.DELAY + 1.0)
        reader.execute("BEGIN")
        assert reader.execute("SELECT count(*) FROM long_term_memories").fetchall() == [(1,)]
        store.add_memory("after the snapshot", "fact")
        time.sleep(checkpoints.DELAY + 0.5)
        assert _memories(_copy_alone(db, tmp_path)) == 1  # the reader still uses the old page
        reader.execute("COMMIT")
        time.sleep(checkpoints.RETRY + checkpoints.DELAY + 0.5)
        assert _memories(_copy_alone(db, tmp_path)) == 2  # tried again once it could
    finally:
        reader.close()
        store.close()


EXIT_SCRIPT = """
import sys
import threading
from store import Store
s = Store(sys.argv[1], embedder=None)
for i in range(5):
    s.add_memory(f"written just before exit {i}", "fact")
"""  # no close(), no wait: the process ends right after its last commit


def test_a_process_that_exits_right_after_writing_leaves_chat_db_whole(tmp_path: Path) -> None:
    db = tmp_path / "chat.db"
    Store(db, embedder=None).close()
    reader = apsw.Connection(str(db))  # open elsewhere: the exiting process's close is not the last
    reader.execute("SELECT 1").fetchall()
    try:
        done = subprocess.run(
            [sys.executable, "-c", EXIT_SCRIPT, str(db)],
            cwd=REPO,
            env=runner_env(tmp_path),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        assert _memories(_copy_alone(db, tmp_path)) == 5
    finally:
        reader.close()


# -- threads: one per database being written, not one per database ever written ----------------------


def _checkpoint_threads() -> int:
    return sum(t.name == "memapp-checkpoint" for t in threading.enumerate())


def _template(tmp: Path) -> Path:
    """A migrated chat.db to copy: a Store per copy then costs a file copy, not the migrations."""
    template = tmp / "template.db"
    Store(template, embedder=None).close()
    return template


def test_closing_the_last_store_checkpoints_and_ends_its_thread(tmp_path: Path) -> None:
    db = tmp_path / "chat.db"
    before = _checkpoint_threads()
    store = Store(db, embedder=None)
    other = apsw.Connection(str(db))  # another process's idle connection: the close is not SQLite's last
    other.execute("SELECT 1").fetchall()
    try:
        store.add_memory("written just before the close", "fact")
        assert _checkpoint_threads() == before + 1
        store.close()
        assert _checkpoint_threads() == before  # at once, not a DELAY later
        assert _memories(_copy_alone(db, tmp_path)) == 1  # the close did the pending checkpoint itself
    finally:
        other.close()


def test_a_process_writing_200_stores_keeps_few_checkpoint_threads(tmp_path: Path) -> None:
    """A thread per database ever written once piled up (thousands in a soak run) until the process ran
    out of memory maps and crashed."""
    template = _template(tmp_path)
    before = _checkpoint_threads()
    most = 0
    for i in range(200):
        db = tmp_path / f"chat-{i}.db"
        shutil.copyfile(template, db)
        with Store(db, embedder=None) as store:
            store.add_memory(f"memory {i} of its own database", "fact")
            most = max(most, _checkpoint_threads() - before)
        os.truncate(db, 0)  # its pages go, its inode stays: each database is a new one, as in a real run
    assert most <= 2
    assert _checkpoint_threads() - before <= 1


def test_a_thread_ends_when_writes_stop_and_the_next_commit_starts_one(tmp_path: Path) -> None:
    db = tmp_path / "chat.db"
    before = _checkpoint_threads()
    with Store(db, embedder=None) as store:  # stays open, like a server
        store.add_memory("first", "fact")
        time.sleep(checkpoints.DELAY + checkpoints.IDLE + 1.0)
        assert _checkpoint_threads() == before  # idle: ended, and chat.db alone is whole
        assert _memories(_copy_alone(db, tmp_path)) == 1
        store.add_memory("second", "fact")
        assert _checkpoint_threads() == before + 1
        time.sleep(checkpoints.DELAY + 1.0)
        assert _memories(_copy_alone(db, tmp_path)) == 2


def test_a_commit_stands_when_no_checkpoint_thread_can_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At a thread limit the commit hook's thread start failed, and the exception turned every commit
    into a rollback."""
    db = tmp_path / "chat.db"

    def refuse(self: threading.Thread) -> None:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading.Thread, "start", refuse)
    with Store(db, embedder=None) as store:  # its migrations commit too
        store.add_memory("kept although no thread could start", "fact")
        assert store.scalar("SELECT count(*) FROM long_term_memories") == 1
    monkeypatch.undo()
    assert _memories(_copy_alone(db, tmp_path)) == 1  # the close did the checkpoint


NEAR_THE_MAP_LIMIT = """
import mmap, os, shutil, sys, threading
from pathlib import Path
from store import Store
tmp, n, headroom = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
template = tmp / "template.db"
Store(template, embedder=None).close()
def maps():
    with open("/proc/self/maps") as f:
        return sum(1 for _ in f)
held = [mmap.mmap(-1, 4096) for _ in range(int(open("/proc/sys/vm/max_map_count").read()) - headroom - maps())]
for i in range(n):
    db = tmp / f"chat-{i}.db"
    shutil.copyfile(template, db)
    with Store(db, embedder=None) as store:
        store.add_memory(f"memory {i}", "fact")
    os.truncate(db, 0)
print(sum(t.name == "memapp-checkpoint" for t in threading.enumerate()))
"""


@pytest.mark.skipif(not Path("/proc/sys/vm/max_map_count").exists(), reason="Linux's map limit")
def test_many_stores_near_the_memory_map_limit_all_succeed(tmp_path: Path) -> None:
    """What crashed `make soak`: each leaked thread's stack takes memory maps, and at vm.max_map_count
    every mmap fails (thread stacks, SQLite's -shm, malloc). Run with the budget nearly used up (shared
    mappings that cannot merge), 150 Stores must open, write and close, and the process exit cleanly."""
    done = subprocess.run(
        [sys.executable, "-c", NEAR_THE_MAP_LIMIT, str(tmp_path), "150", "250"],
        cwd=REPO,
        env=runner_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert int(done.stdout.split()[-1]) <= 1
