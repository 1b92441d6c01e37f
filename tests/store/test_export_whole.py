"""Exports are written whole or not at all, even killed or on a full disk, and never into a folder that
does not exist unless asked (issue 31, 8 and 13; issue 28, 13)."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli import main
from store import Store, ThreadIn, files
from store.records import MessageIn
from tests.reliability.processes import REPO, runner_env


def _fill(db: Path, threads: int = 6) -> None:
    with Store(db, embedder=None) as s:
        for t in range(threads):
            s.write_thread(
                ThreadIn(
                    "generic",
                    f"t{t}",
                    f"Thread {t}",
                    [
                        MessageIn("user", f"message {i} of thread {t} " + "words " * 50, f"t{t}m{i}")
                        for i in range(4)
                    ],
                )
            )
        s.add_memory("I prefer restic for backups", "preference")


def _tree(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): p.read_text() for p in sorted(folder.rglob("*.md"))}


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(list(args))
    return code, capsys.readouterr().err


def test_a_re_export_drops_the_files_of_deleted_threads(
    tmp_path: Path, no_model_config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db, out = tmp_path / "chat.db", tmp_path / "md"
    _fill(db)
    assert _run(capsys, "--db", str(db), "export", "--format", "markdown", "-o", str(out))[0] == 0
    first = _tree(out)
    assert len([n for n in first if n.startswith("threads/")]) == 6
    with Store(db, embedder=None) as s:
        s.delete_thread(s.list_threads()[0].id)
    assert _run(capsys, "--db", str(db), "export", "--format", "markdown", "-o", str(out))[0] == 0
    second = _tree(out)
    assert len([n for n in second if n.startswith("threads/")]) == 5  # before: 6, one of a deleted thread
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(files.PARTIAL_PREFIX)]
    assert oct(out.stat().st_mode & 0o777) == "0o700"


def test_a_folder_of_other_files_is_never_replaced(
    tmp_path: Path, no_model_config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db, out = tmp_path / "chat.db", tmp_path / "Documents"
    _fill(db, 1)
    out.mkdir()
    (out / "taxes-2025.pdf").write_bytes(b"%PDF")
    code, err = _run(capsys, "--db", str(db), "export", "--format", "markdown", "-o", str(out))
    assert code == 1 and "taxes-2025.pdf" in err and "choose a new or empty folder" in err
    assert [p.name for p in out.iterdir()] == ["taxes-2025.pdf"]


def test_an_earlier_export_with_a_killed_writers_leftovers_is_replaced(
    tmp_path: Path, no_model_config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An export folder of an older memapp, written file by file, where a killed export left a temporary
    file inside threads/: it is still recognised as an export, and replaced whole."""
    db, out = tmp_path / "chat.db", tmp_path / "md"
    _fill(db, 2)
    (out / "threads").mkdir(parents=True)
    (out / "threads" / "00009-gone.md").write_text("# a thread deleted since\n")
    (out / "threads" / f"{files.PARTIAL_PREFIX}99999999-x.tmp").write_text("half")
    (out / "memories.md").write_text("# Memories\n")
    assert _run(capsys, "--db", str(db), "export", "--format", "markdown", "-o", str(out))[0] == 0
    assert sorted(_tree(out)) == ["memories.md", "threads/00001-thread-0.md", "threads/00002-thread-1.md"]
    assert not list((out / "threads").glob(files.PARTIAL_PREFIX + "*"))


KILLED_EXPORT = """
import os, signal, sys
import store.export as export
real, n = export.write_private, [0]
def write(path, text):
    n[0] += 1
    if n[0] == int(sys.argv[3]):
        os.kill(os.getpid(), signal.SIGKILL)  # a kill in the middle of the folder
    real(path, text)
export.write_private = write
from app.cli import main
main(["--db", sys.argv[1], "export", "--format", "markdown", "-o", sys.argv[2]])
"""


def test_a_killed_markdown_export_leaves_the_previous_one_whole(
    tmp_path: Path, no_model_config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db, out = tmp_path / "chat.db", tmp_path / "md"
    _fill(db)
    assert _run(capsys, "--db", str(db), "export", "--format", "markdown", "-o", str(out))[0] == 0
    before = _tree(out)
    with Store(db, embedder=None) as s:
        s.rename_thread(1, "Renamed after the first export")
    env = {**runner_env(tmp_path), "MEMAPP_CONFIG": str(no_model_config)}
    for at in (1, 4, 7):
        killed = subprocess.run(
            [sys.executable, "-c", KILLED_EXPORT, str(db), str(out), str(at)], cwd=REPO, env=env, timeout=120
        )
        assert killed.returncode == -signal.SIGKILL
        assert _tree(out) == before  # the previous export, whole; never a partial folder
    fresh = tmp_path / "fresh"
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_EXPORT, str(db), str(fresh), "3"], cwd=REPO, env=env, timeout=120
    )
    assert killed.returncode == -signal.SIGKILL and not fresh.exists()  # a first export: nothing at all
    assert _run(capsys, "--db", str(db), "export", "--format", "markdown", "-o", str(out))[0] == 0
    assert _tree(out) != before and any("Renamed after" in text for text in _tree(out).values())
    left = [p.name for p in tmp_path.iterdir() if p.name.startswith(files.PARTIAL_PREFIX)]
    assert left == []  # what the killed exports left was swept by the next one


@pytest.mark.parametrize(
    ("fmt", "output"),
    [("json", "export.json"), ("markdown", "md"), ("prompt", "prompt.txt")],
)
def test_exports_on_a_full_disk_say_so_in_one_line_and_leave_nothing(
    tmp_path: Path,
    no_model_config: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    fmt: str,
    output: str,
) -> None:
    """The disk fills while the output is synced (everywhere: os.fsync made to fail as a full disk
    does); test_exports_on_a_real_full_disk does it with a real 1 MB filesystem when run as root."""
    db = tmp_path / "chat.db"
    _fill(db)
    out = tmp_path / "out"
    out.mkdir()

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(files.os, "fsync", full)
    code, err = _run(capsys, "--db", str(db), "export", "--format", fmt, "-o", str(out / output))
    assert code == 1 and "is full" in err and str(out / output) in err, err
    assert "Traceback" not in err and err.count("\n") == 1
    assert list(out.iterdir()) == []  # nothing half-written, no temporary file


def _tmpfs(where: Path, size: str) -> bool:
    if os.geteuid() != 0:
        return False
    where.mkdir()
    return subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)]).returncode == 0


@pytest.mark.serial
def test_exports_on_a_real_full_disk(tmp_path: Path, no_model_config: Path) -> None:
    disk = tmp_path / "disk"
    if not _tmpfs(disk, "1m"):
        pytest.skip("needs root and a tmpfs mount (the fsync variant above runs everywhere)")
    try:
        db = tmp_path / "chat.db"
        _fill(db, 200)  # a JSON export of ~300 KB, and as much Markdown
        env = {**runner_env(tmp_path), "MEMAPP_CONFIG": str(no_model_config)}
        (disk / "ballast").write_bytes(b"\0" * 960_000)  # ~80 KB left
        for fmt, name in (("json", "export.json"), ("markdown", "md"), ("prompt", "prompt.txt")):
            if fmt == "prompt":  # small: fill the disk to the last byte first
                with (disk / "rest").open("wb", buffering=0) as fh, pytest.raises(OSError):
                    while True:
                        fh.write(b"\0" * 4096)
            done = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "app",
                    "--db",
                    str(db),
                    "export",
                    "--format",
                    fmt,
                    "-o",
                    str(disk / name),
                ],
                cwd=REPO,
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert done.returncode == 1 and "is full" in done.stderr, (fmt, done.stderr)
            assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1
            assert {p.name for p in disk.iterdir()} <= {"ballast", "rest"}  # nothing half-written left
    finally:
        subprocess.run(["umount", str(disk)], check=False)


@pytest.mark.parametrize("fmt", ["json", "markdown", "prompt"])
def test_exports_refuse_a_missing_folder_unless_asked(
    tmp_path: Path, no_model_config: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    db = tmp_path / "chat.db"
    _fill(db, 1)
    dest = tmp_path / "nonexistent" / "dir" / "out"
    code, err = _run(capsys, "--db", str(db), "export", "--format", fmt, "-o", str(dest))
    assert code == 2 and "does not exist" in err and "--parents" in err and err.count("\n") == 1
    assert not (tmp_path / "nonexistent").exists()
    code, err = _run(capsys, "--db", str(db), "export", "--format", fmt, "-o", str(dest), "--parents")
    assert code == 0 and dest.exists(), err
