"""`memapp restore BACKUP` (issue 31, 3): checks the backup, keeps the current database, and writes the
backup into the live chat.db; refuses with one line whatever it cannot do, changing nothing. And
`memapp backup` of a damaged database refuses (issue 31, 9) and of a missing folder (issue 28, 13)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import apsw
import pytest

from app.cli import main
from store import Store, migrations
from tests.reliability.invariants import database_problems


def _contents(db: Path) -> set[str]:
    with Store(db, embedder=None) as s:
        return {m.content for m in s.list_memories(limit=1000)}


def _run(capsys: pytest.CaptureFixture[str], db: Path, *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["--db", str(db), *args])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def backed_up(tmp_path: Path, no_model_config: Path) -> tuple[Path, Path]:
    """chat.db with two memories backed up, then a third one added after the backup."""
    db = tmp_path / "chat.db"
    with Store(db, embedder=None) as s:
        s.add_memory("I prefer restic for backups", "preference")
        s.add_memory("My NAS is a Synology DS920+", "fact")
    backup = tmp_path / "backups" / "monday.db"
    assert main(["--db", str(db), "backup", str(backup), "--parents"]) == 0
    with Store(db, embedder=None) as s:
        s.add_memory("Added after the backup", "fact")
    return db, backup


def test_restore_brings_the_backup_back_and_keeps_the_current_state(
    backed_up: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    db, backup = backed_up
    code, out, err = _run(capsys, db, "restore", str(backup), "--json")
    assert code == 0, err
    report = json.loads(out)
    assert _contents(db) == {"I prefer restic for backups", "My NAS is a Synology DS920+"}
    kept = Path(report["previous_kept_at"])
    assert kept.parent == db.parent and kept.name.startswith("chat.db.before-restore-")
    assert "Added after the backup" in _contents(kept)  # the restore itself can be undone
    with Store(db, embedder=None) as s:
        assert database_problems(s) == [] and s.integrity_check() == "ok"
        s.add_memory("written after the restore", "fact")  # the restored database takes writes


def test_restore_refuses_what_it_cannot_use_and_changes_nothing(
    backed_up: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db, backup = backed_up
    before = _contents(db)
    other = tmp_path / "other.db"
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE notes(x)")
    con.commit()
    con.close()
    newer = tmp_path / "newer.db"
    newer.write_bytes(backup.read_bytes())
    con = sqlite3.connect(newer)
    con.execute(f"PRAGMA user_version = {migrations.LATEST + 1}")
    con.commit()
    con.close()
    damaged = tmp_path / "damaged.db"
    data = bytearray(backup.read_bytes())
    for n in range(2, len(data) // 4096):
        data[n * 4096 + 100 : n * 4096 + 2000] = b"\xa5" * 1900
    damaged.write_bytes(bytes(data))
    text = tmp_path / "notes.txt"
    text.write_text("not a database at all\n" * 200)
    cases = [
        (tmp_path / "missing.db", "no such file"),
        (other, "not a memapp database"),
        (newer, "newer than this memapp knows"),
        (damaged, "damaged"),
        (text, "not a database"),
        (db, "the live database itself"),
    ]
    for path, said in cases:
        code, _, err = _run(capsys, db, "restore", str(path))
        assert code == 1 and said in err and "Traceback" not in err, (path, err)
        assert err.count("\n") == 1, err
    assert _contents(db) == before
    assert not list(db.parent.glob("chat.db.before-restore-*"))  # refused before keeping anything


def test_backup_of_a_damaged_database_is_refused(
    tmp_path: Path, no_model_config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An index that no longer matches its table (what a bad sector or a half-copied file leaves):
    VACUUM INTO copies it as it is, so the old backup exited 0 with an equally damaged copy."""
    db = tmp_path / "chat.db"
    with Store(db, embedder=None) as s:
        for i in range(30):
            s.add_memory(f"memory number {i}", "fact")
    con = apsw.Connection(str(db))
    con.execute("PRAGMA writable_schema = ON")
    con.execute(
        "UPDATE sqlite_master SET sql = replace(sql, 'content_hash', 'token_count') WHERE name = 'memories_hash'"
    )
    con.close()
    dest = tmp_path / "backup.db"
    code, _, err = _run(capsys, db, "backup", str(dest))
    assert code == 1 and "is damaged (row 1 missing from index memories_hash" in err, err
    assert "no backup was written" in err and "Traceback" not in err and err.count("\n") == 1
    assert not dest.exists() and not list(tmp_path.glob(".memapp-partial-*"))


def test_backup_refuses_a_missing_folder_unless_asked(
    tmp_path: Path, no_model_config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "chat.db"
    Store(db, embedder=None).close()
    dest = tmp_path / "no" / "such" / "dir" / "backup.db"
    code, _, err = _run(capsys, db, "backup", str(dest))
    assert code == 2 and "does not exist" in err and "--parents" in err
    assert not (tmp_path / "no").exists()
    code, _, err = _run(capsys, db, "backup", str(dest), "--parents")
    assert code == 0 and dest.is_file(), err
