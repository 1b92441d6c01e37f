"""simonw/llm logs.db: both table generations, merged without double import, read-only, stable ids."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

import apsw
import pytest

from store.importing.formats import UnknownFormatError, detect_format
from tests.store.importing.formats.import_helpers import build_llm_db, msgs, read

NEW = ["messages", "parts", "threads", "turns"]
LEGACY = ["responses", "conversations"]


@pytest.fixture
def logs_db(tmp_path: Path) -> Path:
    return build_llm_db(tmp_path / "logs.db")


def test_detected(logs_db: Path, tmp_path: Path) -> None:
    assert detect_format(logs_db) == "llm"
    assert detect_format(build_llm_db(tmp_path / "legacy.db", drop=NEW)) == "llm"
    assert detect_format(build_llm_db(tmp_path / "new.db", drop=LEGACY)) == "llm"


def test_both_generations_exactly(logs_db: Path) -> None:
    r = read(logs_db)
    assert r.problems == [] and r.memories == []
    assert [t.external_id for t in r.threads] == [
        "01legacyconv1",
        "01r000",
        "01sharedconv",
        "01fork",
        "01newonly",
    ]
    assert {t.source for t in r.threads} == {"llm"}

    legacy = r.thread("01legacyconv1")
    assert legacy.title == "Pelican names"
    assert msgs(legacy) == [
        ("01r001/prompt", "user", "Name a pelican"),
        ("01r001/response", "assistant", "Percy"),
        ("01r002/prompt", "user", "And a walrus?"),
        ("01r002/response", "assistant", "Wally"),
    ]
    assert legacy.messages[0].metadata == {"system": "Be fun"}
    assert legacy.messages[1].metadata == {
        "model": "gpt-4o-mini-2024-07-18",
        "reasoning": ["Pelicans are dignified"],
    }
    assert [m.created_at for m in legacy.messages] == [1714557600.0, 1714557600.0, 1714557660.0, 1714557660.0]

    # NULL conversation_id: its own thread, keyed by the response id; naive datetime read as UTC.
    lone = r.thread("01r000")
    assert (lone.title, lone.created_at) == ("Standalone question", 1711962000.0)
    assert msgs(lone) == [
        ("01r000/prompt", "user", "Standalone question"),
        ("01r000/response", "assistant", "Standalone answer"),
    ]


def test_shared_conversation_merges_without_duplicates(logs_db: Path) -> None:
    t = read(logs_db).thread("01sharedconv")
    assert t.title == "Shared convo"
    # 01r011 was replayed into the new chain and 01turn2 is also a turn: neither is imported twice.
    assert msgs(t) == [
        ("01r010/prompt", "user", "Old shared question"),
        ("01r010/response", "assistant", "Old shared answer"),
        ("b2:m1", "user", "Replayed question"),
        ("b2:m2", "assistant", "Replayed answer"),
        ("b2:m3", "user", "LONG DOCUMENT TEXT\nSummarise it"),  # text_ref: fragment + literal
        ("b2:m4", "assistant", "Summary here"),
        ("b2:m5", "user", "What time is it?"),
        ("b2:m6", "assistant", ""),
        ("b2:m7", "tool", ""),
        ("b2:m8", "assistant", "It is noon."),
    ]
    by_id = {m.external_id: m for m in t.messages}
    assert by_id["b2:m4"].metadata == {"reasoning": ["thinking about the document"], "model": "gpt-4o"}
    assert by_id["b2:m6"].metadata == {
        "tool_calls": [{"name": "llm_time", "arguments": {}, "tool_call_id": "tc1"}],
        "model": "gpt-4o-2024-08-06",
    }
    assert by_id["b2:m7"].metadata == {
        "tool_results": [{"name": "llm_time", "tool_call_id": "tc1", "text": "12:00"}]
    }
    # Messages are dated by the earliest turn that reached them.
    assert [m.created_at for m in t.messages][2:] == [1717286400.0] * 4 + [1717286700.0] * 2 + [
        1717286760.0
    ] * 2


def test_fork_shares_history_dated_by_the_original_turns(logs_db: Path) -> None:
    t = read(logs_db).thread("01fork")
    assert (t.title, t.metadata) == ("Forked", {"forked_from": "01sharedconv"})
    assert [m.external_id for m in t.messages] == ["b2:m1", "b2:m2", "b2:m3", "b2:m4", "b2:m9", "b2:m10"]
    assert t.messages[3].metadata["model"] == "gpt-4o" and t.messages[3].created_at == 1717286400.0
    assert t.messages[5].metadata["model"] == "claude-3" and t.messages[5].created_at == 1717372800.0


def test_new_only_thread_keeps_system_message(logs_db: Path) -> None:
    t = read(logs_db).thread("01newonly")
    assert t.title == "Write a line"
    assert msgs(t) == [
        ("b2:s1", "system", "You are a poet"),
        ("b2:s2", "user", "Write a line"),
        ("b2:s3", "assistant", "Roses are red"),
    ]


def test_each_generation_alone(tmp_path: Path) -> None:
    legacy = read(build_llm_db(tmp_path / "legacy.db", drop=NEW))
    assert [t.external_id for t in legacy.threads] == ["01legacyconv1", "01r000", "01sharedconv"]
    assert [m.content for m in legacy.thread("01sharedconv").messages] == [
        "Old shared question",
        "Old shared answer",
        "Replayed question",
        "Replayed answer",
        "What time is it?",
        "DUAL WRITTEN",
    ]
    new = read(build_llm_db(tmp_path / "new.db", drop=LEGACY))
    assert [t.external_id for t in new.threads] == ["01sharedconv", "01fork", "01newonly"]
    assert new.thread("01sharedconv").messages[0].external_id == "b2:m1"


def test_ids_stable_and_file_untouched(logs_db: Path) -> None:
    before = hashlib.sha256(logs_db.read_bytes()).hexdigest()
    first, second = read(logs_db), read(logs_db)
    assert first == second
    assert hashlib.sha256(logs_db.read_bytes()).hexdigest() == before


def test_read_only_file_can_be_read(logs_db: Path) -> None:
    os.chmod(logs_db, stat.S_IRUSR)
    try:
        assert len(read(logs_db).threads) == 5
    finally:
        os.chmod(logs_db, stat.S_IRUSR | stat.S_IWUSR)


def test_other_sqlite_files_are_refused(tmp_path: Path) -> None:
    other = tmp_path / "chat.db"
    con = apsw.Connection(str(other))
    con.execute("CREATE TABLE threads(id); CREATE TABLE messages(id)")  # memapp's own names, not llm's
    con.close()
    with pytest.raises(UnknownFormatError, match="not an llm logs.db"):
        detect_format(other)
    [problem] = read(other, "llm").problems
    assert "no llm tables" in problem.error


def test_not_a_database_with_explicit_format(tmp_path: Path) -> None:
    junk = tmp_path / "logs.db"
    junk.write_bytes(b"SQLite format 3\x00" + b"\xff" * 200)
    r = read(junk, "llm")
    assert r.threads == [] and len(r.problems) == 1
    assert r.problems[0].conversation is None


def test_a_cell_that_is_not_utf8_costs_nothing(tmp_path: Path) -> None:
    """A text cell holding bytes that are not UTF-8 (SQLite stores what a program gives it) made apsw
    raise while reading, and the whole logs.db stopped there with nothing imported. Now the cell is read
    with U+FFFD and noted once; every conversation imports."""
    db = build_llm_db(tmp_path / "logs.db")
    con = apsw.Connection(str(db))
    con.execute("UPDATE responses SET prompt = CAST(x'48692065dbe9a0bd21' AS TEXT) WHERE id = '01r000'")
    con.close()
    clean = read(build_llm_db(tmp_path / "clean.db"), "llm")
    r = read(db, "llm")
    assert len(r.threads) == len(clean.threads) and len(r.threads) > 0
    [note] = r.problems
    assert note.note and "not valid UTF-8" in note.error
    texts = [m.content for t in r.threads for m in t.messages]
    assert any(t.startswith("Hi e\ufffd") for t in texts)
