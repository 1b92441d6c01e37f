"""The assistant sees and resolves conflicts over MCP, and memory hits say where they came from (issue 17)."""

from __future__ import annotations

from pathlib import Path

from mcp import Client

from app.mcp_server import build_server
from embeddings import FakeEmbedder
from store import Store
from store.truth.conflicts import count_open


def text_of(result) -> str:  # type: ignore[no-untyped-def]
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


async def test_list_and_resolve_conflicts_and_superseded_hits(tmp_path: Path) -> None:
    store = Store(tmp_path / "chat.db", embedder=FakeEmbedder())
    light = store.add_memory("Prefers light mode in the editor", "preference", pinned=True).memory
    server = build_server(lambda: store)
    async with Client(server) as client:
        r = await client.call_tool("list_conflicts", {})
        assert not r.is_error and text_of(r) == "No conflicts to review."
        r = await client.call_tool(
            "add_memory", {"content": "Prefers dark mode in the editor", "category": "preference"}
        )
        assert "needs review (list_conflicts)" in text_of(r)
        r = await client.call_tool("list_conflicts", {})
        body = text_of(r)
        assert "reversal" in body and "suggested: new" in body and "Prefers light mode" in body
        cid = int(body.split("[conflict ")[1].split("]")[0])
        r = await client.call_tool("resolve_conflict", {"id": cid, "keep": "sometimes"})
        assert r.is_error and "keep must be one of" in text_of(r)
        r = await client.call_tool("resolve_conflict", {"id": 999, "keep": "new"})
        assert r.is_error and "no conflict with id 999" in text_of(r)
        r = await client.call_tool("resolve_conflict", {"id": cid, "keep": "new"})
        assert not r.is_error and "kept new" in text_of(r)
        assert count_open(store) == 0 and store.get_memory(light.id).superseded_by is not None
        r = await client.call_tool("search_memory", {"query": "mode editor"})
        lines = text_of(r).splitlines()[1:]
        assert "Prefers dark mode" in lines[0] and "(origin: mcp)" in lines[0]
        assert "Prefers light mode" in lines[1] and "superseded by memory" in lines[1]
    store.close()
