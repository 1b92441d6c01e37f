"""A plain copy of chat.db is whole soon after writes stop, and when a process exits (issue 31, 2: while
a server ran, a copy of chat.db alone held none of 20 acknowledged memories, all in the WAL, and passed
integrity_check; a new chat.db copied that way had no tables)."""

from __future__ import annotations

import shutil
import subprocess
import sys
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
