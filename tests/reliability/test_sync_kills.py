"""A kill at any moment of `memapp sync` leaves chat.db consistent, and the next sync completes (issue 29).

Device b has local changes to send and a backlog of device a's files to apply (threads with messages,
memories, edits, pins). `memapp sync` on b is SIGKILLed just before a seeded random one of the writes
SQLite makes (the project's counting VFS, tests/reliability/cli_runner.py: a kill that always lands
inside the work, at any machine speed), counted first on a copy of b and of the sync folder. After
each kill b must pass the crash checks (integrity, indexes paired with the rows); after the series a
sync without a kill must finish and both devices must hold the same rows. CI kills a few times; the
soak run many more.
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import apsw
import pytest

from embeddings import FakeEmbedder
from store import Store
from store.records import MessageIn, ThreadIn
from store.sync import engine
from store.sync.dump import canonical_dump
from tests.reliability.invariants import database_problems
from tests.reliability.processes import SOAK, Zygote, count_kills

pytestmark = pytest.mark.serial
KILLS = 60 if SOAK else 6


def _device_b_with_work(tmp: Path) -> tuple[Path, Path, Store]:
    folder = tmp / "folder"
    a = Store(tmp / "a.db", embedder=FakeEmbedder())
    engine.init(a, folder, "laptop")
    b = Store(tmp / "b.db", embedder=FakeEmbedder())
    engine.init(b, folder, "desktop")
    for k in range(12):
        messages = [
            MessageIn(
                role="user", content=f"thread {k} message {i} about rust and sqlite", external_id=f"{k}-{i}"
            )
            for i in range(15)
        ]
        a.write_thread(
            ThreadIn(source="jsonl", external_id=f"t{k}", title=f"Thread {k}", messages=messages), embed=False
        )
        m = a.add_memory(f"memory {k} from the laptop", "fact").memory
        if k % 3 == 0:
            a.pin_memory(m.id)
        engine.sync(a, None, embed=False)  # one file each: a backlog of twelve for b
    for k in range(8):
        b.add_memory(f"memory {k} from the desktop", "project")
    b.close()
    return tmp / "b.db", folder, a


def _counted_writes(zygote: Zygote, db: Path, folder: Path, tmp: Path) -> int:
    """Writes a whole sync of `db` makes from its current state, on copies (the probe syncs through a copy
    of the folder, so the real one never sees the probe's files)."""
    probe_dir = tmp / "probe"
    shutil.rmtree(probe_dir, ignore_errors=True)
    probe_dir.mkdir()
    for suffix in ("", "-wal"):
        if Path(f"{db}{suffix}").exists():
            shutil.copyfile(f"{db}{suffix}", probe_dir / f"b.db{suffix}")
    shutil.copytree(folder, probe_dir / "folder")
    con = apsw.Connection(str(probe_dir / "b.db"))
    with con:
        con.execute("UPDATE sync_state SET value = ? WHERE key = 'folder'", (str(probe_dir / "folder"),))
    con.close()
    job = zygote.run(
        ["--db", str(probe_dir / "b.db"), "sync", "--no-embed"], fake_embedder=True, count_writes=True
    )
    assert job.wait() == 0, job.stderr()
    return job.writes()


def test_kills_during_sync_leave_a_consistent_database(tmp_path: Path, figures: dict[str, int]) -> None:
    db, folder, a = _device_b_with_work(tmp_path)
    rng = random.Random(29)
    landed = 0
    with Zygote(tmp_path) as zygote:
        for _ in range(KILLS):
            total = _counted_writes(zygote, db, folder, tmp_path)
            if total == 0:
                break  # b is in step: nothing left to interrupt
            job = zygote.run(
                ["--db", str(db), "sync", "--no-embed"],
                fake_embedder=True,
                kill_at_write=rng.randint(1, total),
            )
            if job.wait() == -9:
                landed += 1
            b = Store(db, embedder=FakeEmbedder())
            assert database_problems(b) == []
            b.close()
        final = zygote.run(["--db", str(db), "sync", "--no-embed"], fake_embedder=True)
        assert final.wait() == 0, final.stderr()
    assert landed >= min(3, KILLS)
    count_kills(figures, "sync", landed)
    engine.sync(a, None, embed=False)
    b = Store(db, embedder=FakeEmbedder())
    engine.sync(b, None, embed=False)
    engine.sync(a, None, embed=False)
    assert canonical_dump(a.con) == canonical_dump(b.con)
    assert b.scalar("SELECT count(*) FROM messages") == 12 * 15
    assert b.scalar("SELECT count(*) FROM long_term_memories") == 20
    assert b.check_indexes() == []
    a.close()
    b.close()
