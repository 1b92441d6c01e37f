"""Issue 28.1 and 31.11: a lone UTF-16 surrogate (a JSON "\\ud83d" escape whose other half was cut off)
loses nothing, in every importer: the half character becomes U+FFFD, its message, thread and file are
imported, and one note (not an error) says so. It used to cost the whole thread (the store refuses text
SQLite cannot hold), a whole coding session for good, and during incremental capture every message after
it; in a bundle memory's `origin` it was a traceback that stopped the memories after it."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import apsw
import pytest

from store import Store
from store.importing.pipeline import ImportReport, import_paths
from tests.store.importing.formats.import_helpers import FIXTURES

CUT = "caf\u00e9 \ud83d"  # the emoji's second half is missing
SESSION = "5f0c7a52-3d0e-4b7a-9c11-2a9b1f3e8d99"


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=True)  # as exporters write it: "\ud83d" as an escape


def _chatgpt(text: str, n: int) -> dict[str, Any]:
    def node(i: str, parent: str | None, role: str, words: str) -> dict[str, Any]:
        return {
            "id": i,
            "parent": parent,
            "children": [],
            "message": {
                "author": {"role": role},
                "content": {"content_type": "text", "parts": [words]},
                "create_time": 1.7e9 + n,
            },
        }

    return {
        "id": f"c{n}",
        "title": f"Chat {n}",
        "mapping": {"u": node("u", None, "user", text), "a": node("a", "u", "assistant", "ok")},
        "current_node": "a",
    }


def _claude(text: str, n: int) -> dict[str, Any]:
    return {
        "uuid": f"c{n}",
        "name": f"Chat {n}",
        "chat_messages": [
            {"uuid": f"m{n}", "sender": "human", "text": "", "content": [{"type": "text", "text": text}]},
            {"uuid": f"r{n}", "sender": "assistant", "text": "ok", "content": []},
        ],
    }


def _openwebui(text: str, n: int) -> dict[str, Any]:
    msgs = {
        "m": {"id": "m", "parentId": None, "role": "user", "content": text, "timestamp": 1.7e9},
        "r": {"id": "r", "parentId": "m", "role": "assistant", "content": "ok", "timestamp": 1.7e9},
    }
    return {"id": f"c{n}", "title": f"Chat {n}", "chat": {"history": {"currentId": "r", "messages": msgs}}}


def _generic(text: str, n: int) -> dict[str, Any]:
    return {
        "id": f"c{n}",
        "title": f"Chat {n}",
        "messages": [
            {"id": "m", "role": "user", "content": text},
            {"id": "r", "role": "assistant", "content": "ok"},
        ],
    }


def _json_list(make: Callable[[str, int], dict[str, Any]], name: str) -> Callable[[Path], Path]:
    def write(folder: Path) -> Path:
        path = folder / name
        path.write_text(_dump([make(CUT, 1), make("fine", 2)]), encoding="ascii")
        return path

    return write


def _jsonl(folder: Path) -> Path:
    path = folder / "threads.jsonl"
    path.write_text(_dump(_generic(CUT, 1)) + "\n" + _dump(_generic("fine", 2)) + "\n", encoding="ascii")
    return path


def _llm(folder: Path) -> Path:
    path = folder / "logs.db"
    con = apsw.Connection(str(path))
    con.execute((FIXTURES / "llm" / "logs.sql").read_text(encoding="utf-8"))
    # text stored by reference in the part's JSON payload, with the escape
    con.execute(
        "UPDATE parts SET text = NULL, payload = ? WHERE rowid = (SELECT min(rowid) FROM parts WHERE type = 'text')",
        (_dump({"text": CUT}),),
    )
    con.close()
    return path


FORMATS: dict[str, Callable[[Path], Path]] = {
    "chatgpt": _json_list(_chatgpt, "conversations.json"),
    "claude": _json_list(_claude, "conversations.json"),
    "openwebui": _json_list(_openwebui, "chat-export.json"),
    "generic": _json_list(_generic, "threads.json"),
    "jsonl": _jsonl,
    "llm": _llm,
}


def _contents(store: Store) -> list[str]:
    return [str(r[0]) for r in store.con.execute("SELECT content FROM messages ORDER BY id")]


def _repaired(report: ImportReport) -> None:
    assert report.errors == [], report.errors
    assert len(report.notes) == 1 and "U+FFFD" in report.notes[0].error, report.notes


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_a_cut_emoji_loses_nothing_in_any_export(store: Store, tmp_path: Path, fmt: str) -> None:
    path = FORMATS[fmt](tmp_path)
    report = import_paths(store, [path], embed=False, summarize=False)
    _repaired(report)
    contents = _contents(store)
    assert "caf\u00e9 \ufffd" in contents
    if fmt != "llm":
        assert store.stats()["threads"] == 2 and "fine" in contents
    again = import_paths(store, [path], embed=False, summarize=False)
    assert (again.threads_added, again.messages_added, again.errors) == (0, 0, [])


def _claude_line(uuid: str, role: str, text: str) -> str:
    content: Any = text if role == "user" else [{"type": "text", "text": text}]
    return _dump(
        {
            "parentUuid": None,
            "isSidechain": False,
            "type": role,
            "sessionId": SESSION,
            "uuid": uuid,
            "timestamp": "2025-10-02T09:00:00Z",
            "message": {"role": role, "content": content},
        }
    )


def _codex_line(role: str, text: str) -> str:
    kind = "input_text" if role == "user" else "output_text"
    return _dump(
        {
            "timestamp": "2025-10-03T14:05:09Z",
            "type": "response_item",
            "payload": {"type": "message", "role": role, "content": [{"type": kind, "text": text}]},
        }
    )


@pytest.mark.parametrize("agent", ["claude-code", "codex"])
def test_a_cut_emoji_in_a_growing_session_loses_nothing(store: Store, tmp_path: Path, agent: str) -> None:
    """Incremental capture: the line with the cut emoji and every line after it are imported, now and on
    later reads (the bad line used to drop the thread's new messages, and the offset moved past them)."""
    if agent == "claude-code":
        path = tmp_path / f"{SESSION}.jsonl"
        lines = [_claude_line(f"u{i}", "user" if i % 2 else "assistant", f"turn {i}") for i in range(1, 7)]
        lines[3] = _claude_line("u4", "assistant", CUT)
    else:
        path = tmp_path / f"rollout-2025-10-03T14-05-09-{SESSION}.jsonl"
        meta = {"timestamp": "2025-10-03T14:05:09Z", "type": "session_meta", "payload": {"id": SESSION}}
        lines = [_dump(meta)] + [
            _codex_line("user" if i % 2 else "assistant", f"turn {i}") for i in range(1, 6)
        ]
        lines[3] = _codex_line("user", CUT)
    path.write_text("\n".join(lines[:2]) + "\n", encoding="ascii")
    first = import_paths(store, [path], embed=False, summarize=False)
    assert first.errors == [] and first.messages_added >= 1
    with path.open("a", encoding="ascii") as fp:
        fp.write("\n".join(lines[2:]) + "\n")
    second = import_paths(store, [path], embed=False, summarize=False)
    _repaired(second)
    contents = _contents(store)
    assert "caf\u00e9 \ufffd" in contents and contents[-1] in ("turn 5", "turn 6")
    assert len(contents) == len(lines) - (1 if agent == "codex" else 0)
    third = import_paths(store, [path], embed=False, summarize=False)
    assert (third.messages_added, third.errors, third.files_unchanged) == (0, [], 1)


def test_a_lone_surrogate_in_a_bundle_memory_imports_every_memory(store: Store, tmp_path: Path) -> None:
    """31.11: the origin with a cut character used to be a traceback; memories after it were never read."""
    path = tmp_path / "bundle.json"
    memories = [
        {"category": "fact", "content": "Lives in Lisbon", "origin": "phone \ud83d"},
        {"category": "preference", "content": f"Likes {CUT}"},
        {"category": "skill", "content": "Knows Rust"},
    ]
    path.write_text(_dump({"source": "b", "threads": [], "memories": memories}), encoding="ascii")
    report = import_paths(store, [path], embed=False, summarize=False)
    assert report.errors == [] and report.memories_added == 3
    rows = {str(r[0]): str(r[1]) for r in store.con.execute("SELECT content, origin FROM long_term_memories")}
    assert rows["Lives in Lisbon"] == "phone \ufffd"
    assert "Likes caf\u00e9 \ufffd" in rows and "Knows Rust" in rows


@pytest.mark.skipif(os.name == "nt", reason="file names are text on Windows")
def test_file_names_that_are_not_utf8_import_and_are_remembered(store: Store, tmp_path: Path) -> None:
    """A session or export whose file name is not valid UTF-8 (Python holds such bytes as lone
    surrogates): the session's bookkeeping and a memory's source note could not be stored, and the whole
    import ended in a traceback."""
    folder = tmp_path / "projects"
    folder.mkdir()
    name = os.fsdecode(b"caf\xe9-" + SESSION.encode() + b".jsonl")
    (folder / name).write_text(_claude_line("u1", "user", "hello") + "\n", encoding="ascii")
    bundle = tmp_path / os.fsdecode(b"m\xe9moires.json")
    bundle.write_text(_dump({"memories": [{"category": "fact", "content": "Lives in Lisbon"}]}))
    report = import_paths(store, [folder, bundle], embed=False, summarize=False)
    assert report.errors == [] and (report.messages_added, report.memories_added) == (1, 1)
    [(note,)] = store.con.execute("SELECT source_note FROM long_term_memories").fetchall()
    assert note == "m\ufffdmoires.json"
    again = import_paths(store, [folder], embed=False, summarize=False)
    assert (again.files_unchanged, again.messages_added) == (1, 0)
