"""A full disk during an import or an edit: one clear line, exit 1, nothing half-written, and the database
usable as soon as there is room again (issue 20, part 2; D13: `apsw.FullError` reached the user as a
traceback).

Two ways to fill the disk: SQLite's own page limit (`PRAGMA max_page_count` on every connection memapp
opens), which runs everywhere, and a real 6 MB tmpfs when the tests run as root."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import apsw
import pytest

from app.cli import main
from store import Store, db

REPO = Path(__file__).resolve().parents[2]


def _export(path: Path, threads: int = 80, messages: int = 40) -> Path:
    with path.open("w", encoding="utf-8") as fh:
        for t in range(threads):
            msgs = [
                {
                    "id": f"t{t}m{i}",
                    "role": "user" if i % 2 == 0 else "assistant",
                    "content": f"thread {t} message {i} "
                    + " ".join(f"word{(t * 31 + i * 7 + j) % 997}" for j in range(60)),
                }
                for i in range(messages)
            ]
            fh.write(json.dumps({"id": f"t{t}", "title": f"Thread {t}", "messages": msgs}) + "\n")
    return path


def _check_whole(db_path: Path, messages_per_thread: int) -> int:
    """integrity ok, and every stored thread is whole; returns the number of threads."""
    con = apsw.Connection(str(db_path))
    try:
        assert con.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        counts = [r[0] for r in con.execute("SELECT count(*) FROM messages GROUP BY thread_id")]
        assert all(c == messages_per_thread for c in counts), counts
        assert (
            con.execute("SELECT count(*) FROM messages").fetchall()[0][0]
            == con.execute("SELECT count(*) FROM fts_messages").fetchall()[0][0]
        )
        return len(counts)
    finally:
        con.close()


@contextlib.contextmanager
def _page_limit(monkeypatch: pytest.MonkeyPatch, extra_pages: int) -> Iterator[None]:
    real = db.connect

    def limited(*args: object, **kwargs: object) -> apsw.Connection:
        con = real(*args, **kwargs)  # type: ignore[arg-type]
        pages = int(str(con.execute("PRAGMA page_count").fetchall()[0][0]))
        con.execute(f"PRAGMA max_page_count = {pages + extra_pages}").fetchall()
        return con

    monkeypatch.setattr(db, "connect", limited)
    yield
    monkeypatch.setattr(db, "connect", real)


def test_an_import_that_fills_the_database_stops_with_one_line_and_resumes(
    db_path: Path,
    tmp_path: Path,
    no_model_config: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    figures: dict[str, int],
) -> None:
    export = _export(tmp_path / "big.jsonl")
    with Store(db_path, embedder=None):
        pass  # a migrated, empty chat.db
    with _page_limit(monkeypatch, extra_pages=150):
        code = main(["--db", str(db_path), "import", str(export), "--no-embed", "--no-summarize"])
    err = capsys.readouterr().err
    assert code == 1 and "is full" in err and "Traceback" not in err, err
    assert err.strip().count("\n") == 0  # one line (progress is not drawn: stderr is not a terminal)
    written = _check_whole(db_path, 40)
    assert 0 < written < 80
    assert main(["--db", str(db_path), "import", str(export), "--no-embed", "--no-summarize"]) == 0
    assert _check_whole(db_path, 40) == 80
    figures["disk-full cases"] = figures.get("disk-full cases", 0) + 1


def test_an_edit_on_a_full_database_changes_nothing(
    db_path: Path,
    no_model_config: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    figures: dict[str, int],
) -> None:
    assert main(["--db", str(db_path), "memory", "add", "short", "--category", "fact"]) == 0
    capsys.readouterr()
    with _page_limit(monkeypatch, extra_pages=2):
        code = main(["--db", str(db_path), "memory", "edit", "1", "--text", "long " * 20_000])
    err = capsys.readouterr().err
    assert code == 1 and "is full" in err and "Traceback" not in err
    with Store(db_path, embedder=None) as s:
        assert s.get_memory(1).content == "short"
        assert [h.event for h in s.memory_history(1)] == ["add"]
    figures["disk-full cases"] = figures.get("disk-full cases", 0) + 1


def _mount_tmpfs(where: Path, size: str) -> bool:
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    where.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True
    )
    return done.returncode == 0


@pytest.mark.serial
def test_a_real_full_disk_during_an_import(tmp_path: Path, figures: dict[str, int]) -> None:
    disk = tmp_path / "disk"
    if not _mount_tmpfs(disk, "24m"):
        pytest.skip("needs root and a tmpfs mount (the page-limit variant above runs everywhere)")
    try:
        export = _export(tmp_path / "big.jsonl", threads=150)
        ballast = disk / "ballast"
        ballast.write_bytes(b"\0" * (20 * 1024**2))
        env = {**os.environ, "MEMAPP_DB": str(disk / "chat.db"), "MEMAPP_CONFIG": str(tmp_path / "none.toml")}
        (tmp_path / "none.toml").write_text("[embedding]\nenabled = false\n")
        cmd = [sys.executable, "-m", "app", "import", str(export), "--no-embed", "--no-summarize"]
        first = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True)
        assert first.returncode == 1 and "is full" in first.stderr, first.stderr
        assert "Traceback" not in first.stderr
        ballast.unlink()  # room again
        second = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True)
        assert second.returncode == 0, second.stderr
        assert _check_whole(disk / "chat.db", 40) == 150
        figures["disk-full cases"] = figures.get("disk-full cases", 0) + 1
    finally:
        subprocess.run(["umount", str(disk)], check=False)
