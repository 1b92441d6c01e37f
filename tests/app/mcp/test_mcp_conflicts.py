"""The assistant sees and resolves conflicts over MCP, memory results say when a memory was superseded and
where it came from, and the profile leaves superseded memories out (issue 17)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp import Client

from app.mcp.server import build_server
from embeddings import FakeEmbedder
from store import Store
from store.truth.conflicts import count_open
from tests.app.mcp.mcp_helpers import text_of


async def call(s: Store, tool: str, args: dict[str, Any]) -> Any:
    async with Client(build_server(lambda: s)) as client:
        return await client.call_tool(tool, args)


async def test_list_and_resolve_conflicts_and_superseded_results(tmp_path: Path) -> None:
    s = Store(tmp_path / "chat.db", embedder=FakeEmbedder())
    try:
        light = s.add_memory("Prefers light mode in the editor", "preference", pinned=True).memory
        r = await call(s, "list_conflicts", {})
        assert not r.is_error and r.structured_content["conflicts"] == []
        assert "No conflicts to review." in text_of(r)
        r = await call(
            s, "add_memory", {"content": "Prefers dark mode in the editor", "category": "preference"}
        )
        assert "conflict" in r.structured_content["message"] and "list_conflicts" in text_of(r)
        r = await call(s, "list_conflicts", {})
        [c] = r.structured_content["conflicts"]
        assert (c["relation"], c["suggested"], c["old"]["id"]) == ("reversal", "new", light.id)
        assert "Prefers light mode" in text_of(r)
        r = await call(s, "resolve_conflict", {"id": c["id"], "keep": "sometimes"})
        assert r.is_error
        r = await call(s, "resolve_conflict", {"id": 999, "keep": "new"})
        assert r.is_error and "no conflict with id 999" in text_of(r)
        r = await call(s, "resolve_conflict", {"id": c["id"], "keep": "new"})
        assert not r.is_error and r.structured_content["conflict"]["resolution"] == "new"
        assert count_open(s) == 0 and s.get_memory(light.id).superseded_by == c["new"]["id"]
        r = await call(s, "search_memory", {"query": "mode editor"})
        hits = {h["id"]: h for h in r.structured_content["results"]}
        assert light.id not in hits  # superseded: never sent to an assistant (issue 27)
        r = await call(s, "get_profile", {"budget": 500})
        assert (
            "dark mode" in r.structured_content["text"] and "light mode" not in r.structured_content["text"]
        )
    finally:
        s.close()


async def test_add_memory_says_what_it_superseded(tmp_path: Path) -> None:
    s = Store(tmp_path / "chat.db", embedder=FakeEmbedder())
    try:
        old = s.add_memory("I prefer uv over pip for Python projects", "preference").memory
        r = await call(
            s, "add_memory", {"content": "I prefer pip over uv for Python projects", "category": "preference"}
        )
        assert r.structured_content["action"] == "added"
        assert f"supersedes memory {old.id}" in r.structured_content["message"]
    finally:
        s.close()


async def test_resolve_conflict_merges_in_the_users_own_words(tmp_path: Path) -> None:
    """MCP resolve_conflict takes `text` for an edited merge, as `conflicts resolve --keep merge --text`."""
    s = Store(tmp_path / "chat.db", embedder=FakeEmbedder())
    try:
        old = s.add_memory("Uses Firefox", "preference").memory
        new = s.add_memory("Uses Chrome", "preference").memory
        r = await call(s, "list_conflicts", {})
        [c] = r.structured_content["conflicts"]
        r = await call(s, "resolve_conflict", {"id": c["id"], "keep": "both", "text": "Uses both"})
        assert r.is_error and "--keep merge" in text_of(r)  # a text goes with a merge only
        r = await call(s, "resolve_conflict", {"id": c["id"], "keep": "merge", "text": "  "})
        assert r.is_error and "cannot be empty" in text_of(r)
        text = "Uses Firefox at home and Chrome at work"
        r = await call(s, "resolve_conflict", {"id": c["id"], "keep": "merge", "text": text})
        assert not r.is_error and r.structured_content["conflict"]["resolution"] == "merge"
        merged = s.get_memory(old.id)
        assert merged.content == text and merged.user_edited
        assert s.get_memory(new.id).deleted_at is not None and count_open(s) == 0
    finally:
        s.close()
