"""Crash safety of the files memapp writes beside chat.db (issue 20, part 1): `export -o FILE` and `backup`.

Each is killed with SIGKILL at seeded points of progress (an export once its partial file has reached a
random share of the full export's size; a backup just before a random one of the writes SQLite makes
into the copy, cli_runner.py), and after every kill: the name the user chose holds the previous export
(or nothing, for a backup), chat.db is whole, and the next run leaves exactly the finished file in the
folder: the killed run's temporary file is swept (store/files.py), none is left where a user would find it.
"""

from __future__ import annotations

import json
import os
import random
import time
from pathlib import Path

import pytest

from store import Store
from store.files import PARTIAL_PREFIX
from store.importing.pipeline import import_paths
from tests.reliability.generated_exports import conversation_texts, write_generic
from tests.reliability.invariants import database_problems
from tests.reliability.processes import Zygote, count_kills

SEED = int(os.environ.get("MEMAPP_CRASH_SEED", "8008"))

pytestmark = [pytest.mark.soak, pytest.mark.serial]


def _db(tmp: Path, threads: int) -> Path:
    db = tmp / "chat.db"
    export = write_generic(tmp / "threads.json", conversation_texts(SEED + 20, threads, 20))
    with Store(db, embedder=None) as store:
        assert import_paths(store, [export], embed=False, summarize=False).ok
    return db


def _partials(folder: Path) -> list[Path]:
    return [p for p in folder.iterdir() if p.name.startswith(PARTIAL_PREFIX)]


def _kill_at_size(zygote: Zygote, args: list[str], folder: Path, size: int, timeout: float = 120) -> bool:
    """Run `args`; SIGKILL it once its partial file in `folder` holds `size` bytes. True if it landed."""
    job = zygote.run(args)
    deadline = time.monotonic() + timeout
    while job.poll() is None and time.monotonic() < deadline:
        for p in _partials(folder):
            try:
                grown = p.stat().st_size >= size
            except FileNotFoundError:
                continue
            if grown:
                return job.kill_after(0.0)
        time.sleep(0.0005)
    assert job.wait() == 0, job.stderr()
    return False


def test_a_killed_export_keeps_the_previous_one_and_the_next_run_cleans_up(
    tmp_path: Path, soak: bool, figures: dict[str, int]
) -> None:
    db = _db(tmp_path, 1500 if soak else 600)
    folder = tmp_path / "exports"
    folder.mkdir()
    out = folder / "export.json"
    args = ["--db", str(db), "export", "-o", str(out)]
    rng = random.Random(SEED + 21)
    kills = 12 if soak else 4
    landed = 0
    with Zygote(tmp_path) as zygote:
        first = zygote.run(args)
        assert first.wait() == 0, first.stderr()
        full = out.stat().st_size
        previous = out.read_bytes()
        for _ in range(kills):
            if _kill_at_size(zygote, args, folder, int(rng.uniform(0.02, 0.9) * full)):
                landed += 1
                assert out.read_bytes() == previous  # the name still holds the previous export, whole
                assert _partials(folder), "the killed export's temporary file was not where it wrote"
            else:  # it finished first: a new whole export is the previous one from now on
                previous = out.read_bytes()
            with Store(db, embedder=None) as store:
                assert database_problems(store) == []
        last = zygote.run(args, tag="finish")
        assert last.wait() == 0, last.stderr()
    assert sorted(p.name for p in folder.iterdir()) == ["export.json"]  # the partials were swept
    assert len(json.loads(out.read_text())["tables"]["threads"]) == (1500 if soak else 600)
    assert landed >= kills // 2, f"only {landed} of {kills} kills hit a running export"
    count_kills(figures, "export", landed)


def test_a_killed_backup_leaves_no_file_under_the_name_and_the_next_run_cleans_up(
    tmp_path: Path, soak: bool, figures: dict[str, int]
) -> None:
    db = _db(tmp_path, 300 if soak else 100)
    folder = tmp_path / "backups"
    folder.mkdir()
    dest = folder / "chat-copy.db"
    rng = random.Random(SEED + 22)
    kills = 12 if soak else 4
    landed = 0
    with Zygote(tmp_path) as zygote:
        probe = zygote.run(["--db", str(db), "backup", str(tmp_path / "probe.db")], count_writes=True)
        assert probe.wait() == 0, probe.stderr()
        total = probe.writes()
        for _ in range(kills):
            job = zygote.run(["--db", str(db), "backup", str(dest)], kill_at_write=rng.randint(1, total))
            landed += job.wait() == -9
            assert not dest.exists()  # never a half copy under the name (it would open as a valid db)
            with Store(db, embedder=None) as store:
                assert database_problems(store) == []
        last = zygote.run(["--db", str(db), "backup", str(dest)], tag="finish")
        assert last.wait() == 0, last.stderr()
    assert sorted(p.name for p in folder.iterdir()) == ["chat-copy.db"]  # the partials were swept
    with Store(dest, embedder=None) as copy:
        assert copy.count_threads() == (300 if soak else 100)
        assert database_problems(copy) == []
    assert landed == kills
    count_kills(figures, "backup", landed)
