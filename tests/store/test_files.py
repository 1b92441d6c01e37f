"""Files memapp writes (exports, Markdown, backups) are private, whole or absent, and never the database;
another application's SQLite file is refused untouched (issue 20: D1-D4, D16, D18)."""

from __future__ import annotations

import hashlib
import io
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import apsw
import pytest

from store import NotADatabaseError, Store, StoreError, ThreadIn
from store.export import export_json, save_export, write_export, write_markdown
from store.files import PARTIAL_PREFIX, atomic_write, refuse_database_paths, sweep_partials
from store.maintenance import backup
from store.records import MessageIn

REPO = Path(__file__).resolve().parents[2]


def _fill(s: Store, threads: int = 3, messages: int = 4) -> None:
    for t in range(threads):
        s.write_thread(
            ThreadIn(
                "generic",
                f"t{t}",
                f"Thread {t}",
                [
                    MessageIn(
                        "user" if i % 2 == 0 else "assistant", f"message {t}-{i} " + "x" * 200, f"t{t}m{i}"
                    )
                    for i in range(messages)
                ],
            )
        )
    s.add_memory("I prefer restic for backups", "preference", importance=7)


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_streamed_export_is_the_same_json_as_the_dict(store: Store) -> None:
    _fill(store)
    buf = io.StringIO()
    counts = write_export(store, buf, include_embeddings=True)
    streamed = json.loads(buf.getvalue())
    assert streamed == json.loads(json.dumps(export_json(store, include_embeddings=True)))
    assert counts["messages"] == 12 and counts["threads"] == 3
    assert streamed["embeddings"]["chunks"] and streamed["embeddings"]["memories"]


def test_an_output_path_that_is_the_database_or_a_sidecar_is_refused(db_path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        with pytest.raises(StoreError, match="database memapp has open"):
            refuse_database_paths(db_path.with_name(db_path.name + suffix), db_path)
    refuse_database_paths(db_path.with_name("other.json"), db_path)  # anything else is fine


def test_cli_export_onto_the_live_database_exits_2_and_changes_nothing(db_path: Path) -> None:
    with Store(db_path, embedder=None) as s:
        _fill(s)
    before = _sha(db_path)
    for target in (db_path, db_path.with_name(db_path.name + "-wal")):
        proc = subprocess.run(
            [sys.executable, "-m", "app", "--db", str(db_path), "export", "-o", str(target)],
            capture_output=True,
            text=True,
            cwd=REPO,
        )
        assert proc.returncode == 2, proc.stderr
        assert "database memapp has open" in proc.stderr
    assert _sha(db_path) == before
    with Store(db_path, embedder=None) as s:
        assert s.count_threads() == 3


def test_cli_export_to_a_folder_is_a_clear_usage_error(db_path: Path, tmp_path: Path) -> None:
    with Store(db_path, embedder=None) as s:
        _fill(s)
    proc = subprocess.run(
        [sys.executable, "-m", "app", "--db", str(db_path), "export", "-o", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert proc.returncode == 2 and "is a folder" in proc.stderr and "Traceback" not in proc.stderr


def test_atomic_write_keeps_the_old_file_when_the_writer_fails(tmp_path: Path) -> None:
    dest = tmp_path / "export.json"
    dest.write_text("previous export")
    with pytest.raises(RuntimeError), atomic_write(dest) as fh:
        fh.write("half of the new one")
        raise RuntimeError("disk full")
    assert dest.read_text() == "previous export"
    assert [p.name for p in tmp_path.iterdir()] == ["export.json"]  # no temporary file left


def test_exports_are_private(store: Store, tmp_path: Path) -> None:
    _fill(store)
    os.umask(0o022)
    out = tmp_path / "new" / "deeper" / "export.json"
    save_export(store, out)
    assert _mode(out) == 0o600
    assert _mode(out.parent) == 0o700 and _mode(out.parent.parent) == 0o700
    files = write_markdown(store, tmp_path / "md")
    assert files and all(_mode(f) == 0o600 for f in files)
    assert _mode(tmp_path / "md") == 0o700 and _mode(tmp_path / "md" / "threads") == 0o700


# Killed exports and backups: tests/reliability/test_crash_files.py (seeded progress points, soak-sized).


def test_backup_refuses_an_existing_name_and_the_database_itself(store: Store, tmp_path: Path) -> None:
    _fill(store)
    taken = tmp_path / "taken.db"
    taken.write_text("mine")
    with pytest.raises(StoreError, match="already exists"):
        backup(store, taken)
    assert taken.read_text() == "mine"
    done = backup(store, tmp_path / "copy.db")
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(PARTIAL_PREFIX)]
    with Store(done, embedder=None) as copy:
        assert copy.count_threads() == 3


def test_another_applications_sqlite_file_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "logs.db"
    con = apsw.Connection(str(path))
    con.execute(
        "CREATE TABLE conversations(id TEXT PRIMARY KEY, name TEXT); INSERT INTO conversations VALUES ('a', 'b')"
    )
    con.close()
    before = path.read_bytes()
    with pytest.raises(NotADatabaseError, match="another application"):
        Store(path, embedder=None).con  # noqa: B018 - opening is the point
    assert path.read_bytes() == before
    assert not path.with_name("logs.db-wal").exists()
    con = apsw.Connection(str(path))
    assert con.execute("PRAGMA journal_mode").fetchall()[0][0] == "delete"
    assert [r[0] for r in con.execute("SELECT name FROM sqlite_master")] == [
        "conversations",
        "sqlite_autoindex_conversations_1",
    ]


def test_an_empty_file_still_becomes_a_new_chat_db(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    path.touch()
    with Store(path, embedder=None) as s:
        assert s.count_threads() == 0


def test_the_wal_shrinks_again_once_a_long_reader_lets_go(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 20, D18: a reader's snapshot during a big import grew the WAL to 1.39 GB, and it stayed that
    size while any connection was open. (The limit is lowered here so the test writes megabytes, not GBs.)"""
    from store import db

    monkeypatch.setattr(db, "WAL_SIZE_LIMIT", 256 * 1024)
    wal = db_path.with_name(db_path.name + "-wal")
    with Store(db_path, embedder=None) as writer:
        reader = db.connect(db_path)
        reader.execute("BEGIN")
        reader.execute(
            "SELECT count(*) FROM messages"
        ).fetchall()  # holds a snapshot: no checkpoint can finish
        _fill(writer, threads=40, messages=20)
        grown = wal.stat().st_size
        assert grown > 2 * 1024**2
        reader.execute("COMMIT")
        reader.close()
        writer.con.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        writer.add_memory("one more write restarts the log", "fact")
        writer.con.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        assert wal.stat().st_size <= 256 * 1024 < grown


def test_only_the_temporary_files_of_ended_writers_are_swept(tmp_path: Path) -> None:
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    gone = tmp_path / f"{PARTIAL_PREFIX}{int(dead.stdout)}-abc.tmp"
    gone_journal = tmp_path / f"{PARTIAL_PREFIX}{int(dead.stdout)}-abc.tmp-journal"
    live = tmp_path / f"{PARTIAL_PREFIX}{os.getpid()}-def.tmp"  # this process: a writer still at work
    other = tmp_path / f"{PARTIAL_PREFIX}notapid.tmp"
    for p in (gone, gone_journal, live, other):
        p.write_text("x")
    assert sorted(sweep_partials(tmp_path)) == sorted([gone, gone_journal])
    assert live.exists() and other.exists()
    with atomic_write(tmp_path / "out.json") as fh:  # every write sweeps its folder first
        fh.write("{}")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([live.name, other.name, "out.json"])
