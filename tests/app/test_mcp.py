"""An MCP client initialises the server in-process, lists the tools, calls each one against a temp chat.db."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import Client

from app.mcp_server import MAX_CHARS, build_server
from embeddings import FakeEmbedder
from store import Store, ThreadIn
from store.records import MessageIn

TOOLS = {
    "search_memory",
    "add_memory",
    "list_memories",
    "pin_memory",
    "search_conversations",
    "get_context",
    "list_conflicts",
    "resolve_conflict",
}


@pytest.fixture
def mcp_store(tmp_path: Path) -> Store:
    s = Store(tmp_path / "chat.db", embedder=FakeEmbedder())
    s.write_thread(
        ThreadIn(
            "generic",
            "t1",
            "Home lab backups",
            [
                MessageIn("user", "Should I use restic or borg for the NAS backups?", "m1", 1_700_000_000.0),
                MessageIn("assistant", "Use restic: it supports S3 and deduplicates.", "m2", 1_700_000_060.0),
                MessageIn(
                    "user", "OK, we decided on restic with a nightly systemd timer.", "m3", 1_700_000_120.0
                ),
            ],
        )
    )
    s.add_memory("I prefer restic for backups", "preference", importance=7)
    s.add_memory("My NAS is a Synology DS920+", "fact")
    return s


def text_of(result) -> str:  # type: ignore[no-untyped-def]
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


async def test_lists_and_calls_every_tool(mcp_store: Store) -> None:
    server = build_server(lambda: mcp_store)
    async with Client(server) as client:
        tools = await client.list_tools()
        assert {t.name for t in tools.tools} == TOOLS
        r = await client.call_tool("search_memory", {"query": "restic backups"})
        assert not r.is_error and "I prefer restic for backups" in text_of(r)
        assert mcp_store.list_memories(category="preference")[0].access_count == 1

        r = await client.call_tool(
            "add_memory", {"content": "I am learning Go", "category": "skill", "importance": 6}
        )
        assert not r.is_error and text_of(r).startswith("Added memory")
        added = [m for m in mcp_store.list_memories(category="skill")]
        assert [(m.content, m.importance, m.origin) for m in added] == [("I am learning Go", 6, "mcp")]
        assert [h.event for h in mcp_store.memory_history(added[0].id)] == ["add"]

        r = await client.call_tool("list_memories", {"category": "fact"})
        assert "Synology" in text_of(r) and "restic" not in text_of(r)

        r = await client.call_tool("pin_memory", {"id": added[0].id})
        assert not r.is_error and mcp_store.get_memory(added[0].id).pinned

        r = await client.call_tool("search_conversations", {"query": "systemd timer", "k": 3})
        body = text_of(r)
        assert "Home lab backups" in body and "nightly systemd timer" in body

        r = await client.call_tool("get_context", {"thread": 1, "budget": 2000, "query": "backups"})
        assert not r.is_error
        ctx = json.loads(text_of(r))
        assert ctx["token_stats"]["total"] <= 2000
        assert ctx["messages"][-1]["content"].startswith("OK, we decided on restic")


@pytest.mark.parametrize(
    ("tool", "args", "needle"),
    [
        ("add_memory", {"content": "x", "category": "hobby"}, "unknown category"),
        ("add_memory", {"content": "x", "category": "fact", "importance": 11}, "1-10"),
        ("add_memory", {"content": "   ", "category": "fact"}, "empty"),
        ("pin_memory", {"id": 999}, "no memory with id 999"),
        ("search_memory", {"query": "x", "k": 0}, "k must be"),
        ("get_context", {"thread": 42, "budget": 1000}, "no thread with id 42"),
    ],
)
async def test_bad_arguments_are_mcp_errors_not_crashes(
    mcp_store: Store, tool: str, args: dict, needle: str
) -> None:
    server = build_server(lambda: mcp_store)
    async with Client(server) as client:
        r = await client.call_tool(tool, args)
        assert r.is_error and needle in text_of(r)
        # The server is still alive afterwards.
        ok = await client.call_tool("list_memories", {})
        assert not ok.is_error


async def test_results_are_capped(mcp_store: Store) -> None:
    for i in range(40):
        mcp_store.add_memory(f"memory {i}: " + "lorem ipsum dolor " * 40 + str(i), "fact", force=True)
    server = build_server(lambda: mcp_store)
    async with Client(server) as client:
        r = await client.call_tool("list_memories", {"limit": 50})
        assert len(text_of(r)) <= MAX_CHARS


async def test_stdio_server_speaks_only_protocol(tmp_path: Path) -> None:
    """`memapp mcp` as a real subprocess: initialise, list tools, add and search; stdout is protocol only."""
    import sys

    from mcp import StdioServerParameters

    cfg = tmp_path / "config.toml"
    cfg.write_text("[embedding]\nenabled = false\n")
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "app", "mcp"],
        env={
            "MEMAPP_DB": str(tmp_path / "chat.db"),
            "MEMAPP_CONFIG": str(cfg),
            "PATH": "/usr/bin:/bin",
            "HOME": str(tmp_path),
        },
        cwd=str(Path(__file__).resolve().parents[2]),
    )
    async with Client(params) as client:
        assert {t.name for t in (await client.list_tools()).tools} == TOOLS
        r = await client.call_tool(
            "add_memory", {"content": "Prefers tea over coffee", "category": "preference"}
        )
        assert not r.is_error
        r = await client.call_tool("search_memory", {"query": "tea"})
        assert "Prefers tea over coffee" in text_of(r)
