"""`memapp mcp` as an MCP client runs it: a spawned process over stdio, sockets refused inside it.

One server process is driven through every tool, with good arguments (checked against chat.db) and bad
ones (each an isError result that says what was wrong, after which the server still answers).
"""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from app.mcp.table import TOOLS
from store import Store
from tests.app.mcp.mcp_helpers import NETGUARD, fill, server_params, text_of

READ_TOOLS = {s.name for s in TOOLS if s.read_only}
ALL_TOOLS = {s.name for s in TOOLS}

# (tool, arguments, words the error must contain): one or more per tool.
BAD_CALLS: list[tuple[str, dict[str, Any], str]] = [
    ("search_memory", {"query": "x", "k": 0}, "k cannot be 0; it takes a whole number from 1 to 50"),
    ("search_memory", {"query": "x", "category": "hobby"}, "one of preference, project, skill, fact"),
    ("search_memory", {}, "query is missing"),
    ("get_profile", {"budget": 5}, "from 16 to 200,000"),
    ("list_memories", {"limit": 1000}, "from 1 to 100"),
    ("list_memories", {"offset": -1}, "offset cannot be -1"),
    ("add_memory", {"content": "x", "category": "hobby"}, "one of preference, project, skill, fact"),
    ("add_memory", {"content": "x", "category": "fact", "importance": 11}, "from 1 to 10"),
    ("add_memory", {"content": "   ", "category": "fact"}, "memory text is empty"),
    ("update_memory", {"id": 999, "importance": 3}, "no memory with id 999"),
    ("update_memory", {"id": 1}, "nothing to change"),
    ("update_memory", {"id": 1, "importance": 0}, "importance cannot be 0"),
    ("delete_memory", {"id": 999}, "no memory with id 999"),
    ("delete_memory", {"id": "one"}, "a whole number"),
    ("restore_memory", {"id": 999}, "no memory with id 999"),
    ("pin_memory", {"id": 999}, "no memory with id 999"),
    ("unpin_memory", {"id": 0}, "id cannot be 0"),
    ("search_conversations", {"query": "x", "k": 51}, "k cannot be 51"),
    ("search_conversations", {"query": "x", "role": "robot"}, "one of system, user, assistant, tool"),
    ("search_conversations", {"query": "x", "scope": "summaries", "role": "user"}, "can match these filters"),
    ("list_threads", {"since": "2024-02-01", "until": "2024-01-01"}, "since must be before until"),
    ("list_threads", {"since": "last tuesday"}, "since"),
    ("list_threads", {"sort": "random"}, "one of updated, created, title, messages, tokens"),
    ("read_thread", {"thread": 42}, "there is no thread with id 42"),
    ("read_thread", {"thread": 1, "around_message": 4}, "is in thread 2, not in thread 1"),
    ("get_context", {"thread": 42, "budget": 1000}, "no thread with id 42"),
    ("get_context", {"thread": 1, "budget": 10}, "from 64 to 200,000"),
    ("list_conflicts", {"limit": 0}, "limit cannot be 0"),
    ("resolve_conflict", {"id": 999, "keep": "new"}, "no conflict with id 999"),
    ("resolve_conflict", {"id": 1, "keep": "maybe"}, "one of new, old, both, merge"),
]


@pytest.fixture
def filled_db(tmp_path: Path) -> tuple[Path, dict[str, int]]:
    db = tmp_path / "chat.db"
    with Store(db, embedder=None) as s:
        ids = fill(s)
    return db, ids


async def test_every_tool_over_stdio(tmp_path: Path, filled_db: tuple[Path, dict[str, int]]) -> None:
    db, ids = filled_db
    async with Client(server_params(db, tmp=tmp_path)) as client:
        assert client.server_info is not None and client.server_info.name == "memapp"
        assert client.server_info.version == metadata.version("memapp")
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools) == ALL_TOOLS

        async def call(name: str, args: dict[str, Any]) -> Any:
            r = await client.call_tool(name, args)
            assert not r.is_error, text_of(r)
            return r

        r = await call("search_memory", {"query": "restic backups"})
        hit = r.structured_content["results"][0]
        assert hit["id"] == ids["restic"] and hit["matched"] == ["keyword"] and hit["score"] > 0
        assert (
            "semantic search unavailable" in r.structured_content["notice"]
        )  # the store's notice, passed on
        assert "I prefer restic for backups" in text_of(r) and "shares words" in text_of(r)

        r = await call("get_profile", {"budget": 200})
        assert r.structured_content["memories"][0]["id"] == ids["pinned"]
        assert r.structured_content["tokens"] <= 200 and "British English" in text_of(r)

        r = await call("list_memories", {"category": "fact"})
        assert [m["id"] for m in r.structured_content["memories"]] == [ids["nas"]]

        r = await call("add_memory", {"content": "Prefers tea over coffee", "category": "preference"})
        new_id = r.structured_content["memory"]["id"]
        assert r.structured_content["action"] == "added"

        r = await call(
            "update_memory", {"id": new_id, "content": "Prefers green tea over coffee", "importance": 6}
        )
        assert r.structured_content["memory"]["content"] == "Prefers green tea over coffee"

        r = await call("delete_memory", {"id": new_id})
        assert r.structured_content["memory"]["in_trash"]
        r = await call("restore_memory", {"id": new_id})
        assert not r.structured_content["memory"]["in_trash"]
        r = await call("pin_memory", {"id": new_id})
        assert r.structured_content["memory"]["pinned"]
        r = await call("unpin_memory", {"id": new_id})
        assert not r.structured_content["memory"]["pinned"]

        r = await call("search_conversations", {"query": "systemd timer", "k": 3})
        assert len(r.structured_content["results"]) == 3
        assert "nightly systemd timer" in text_of(r) or "systemd timer schedule" in text_of(r)

        r = await call("list_threads", {"source": "chatgpt"})
        assert [t["title"] for t in r.structured_content["threads"]] == ["Sourdough starter"]

        r = await call("read_thread", {"thread": ids["backups"], "limit": 2})
        assert [m["seq"] for m in r.structured_content["messages"]] == [0, 1]
        assert r.structured_content["next_offset"] == 2

        r = await call("get_context", {"thread": ids["backups"], "budget": 2000, "query": "backups"})
        ctx = r.structured_content
        assert ctx["token_stats"]["total"] <= 2000
        assert ctx["messages"][-1]["content"].startswith("OK, we decided on restic")

        # Bad arguments: a tool error that names the problem, and the server carries on.
        for tool, args, needle in BAD_CALLS:
            r = await client.call_tool(tool, args)
            assert r.is_error, (tool, args)
            assert needle in text_of(r), (tool, args, text_of(r))
            assert text_of(r).strip() != f"Error executing tool {tool}"
        assert {tool for tool, _, _ in BAD_CALLS} == ALL_TOOLS
        await call("list_memories", {})

    with Store(db, embedder=None) as s:  # what the calls did is in the file, with history
        events = [h.event for h in s.memory_history(new_id)]
        assert events == ["add", "edit", "importance", "delete", "restore", "pin", "unpin"]
        assert s.get_memory(new_id).origin == "mcp"


async def test_read_only_offers_only_the_read_tools(
    tmp_path: Path, filled_db: tuple[Path, dict[str, int]]
) -> None:
    db, _ = filled_db
    async with Client(server_params(db, "--read-only", tmp=tmp_path)) as client:
        tools = (await client.list_tools()).tools
        assert {t.name for t in tools} == READ_TOOLS
        assert all(t.annotations and t.annotations.read_only_hint for t in tools)
        assert "read-only" in (client.instructions or "") and "add_memory" not in (client.instructions or "")
        r = await client.call_tool("add_memory", {"content": "x", "category": "fact"})
        assert r.is_error and "add_memory" in text_of(r)


def test_a_missing_database_is_refused_not_created(tmp_path: Path) -> None:
    missing = tmp_path / "typo" / "chat.db"
    memapp = str(Path(sys.executable).with_name("memapp"))
    out = subprocess.run(
        [memapp, "--db", str(missing), "mcp"],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert out.returncode == 2 and out.stdout == ""
    assert f"{missing} does not exist" in out.stderr and "--create" in out.stderr
    assert not missing.parent.exists()


async def test_create_makes_a_new_database(tmp_path: Path) -> None:
    db = tmp_path / "new.db"
    async with Client(server_params(db, "--create", tmp=tmp_path)) as client:
        r = await client.call_tool("add_memory", {"content": "Prefers tea", "category": "preference"})
        assert not r.is_error
    with Store(db, embedder=None) as s:
        assert [m.content for m in s.list_memories()] == ["Prefers tea"]


def test_the_spawned_server_cannot_reach_the_network(tmp_path: Path) -> None:
    """The guard the spawned servers run under really refuses sockets (else the tests above prove less)."""
    code = "import os, socket\nassert os.environ['MEMAPP_TEST_NETGUARD'] == 'on'\nsocket.create_connection(('127.0.0.1', 9))"
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={"PYTHONPATH": str(NETGUARD)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 1 and "network access is refused" in out.stderr


@pytest.mark.model
async def test_search_memory_by_meaning_with_the_real_model(tmp_path: Path, real_embedder: Any) -> None:
    """The spawned server loads the real model on the first search and finds a memory by meaning alone."""
    db = tmp_path / "chat.db"
    with Store(db, embedder=real_embedder) as s:
        tea = s.add_memory("Prefers green tea to coffee in the morning", "preference").memory
        s.add_memory("Works on a Rust parser for log files", "project")
    params = server_params(db, tmp=tmp_path)
    assert params.env is not None
    params.env["MEMAPP_CONFIG"] = str(tmp_path / "default-config.toml")  # no file: the model is on
    async with Client(params) as client:
        r = await client.call_tool("search_memory", {"query": "what hot drink do I like", "k": 1})
    assert not r.is_error, text_of(r)
    data = r.structured_content
    assert data["mode"] == "hybrid" and data["notice"] is None
    assert [h["id"] for h in data["results"]] == [tea.id] and data["results"][0]["matched"] == ["semantic"]
