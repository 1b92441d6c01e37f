"""A chat.db that cannot be written (a read-only disk, a backup mounted read-only) opens for reading with a
one-line notice, and every write is refused with one line, the file untouched (issue 20, part 5).

Root can write any file whatever its mode, so the test puts the folder on a read-only bind mount; without
root (or `mount`) it is skipped with that reason."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from store import Store

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.serial


@pytest.fixture
def read_only_db(tmp_path: Path) -> Iterator[Path]:
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("needs root for a read-only bind mount")
    source = tmp_path / "rw"
    source.mkdir()
    with Store(source / "chat.db", embedder=None) as s:
        s.add_memory("I keep the spare key in the blue tin", "fact")
        s.con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    view = tmp_path / "ro"
    view.mkdir()
    if subprocess.run(["mount", "--bind", str(source), str(view)], capture_output=True).returncode != 0:
        pytest.skip("bind mounts are not allowed here")
    try:
        if subprocess.run(["mount", "-o", "remount,ro,bind", str(view)], capture_output=True).returncode != 0:
            pytest.skip("read-only remounts are not allowed here")
        yield view / "chat.db"
    finally:
        subprocess.run(["umount", str(view)], check=False)


def _memapp(db: Path, tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    config = tmp / "none.toml"
    config.write_text("[embedding]\nenabled = false\n")
    return subprocess.run(
        [sys.executable, "-m", "app", "--db", str(db), "--config", str(config), *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_read_only_database_is_read_with_a_notice_and_refuses_writes(
    read_only_db: Path, tmp_path: Path
) -> None:
    before = hashlib.sha256(read_only_db.read_bytes()).hexdigest()
    listed = _memapp(read_only_db, tmp_path, "memory", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert [m["content"] for m in json.loads(listed.stdout)] == ["I keep the spare key in the blue tin"]
    assert (
        listed.stderr.strip()
        == f"memapp: {read_only_db} is read-only: reading works, changes will be refused"
    )
    found = _memapp(read_only_db, tmp_path, "search", "blue tin", "--json")
    assert found.returncode == 0 and json.loads(found.stdout)["results"], found.stderr
    added = _memapp(read_only_db, tmp_path, "memory", "add", "a new fact", "--category", "fact")
    assert added.returncode == 1 and "cannot be written" in added.stderr and "Traceback" not in added.stderr
    assert hashlib.sha256(read_only_db.read_bytes()).hexdigest() == before
