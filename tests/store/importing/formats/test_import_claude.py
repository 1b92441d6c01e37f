"""Claude.ai exports: text from content blocks, reasoning and tools in metadata, branches, memories."""

from __future__ import annotations

from pathlib import Path

from store.importing.formats import detect_format
from store.importing.formats.claude import memory_lines
from tests.store.importing.formats.import_helpers import FIXTURES, make_zip, msgs, read

DIR = FIXTURES / "claude"
CONV = DIR / "conversations.json"
MEMORIES = DIR / "memories.json"


def test_detected() -> None:
    assert detect_format(DIR) == "claude"
    assert detect_format(CONV) == "claude"
    assert detect_format(MEMORIES) == "claude"


def test_items_in_order() -> None:
    r = read(CONV)
    # cl-empty has no messages: skipped, not an error.
    assert r.order == [
        "thread:cl-blocks",
        "thread:cl-branches",
        "thread:cl-leaf",
        "problem:cl-bad-type",
        "problem:cl-bad-sender",
    ]
    assert [p.error for p in r.problems] == [
        "chat_messages is dict, expected a list",
        "message x1 has unknown sender 'robot'",
    ]
    assert all(p.file == str(CONV) for p in r.problems)


def test_blocks_attachments_thinking_and_tools() -> None:
    t = read(CONV).thread("cl-blocks")
    assert (t.source, t.title, t.metadata) == ("claude", "SQLite tuning", {"summary": "Talked about WAL."})
    assert msgs(t) == [
        (
            "h1",
            "user",
            "Should I use WAL mode?\nMy app has one writer.\n\n"
            "--- attachment: schema.sql ---\nCREATE TABLE t(x);\n--- end of attachment: schema.sql ---",
        ),
        ("a1", "assistant", "Yes, use WAL.\n\nSet a busy timeout too."),
        ("h2", "tool", ""),  # a human envelope made only of a tool result
    ]
    h1, a1, h2 = t.messages
    assert h1.metadata == {"attachments": ["schema.sql"], "files": ["diagram.png"]}
    assert a1.metadata == {
        "thinking": ["One writer, many readers: WAL fits."],
        "tool_calls": [{"id": "tu-1", "name": "web_search", "input": {"query": "sqlite wal"}}],
        "tool_results": [
            {"tool_use_id": "tu-1", "name": "web_search", "content": "WAL docs...", "is_error": False}
        ],
    }
    assert h2.metadata["tool_results"][0]["content"] == "ok"
    assert [m.created_at for m in t.messages] == [1736499601.0, 1736499609.5, 1736499660.0]
    assert (t.created_at, t.updated_at) == (1736499600.0, 1736499900.0)


def test_branches_follow_the_newest_leaf_and_text_fallback() -> None:
    t = read(CONV).thread("cl-branches")
    assert msgs(t) == [
        ("b-h1", "user", "Name a colour"),
        ("b-a1", "assistant", "Blue"),
        ("b-h2-new", "user", "Another one, warmer"),
        ("b-a2-new", "assistant", "Orange"),
    ]
    assert t.title == "Name a colour"  # name "": first user line


def test_current_leaf_wins_over_newer_retry() -> None:
    t = read(CONV).thread("cl-leaf")
    assert msgs(t) == [("l-h1", "user", "Pick a number"), ("l-a2-old", "assistant", "Seven")]


def test_memories_one_per_line_with_categories() -> None:
    r = read(MEMORIES)
    assert [(m.category, m.content) for m in r.memories] == [
        ("project", "Alex is building memapp, an offline memory app in Python."),
        ("preference", "Alex prefers pytest over unittest."),
        ("fact", "Alex lives in Lisbon."),
        ("skill", "Alex knows how to write Rust."),
        ("project", "The project stores everything in one SQLite file."),
        ("preference", "Alex likes short commit messages."),
    ]
    assert {m.origin for m in r.memories} == {"claude-memory"}
    assert r.threads == [] and r.problems == []


def test_memory_lines_skip_headings_bullets_and_duplicates() -> None:
    lines = memory_lines(
        "## Preferences\n- Dark mode\n- dark mode\n\n**Skills**\n1) Knows SQL\n", default="fact"
    )
    assert [(m.category, m.content) for m in lines] == [("preference", "Dark mode"), ("skill", "Knows SQL")]


def test_folder_and_zip_give_conversations_then_memories(tmp_path: Path) -> None:
    archive = make_zip(
        tmp_path / "data-2025-batch-0000.zip",
        {
            "conversations.json": CONV,
            "memories.json": MEMORIES,
            "users.json": DIR / "users.json",
            "projects.json": b"[]",
        },
    )
    assert detect_format(archive) == "claude"
    from_zip, from_dir = read(archive), read(DIR)
    assert [t.external_id for t in from_zip.threads] == ["cl-blocks", "cl-branches", "cl-leaf"]
    assert len(from_zip.memories) == 6
    assert from_zip.threads == from_dir.threads and from_zip.memories == from_dir.memories
    assert from_zip.problems[0].file == f"{archive}!conversations.json"


def test_zip_with_only_memories(tmp_path: Path) -> None:
    archive = make_zip(tmp_path / "m.zip", {"memories.json": MEMORIES})
    assert detect_format(archive) == "claude"
    assert len(read(archive).memories) == 6
