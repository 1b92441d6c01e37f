"""Every file memapp writes is 0600 and every folder it makes 0700, whatever the umask (issue 33 part 3).

A session of commands on the default chat.db (HOME pointed at an empty folder, umask 022, the fast fake
embedder) on an encrypted database and then a plain one: create, add, import (a file and stdin), search,
context, export (age, plain JSON, Markdown), backup, rekey, decrypt; while a store is open its -wal and -shm
files are checked too. Then every path under HOME is walked. (tests/hygiene/test_home.py runs a session with
the real model in a subprocess; this one covers the encryption commands and runs in-process in a second.)
"""

from __future__ import annotations

import io
import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import store.core
from app.cli import main
from embeddings import FakeEmbedder
from store import Store
from store.crypto import keys

REPO = Path(__file__).resolve().parents[2]
PASS = "owls keep quiet at noon"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in list(os.environ):
        if name.startswith("XDG_") or name in ("MEMAPP_DB", "MEMAPP_CONFIG"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("MEMAPP_CACHE_DIR", str(tmp_path / "cache"))  # the model cache is not this test's
    monkeypatch.setattr(store.core, "make_embedder", lambda *a, **k: FakeEmbedder())
    old = os.umask(0o022)
    try:
        yield home
    finally:
        os.umask(old)


def _run(*args: str, stdin: str | None = None) -> str:
    if stdin is not None:
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode()))
    try:
        code = main(list(args))
    finally:
        sys.stdin = sys.__stdin__
    assert code == 0, args
    return ""


def test_a_session_writes_only_private_files(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = home / ".local" / "share" / "memapp"
    out = home / "out"
    _run("init", "--encrypt", "--passphrase-stdin", "--remember", stdin=PASS + "\n")
    db = data / "chat.db"
    assert keys.is_encrypted(db)
    _run("memory", "add", "I prefer restic for backups", "--category", "preference")
    _run("import", str(REPO / "data" / "demo.json"), "--no-embed")
    _run("import", "-", "--no-embed", stdin="- I like green tea\n- I work on memapp\n")
    _run("search", "backups")
    _run("context", "1", "--budget", "400")
    _run("export", "-o", str(out / "export.json.age"))
    _run("export", "--plain", "--parents", "-o", str(out / "deep" / "export.json"))
    _run("export", "--plain", "--format", "markdown", "-o", str(out / "markdown"))
    _run("backup", "--parents", str(out / "backups" / "copy.db"))
    with Store(db, embedder=FakeEmbedder()) as s:  # while open: the WAL and shared-memory files
        s.add_memory("a write that lands in the WAL", "fact")
        sidecars = [db.with_name("chat.db-wal"), db.with_name("chat.db-shm")]
        assert all(p.exists() for p in sidecars)
        assert [oct(stat.S_IMODE(p.stat().st_mode)) for p in sidecars] == ["0o600", "0o600"]
    _run("rekey", "--passphrase-stdin", stdin="another long passphrase\n")
    _run("decrypt")
    _run("memory", "add", "written into the plain file now", "--category", "fact")
    capsys.readouterr()

    written = sorted(home.rglob("*"))
    assert db in written and (out / "markdown").is_dir() and (out / "backups" / "copy.db") in written
    wrong = [
        (str(p.relative_to(home)), oct(stat.S_IMODE(p.lstat().st_mode)))
        for p in written
        if stat.S_IMODE(p.lstat().st_mode) != (0o700 if p.is_dir() else 0o600)
    ]
    assert wrong == []
