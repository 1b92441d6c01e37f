"""Claude Code and Codex CLI session logs: what is kept, what is condensed, and reads from an offset."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from store.importing.formats import detect_format, read_export
from store.importing.formats.claude_code import read_session as read_claude
from store.importing.formats.codex import read_session as read_codex
from store.message_notes import notes, thread_notes, tool_line
from store.records import ThreadIn
from tests.store.importing.formats.agent_fixtures import claude_session_lines, write_session
from tests.store.importing.formats.import_helpers import FIXTURES, collect

CLAUDE_DIR = FIXTURES / "claude-code"
CLAUDE = CLAUDE_DIR / "-home-ana-src-tide" / "5f0c7a52-3d0e-4b7a-9c11-2a9b1f3e8d01.jsonl"
CODEX_DIR = FIXTURES / "codex"
CODEX = (
    CODEX_DIR
    / "2025"
    / "10"
    / "03"
    / "rollout-2025-10-03T14-05-09-0199a8c3-7e2b-7c40-9d8e-5b1f6a2c4e10.jsonl"
)
LEGACY = CODEX_DIR / "legacy" / "rollout-2025-05-20-3c1d9e42-1a2b-4c3d-8e9f-0a1b2c3d4e5f.jsonl"


def _id(n: int) -> str:
    return f"a0000000-0000-4000-8000-{n:012x}"


def test_claude_code_session_keeps_words_and_condenses_tools() -> None:
    r = collect(read_export(CLAUDE))
    assert r.problems == [] and len(r.threads) == 1
    t = r.threads[0]
    assert (t.source, t.external_id, t.title) == (
        "claude-code",
        "5f0c7a52-3d0e-4b7a-9c11-2a9b1f3e8d01",
        "Fix flaky tide-gauge parser test",
    )
    assert t.metadata == {
        "agent": "claude-code",
        "project": "/home/ana/src/tide",
        "git_branch": "fix/parser-flake",
        "agent_version": "2.0.31",
        "model": "claude-sonnet-4-5-20250929",
    }
    assert [(m.external_id, m.role) for m in t.messages] == [
        (_id(1), "user"),
        (_id(3), "assistant"),
        (_id(4), "tool"),
        (_id(0xB), "assistant"),
        (_id(0xE), "user"),
        (_id(0xF), "assistant"),
    ]
    by = {m.external_id: m for m in t.messages}
    assert by[_id(1)].content.startswith("The test_parse_station test fails")
    assert by[_id(1)].created_at == 1759395605.0
    run = by[_id(4)]
    assert run.content == ""  # tool traffic is metadata, never indexed prose
    assert run.metadata == {
        "tool_calls": [
            {"name": "Read", "input": "/home/ana/src/tide/tests/test_parse.py", "id": "toolu_01"},
            {
                "name": "Bash",
                "input": "pytest tests/test_parse.py -x -q -p no:randomly",
                "id": "toolu_02",
                "error": True,
            },
            {"name": "Task", "input": "Search for tz handling", "id": "toolu_03"},
        ]
    }
    assert tool_line(run.metadata) == "3 tool calls: Read, Bash, Task · 1 failed"
    assert by[_id(0xB)].metadata == {
        "tool_calls": [{"name": "Edit", "input": "/home/ana/src/tide/tide/parse.py", "id": "toolu_04"}]
    }
    assert by[_id(0xE)].metadata == {"attachments": ["1 image"]}
    assert notes(by[_id(0xE)].metadata) == ["attached: 1 image"]
    text = "\n".join(m.content for m in t.messages)
    for gone in ("SIDECHAIN", "Flaky one time in ten", "/clear", "Caveat", "KeyError", "import random"):
        assert gone not in text  # sub-agent, thinking, slash command, meta line, tool output
    assert (
        thread_notes(t.metadata)
        == "project /home/ana/src/tide · branch fix/parser-flake · model claude-sonnet-4-5-20250929"
    )


def test_codex_rollout_skips_injected_context_reasoning_and_ui_echoes() -> None:
    r = collect(read_export(CODEX))
    assert r.problems == []
    [t] = r.threads
    assert (t.source, t.external_id, t.title) == (
        "codex",
        "0199a8c3-7e2b-7c40-9d8e-5b1f6a2c4e10",
        "Add a --since option to the tide export command.",
    )
    assert t.metadata == {
        "agent": "codex",
        "project": "/home/ana/src/tide",
        "git_branch": "main",
        "agent_version": "0.44.0",
        "model": "gpt-5-codex",
    }
    assert [(m.role, m.content) for m in t.messages] == [
        ("user", "Add a --since option to the tide export command."),
        ("tool", ""),
        ("assistant", "Added --since; one test still expects the old signature."),
        ("user", "Update that test too."),
        ("tool", ""),
        ("assistant", "Updated tests/test_cli.py; all 42 tests pass."),
    ]
    calls = t.messages[1].metadata["tool_calls"]
    assert [c["name"] for c in calls] == ["shell", "apply_patch", "shell"]
    assert calls[0]["input"] == "bash -lc rg -n 'def export' tide"
    assert [c.get("error", False) for c in calls] == [False, False, True]  # exit code 1
    assert t.messages[4].metadata == {
        "tool_calls": [{"name": "shell", "input": "sed -n 1,20p tests/test_cli.py", "id": "call_A4"}]
    }
    assert len({m.external_id for m in t.messages}) == 6  # byte offsets: unique, stable while appended to


def test_codex_legacy_rollout_without_envelopes() -> None:
    [t] = collect(read_export(LEGACY)).threads
    assert t.external_id == "3c1d9e42-1a2b-4c3d-8e9f-0a1b2c3d4e5f"
    assert [(m.role, m.content) for m in t.messages] == [
        ("user", "What does the tide CLI's --dry-run flag do?"),
        ("tool", ""),
        ("assistant", "It prints what would be exported without writing files."),
    ]
    assert t.created_at == 1747728000.0  # the session's start: its lines carry no time


@pytest.mark.parametrize(
    ("path", "fmt"),
    [
        (CLAUDE, "claude-code"),
        (CLAUDE_DIR, "claude-code"),
        (CODEX, "codex"),
        (CODEX_DIR, "codex"),
        (LEGACY, "codex"),
    ],
)
def test_detection(path: Path, fmt: str) -> None:
    assert detect_format(path) == fmt


def test_a_line_cut_in_the_middle_is_left_for_next_time(tmp_path: Path) -> None:
    """Every cut point in the file: the read stops at the last whole line, without a problem, and reading
    on from there gives exactly the messages a whole read gives (tool runs may split, calls do not)."""
    data = CLAUDE.read_bytes()
    whole = collect(read_export(CLAUDE)).threads[0]
    path = tmp_path / CLAUDE.name
    for cut in range(1, len(data), 97):
        path.write_bytes(data[:cut])
        first, end = read_claude(path, 0)
        assert all(not hasattr(i, "error") for i in first), cut
        assert end <= cut and (end == 0 or data[end - 1 : end] == b"\n")
        path.write_bytes(data)
        rest, final = read_claude(path, end)
        assert final == len(data)
        got = [m for item in first + rest if isinstance(item, ThreadIn) for m in item.messages]
        assert [m.content for m in got if m.content] == [m.content for m in whole.messages if m.content]
        calls = [c for m in got for c in m.metadata.get("tool_calls", [])]
        assert len(calls) == 4, cut


def test_a_read_from_an_offset_keeps_the_stored_title(tmp_path: Path) -> None:
    data = CLAUDE.read_bytes()
    middle = data.index(b"\n", len(data) // 2) + 1
    items, end = read_claude(CLAUDE, middle)
    assert end == len(data)
    [t] = [i for i in items if isinstance(i, ThreadIn)]
    assert t.title == ""  # the writer keeps the title it has


def test_thousand_tool_calls_are_one_message(tmp_path: Path) -> None:
    path = write_session(tmp_path, claude_session_lines(1, 1000, fail_every=7))
    [t] = collect(read_export(path)).threads
    assert [m.role for m in t.messages] == ["user", "tool", "assistant"]
    calls = t.messages[1].metadata["tool_calls"]
    assert len(calls) == 1000
    assert sum(1 for c in calls if c.get("error")) == 1000 // 7
    assert tool_line(t.messages[1].metadata) == "1000 tool calls: Bash ×500, Read ×500 · 142 failed"


def test_codex_cut_mid_line(tmp_path: Path) -> None:
    data = CODEX.read_bytes()
    path = tmp_path / CODEX.name
    cut = data.index(b"Update that test") + 5
    path.write_bytes(data[:cut])
    items, end = read_codex(path, 0)
    [t] = [i for i in items if isinstance(i, ThreadIn)]
    assert [m.content for m in t.messages][-1] == "Added --since; one test still expects the old signature."
    assert len(items) == 1 and data[end - 1 : end] == b"\n"


def test_notes_for_chatgpt_messages_attachments_and_model() -> None:
    assert notes({"attachments": ["cat.png", "menu.pdf"], "model": "gpt-4o", "assets": ["file-1"]}) == [
        "attached: cat.png, menu.pdf",
        "model: gpt-4o",
    ]
    assert notes({}) == [] and tool_line({"tool_calls": []}) is None
    many = {"tool_calls": [{"name": f"t{i % 8}"} for i in range(16)]}
    assert tool_line(many) == "16 tool calls: t0 ×2, t1 ×2, t2 ×2, t3 ×2, t4 ×2, t5 ×2, 2 more"


def _cc_user(uuid: str, content: object, *, meta: bool = False, version: str = "1.0.58") -> str:
    line: dict[str, object] = {
        "parentUuid": None,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/home/ana/src/todo",
        "sessionId": "9d77ea9c-a7a5-4b13-a590-baaf81427e77",
        "version": version,
        "type": "user",
        "message": {"role": "user", "content": content},
        "uuid": uuid,
        "timestamp": "2025-07-23T02:34:13.997Z",
    }
    if meta:
        line["isMeta"] = True
    return json.dumps(line)


def test_slash_commands_keep_the_words_the_person_typed(tmp_path: Path) -> None:
    """28.2: a custom command's arguments are the person's words (`/orchestrator create TODO app by
    Next.js`); Claude Code 1.0.x sessions started with one were stored with no user message, "Untitled".
    Both tag orders, text blocks, a command without arguments; housekeeping (`/model`) and its output go."""
    lines = [
        _cc_user(
            "u1",
            "<command-message>orchestrator is running…</command-message>\n"
            "<command-name>/orchestrator</command-name>\n<command-args>create TODO app by Next.js</command-args>",
        ),
        _cc_user(
            "u2", [{"type": "text", "text": "You are an orchestrator. Task: create TODO app"}], meta=True
        ),
        _cc_user(
            "u3",
            "<command-name>/model</command-name>\n<command-message>model</command-message>\n"
            "<command-args></command-args>",
            version="2.0.31",
        ),
        _cc_user("u4", "<local-command-stdout>Set model to opus</local-command-stdout>", version="2.0.31"),
        _cc_user(
            "u5", "<command-message>quack is running…</command-message>\n<command-name>/quack</command-name>"
        ),
        _cc_user(
            "u6",
            [
                {
                    "type": "text",
                    "text": "<command-name>/compact</command-name>\n<command-message>compact"
                    "</command-message>\n<command-args>keep the API notes</command-args>",
                }
            ],
            version="2.0.31",
        ),
        _cc_user(
            "u7",
            "<command-name>/clear</command-name>\n<command-message>clear</command-message>\n"
            "<command-args></command-args>",
            version="2.0.31",
        ),
    ]
    path = tmp_path / "9d77ea9c-a7a5-4b13-a590-baaf81427e77.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    [t] = collect(read_export(path)).threads
    assert [(m.external_id, m.role, m.content) for m in t.messages] == [
        ("u1", "user", "/orchestrator create TODO app by Next.js"),
        ("u5", "user", "/quack"),
        ("u6", "user", "/compact keep the API notes"),
    ]
    assert t.title == "/orchestrator create TODO app by Next.js"
