"""`memapp doctor` finds content that disagrees with itself, names it, and survives a damaged file
(issue 20, D17: a swapped index row, a wrong message_count and a sequence gap all passed as ok)."""

from __future__ import annotations

import json
from pathlib import Path

import apsw
import pytest

from app.cli import main
from store import Store, ThreadIn
from store.checks import content_problems
from store.maintenance import doctor
from store.records import MessageIn


def _fill(s: Store) -> None:
    for t in range(3):
        s.write_thread(
            ThreadIn(
                "generic",
                f"t{t}",
                f"T{t}",
                [MessageIn("user", f"thread {t} says {i} things", f"t{t}m{i}") for i in range(4)],
            )
        )
    s.add_memory("I prefer restic for backups", "preference")


def test_a_consistent_database_has_no_content_problems(store: Store) -> None:
    _fill(store)
    assert content_problems(store.con, full=True) == []
    assert doctor(store, load_model=False)["ok"]


@pytest.mark.parametrize(
    ("damage", "said"),
    [
        (
            # message 1 indexed with message 2's text: "thread 0 says 1 things" for "thread 0 says 0 things"
            "DELETE FROM fts_messages WHERE rowid = 1; "
            "INSERT INTO fts_messages(rowid, body) VALUES (1, 'thread 0 says 1 things')",
            "fts_messages row 1 does not hold the text of messages 1",
        ),
        ("UPDATE threads SET message_count = 7 WHERE id = 2", "thread 2: message_count 7"),
        ("UPDATE messages SET seq = 9 WHERE thread_id = 3 AND seq = 2", "thread 3: 4 messages numbered 0..9"),
        ("UPDATE long_term_memories SET content_hash = 'x' WHERE id = 1", "memory 1: content_hash"),
        ("UPDATE message_chunks SET end_char = 999 WHERE id = (SELECT min(id) FROM message_chunks)", "spans"),
    ],
)
def test_each_kind_of_damage_is_named(store: Store, damage: str, said: str) -> None:
    _fill(store)
    with store.con:
        store.con.execute(damage)
    report = doctor(store, load_model=False, full=True)
    assert not report["ok"]
    assert any(said in p for p in report["content_problems"]), report["content_problems"]


def test_doctor_cli_says_what_is_wrong_and_exits_1(
    db_path: Path, no_model_config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with Store(db_path, embedder=None) as s:
        _fill(s)
        with s.con:
            s.con.execute("UPDATE threads SET message_count = 7 WHERE id = 2")
    assert main(["--db", str(db_path), "doctor", "--full"]) == 1
    out = capsys.readouterr().out
    assert "thread 2: message_count 7" in out and "PROBLEMS FOUND" in out
    assert main(["--db", str(db_path), "doctor", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["content_problems"]


def test_doctor_reports_a_corrupted_page_instead_of_crashing(
    tmp_path: Path, no_model_config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db_path = tmp_path / "chat.db"
    with Store(db_path, embedder=None) as s:
        for t in range(40):
            s.write_thread(
                ThreadIn(
                    "generic",
                    f"t{t}",
                    f"T{t}",
                    [MessageIn("user", "text " * 400, f"t{t}m{i}") for i in range(5)],
                )
            )
        s.con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = bytearray(db_path.read_bytes())
    page = 4096
    for n in range(len(data) // page - 8, len(data) // page - 2):  # scribble over pages near the end
        data[n * page + 100 : n * page + 3000] = b"\xa5" * 2900
    db_path.write_bytes(bytes(data))
    code = main(["--db", str(db_path), "doctor"])
    captured = capsys.readouterr()
    assert code in (1, 2) and "Traceback" not in captured.err
    assert "PROBLEMS FOUND" in captured.out or captured.err.startswith("memapp: ")
    con = apsw.Connection(str(db_path))
    con.close()
