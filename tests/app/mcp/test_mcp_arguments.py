"""What a client is told about its arguments and the tools' hints, through a real MCP client (in process):
argument errors in one line naming the field and what it takes (issue 28.17), an unknown thread said to be
unknown (28.18), ids and offsets bounded (28.19), and each tool's annotations (28.22)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from app.mcp.server import build_server
from app.mcp.table import TOOLS
from embeddings import FakeEmbedder
from store import Store
from tests.app.mcp.mcp_helpers import fill, text_of


@pytest.fixture
def env(tmp_path: Path) -> Iterator[tuple[Store, dict[str, int]]]:
    s = Store(tmp_path / "chat.db", embedder=FakeEmbedder())
    ids = fill(s)
    yield s, ids
    s.close()


def one_line_error(result: Any) -> str:
    """The error text, checked to be one plain line (no pydantic report, no URL, no traceback)."""
    assert result.is_error
    text = text_of(result)
    assert "\n" not in text.strip(), text
    for noise in ("pydantic", "http", "validation error", "Arguments", "type=", "Traceback", "unexpected"):
        assert noise not in text, (noise, text)
    return text


# (tool, arguments, what the one line must say)
ARGUMENT_ERRORS: list[tuple[str, dict[str, Any], list[str]]] = [
    ("search_memory", {"query": 5}, ["query cannot be 5", "it takes text of 1-2,000 characters"]),
    ("search_memory", {}, ["query is missing", "text"]),
    ("search_memory", {"query": "x", "k": 0}, ["k cannot be 0", "a whole number from 1 to 50"]),
    (
        "read_thread",
        {"thread_id": 3},
        ["thread is missing", "a whole number from 1", "thread_id is not an argument of read_thread"],
    ),
    (
        "list_memories",
        {"category": "hobby"},
        ['category cannot be "hobby"', "one of preference, project, skill, fact (or leave it out)"],
    ),
    (
        "update_memory",
        {"id": 1, "importance": 11},
        ["importance cannot be 11", "a whole number from 1 to 10 (or leave it out)"],
    ),
    ("delete_memory", {"id": "one"}, ['id cannot be "one"', "a whole number from 1"]),
    ("list_threads", {"since": "last tuesday"}, ["since cannot be", "an ISO 8601 date"]),
    ("get_profile", {"budget": 5}, ["budget cannot be 5", "a whole number from 16 to 200,000"]),
    ("pin_memory", {"id": 1.5, "why": "x"}, ["id cannot be 1.5", "why is not an argument of pin_memory"]),
]


async def test_argument_errors_are_one_line_naming_the_field_and_what_it_takes(
    env: tuple[Store, dict[str, int]],
) -> None:
    s, _ = env
    async with Client(build_server(lambda: s)) as client:
        for tool, args, needles in ARGUMENT_ERRORS:
            text = one_line_error(await client.call_tool(tool, args))
            assert text.startswith(f"Invalid argument for {tool}: "), text
            for needle in needles:
                assert needle in text, (tool, args, needle, text)


MAX_ID = 2**53 - 1  # the largest integer a JavaScript client sends exactly
MAX_OFFSET = 1_000_000_000
HUGE = [10**23, 2**63, 2**63 - 1, MAX_ID + 1]


async def test_ids_and_offsets_are_bounded(env: tuple[Store, dict[str, int]]) -> None:
    """Every id and offset argument: a huge value is one clear line (it was "unexpected OverflowError"
    for values past SQLite's integers), and the largest allowed id is simply not found."""
    s, ids = env
    calls: list[tuple[str, dict[str, Any], str]] = [
        ("read_thread", {"thread": ids["backups"]}, "offset"),
        ("read_thread", {"thread": ids["backups"]}, "around_message"),
        ("read_thread", {}, "thread"),
        ("get_context", {"budget": 1000}, "thread"),
        ("search_conversations", {"query": "timer"}, "thread"),
        ("list_threads", {}, "offset"),
        ("list_memories", {}, "offset"),
        ("update_memory", {"importance": 3}, "id"),
        ("delete_memory", {}, "id"),
        ("restore_memory", {}, "id"),
        ("pin_memory", {}, "id"),
        ("unpin_memory", {}, "id"),
        ("resolve_conflict", {"keep": "new"}, "id"),
    ]
    async with Client(build_server(lambda: s)) as client:
        for tool, base, field in calls:
            bound = MAX_OFFSET if field == "offset" else MAX_ID
            for value in HUGE:
                text = one_line_error(await client.call_tool(tool, {**base, field: value}))
                assert f"{field} cannot be {value}" in text and f"to {bound:,}" in text, (tool, text)
        r = await client.call_tool("read_thread", {"thread": MAX_ID})
        assert "there is no thread with id 9007199254740991" in one_line_error(r)
        r = await client.call_tool("delete_memory", {"id": MAX_ID})
        assert "no memory with id 9007199254740991" in one_line_error(r)
        r = await client.call_tool("list_threads", {"offset": MAX_OFFSET})
        assert not r.is_error and r.structured_content["threads"] == []


async def test_an_unknown_thread_is_said_to_be_unknown(env: tuple[Store, dict[str, int]]) -> None:
    """Not "no good match" (a search's answer): the id is wrong, and the assistant is told where ids come from."""
    s, ids = env
    calls: list[tuple[str, dict[str, Any]]] = [
        ("read_thread", {"thread": 424242}),
        ("search_conversations", {"query": "restic", "thread": 424242}),
        ("get_context", {"thread": 424242, "budget": 1000}),
    ]
    async with Client(build_server(lambda: s)) as client:
        for tool, args in calls:
            text = one_line_error(await client.call_tool(tool, args))
            assert "there is no thread with id 424242" in text and "list_threads" in text, (tool, text)
            assert "no good match" not in text
        r = await client.call_tool("search_conversations", {"query": "restic", "thread": ids["backups"]})
        assert not r.is_error and r.structured_content["results"]


# (read_only, destructive, idempotent) per tool: what a client uses to decide whether to ask the user first.
ANNOTATIONS = {
    "search_memory": (True, False, True),
    "get_profile": (True, False, True),
    "list_memories": (True, False, True),
    "search_conversations": (True, False, True),
    "list_threads": (True, False, True),
    "read_thread": (True, False, True),
    "get_context": (True, False, True),
    "list_conflicts": (True, False, True),
    "add_memory": (False, True, True),  # merges into or supersedes an existing memory
    "update_memory": (False, True, True),
    "delete_memory": (False, True, True),
    "unpin_memory": (False, True, True),  # the memory loses its protection from cleanup and merges
    "resolve_conflict": (False, True, True),
    "restore_memory": (False, False, True),
    "pin_memory": (False, False, True),
}


async def test_every_tool_is_annotated_for_what_it_can_do(env: tuple[Store, dict[str, int]]) -> None:
    s, _ = env
    assert set(ANNOTATIONS) == {spec.name for spec in TOOLS}
    async with Client(build_server(lambda: s)) as client:
        tools = (await client.list_tools()).tools
    for t in tools:
        a = t.annotations
        assert a is not None and a.open_world_hint is False, t.name
        assert (a.read_only_hint, a.destructive_hint, a.idempotent_hint) == ANNOTATIONS[t.name], t.name
