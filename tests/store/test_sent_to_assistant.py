"""Nothing sent to an assistant includes a superseded memory (issue 27), tested through every path: the
profile, `export --format prompt` (CLI too), `memapp context`, and MCP `get_profile`, `get_context` and
`search_memory`. The outdated memory is the most important one, so a path that forgot the rule would pick
it first (the issue: at `--budget 200` the prompt export sent only the outdated one)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from app.cli import main
from app.mcp.server import build_server
from embeddings import FakeEmbedder
from store import Store
from store.context.builder import build_context
from store.context.profile import build_profile
from store.prompt_export import prompt_block
from store.records import MessageIn, ThreadIn

OLD, NEW = "I live in Berlin, near the Spree.", "I moved to Lisbon last month, near the river."


@pytest.fixture
def seeded(db_path: Path) -> tuple[Store, int, int, int]:
    s = Store(db_path, embedder=FakeEmbedder())
    old = s.add_memory(OLD, "fact", importance=10).memory
    res = s.add_memory(NEW, "fact", importance=3)
    assert res.superseded == (old.id,)
    tid = s.write_thread(
        ThreadIn("test", "t1", "Moving", [MessageIn("user", "Where do I live, near which river?")])
    ).thread_id
    return s, old.id, res.memory.id, tid


def _only_new(text: str) -> None:
    assert "Lisbon" in text
    assert "Berlin" not in text


def test_profile_and_prompt_export_leave_the_superseded_memory_out(
    seeded: tuple[Store, int, int, int],
) -> None:
    s, _, _, _ = seeded
    _only_new(build_profile(s, 1000, touch=False).text)
    block = prompt_block(s, 200)
    _only_new(block.text)
    assert (
        block.left_out == 0
    )  # a superseded memory is not "left out for lack of room": it is not a candidate


def test_context_leaves_the_superseded_memory_out(seeded: tuple[Store, int, int, int]) -> None:
    s, _, _, tid = seeded
    ctx = build_context(s, tid, 2000, query="where do I live, near which river")
    _only_new(json.dumps(ctx.to_json()["messages"], ensure_ascii=False))


def test_cli_prompt_export_and_context(
    seeded: tuple[Store, int, int, int],
    db_path: Path,
    capsys: pytest.CaptureFixture[str],
    no_model_config: Path,
) -> None:
    s, _, _, tid = seeded
    s.close()
    assert main(["--db", str(db_path), "export", "--format", "prompt", "--budget", "200"]) == 0
    _only_new(capsys.readouterr().out)
    assert main(["--db", str(db_path), "profile"]) == 0
    _only_new(capsys.readouterr().out)
    assert main(["--db", str(db_path), "context", str(tid), "--budget", "2000", "--query", "river"]) == 0
    _only_new(capsys.readouterr().out)


async def _call(s: Store, tool: str, args: dict[str, Any]) -> Any:
    async with Client(build_server(lambda: s)) as client:
        return await client.call_tool(tool, args)


async def test_mcp_profile_context_and_search(seeded: tuple[Store, int, int, int]) -> None:
    s, old_id, new_id, tid = seeded
    r = await _call(s, "get_profile", {"budget": 500})
    _only_new(json.dumps(r.structured_content, ensure_ascii=False))
    r = await _call(s, "get_context", {"thread": tid, "budget": 2000, "query": "near which river"})
    _only_new(json.dumps(r.structured_content, ensure_ascii=False))
    r = await _call(s, "search_memory", {"query": "near the river"})
    ids = [h["id"] for h in r.structured_content["results"]]
    assert new_id in ids and old_id not in ids
    # the user still finds it, and with --as-of it is what was true then
    mine = s.search("near the river", scope="memories", touch=False).results
    assert [h.id for h in mine] == [new_id, old_id]
