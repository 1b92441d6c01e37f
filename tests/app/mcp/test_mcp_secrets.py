"""Nothing an assistant reads over MCP holds a detected secret (issues 33.2, 31.7), even from a chat.db
whose `[privacy] redact = "off"` stored them: every tool's text and structured result passes the
detector on the way out; what the tools write goes through the store's gate like any other write."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mcp import Client

from app.mcp.server import build_server
from embeddings import FakeEmbedder
from store import Store
from store.config import Config, PrivacyConfig
from store.records import MessageIn, ThreadIn
from tests.app.mcp.mcp_helpers import text_of

GH = "ghp_4f9KzQ2mN7xR1tV8bW3yC6pL0sD5hJ2gE9aB"
CARD = "4539 1488 0343 6467"


async def _calls(s: Store, calls: list[tuple[str, dict[str, Any]]]) -> list[str]:
    out = []
    async with Client(build_server(lambda: s)) as client:
        for tool, args in calls:
            result = await client.call_tool(tool, args)
            assert not result.is_error, text_of(result)
            out.append(text_of(result) + json.dumps(result.structured_content))
    return out


async def test_no_tool_result_carries_a_secret_stored_with_redaction_off(tmp_path: Path) -> None:
    s = Store(
        tmp_path / "chat.db", embedder=FakeEmbedder(), config=Config(privacy=PrivacyConfig(redact="off"))
    )
    try:
        tid = s.write_thread(
            ThreadIn(
                "generic",
                "t1",
                f"CI setup {GH}",
                [
                    MessageIn("user", f"The CI token is {GH}; deploy the backups job.", "m1"),
                    MessageIn("assistant", "Done: the backups job deploys nightly.", "m2"),
                ],
            )
        ).thread_id
        mid = s.add_memory(f"My card for the NAS subscription is {CARD}", "fact", pinned=True).memory.id
        s.add_memory(f"CI deploy token {GH} lives in the backups repo", "project")
        assert GH in s.get_memory(mid + 1).content  # stored in the clear: "off"
        results = await _calls(
            s,
            [
                ("get_profile", {}),
                ("search_memory", {"query": "CI deploy token backups"}),
                ("list_memories", {}),
                ("search_conversations", {"query": "CI token deploy backups"}),
                ("read_thread", {"thread": tid}),
                ("list_threads", {}),
                ("get_context", {"thread": tid, "budget": 2000}),
                ("add_memory", {"content": f"second token {GH} for staging", "category": "project"}),
            ],
        )
        for text in results:
            assert GH not in text and CARD not in text and CARD.replace(" ", "") not in text
        assert "[secret: github-token]" in results[0] + results[2]
    finally:
        s.close()


async def test_what_mcp_writes_passes_the_gate(tmp_path: Path) -> None:
    s = Store(tmp_path / "chat.db", embedder=FakeEmbedder())
    try:
        [added] = await _calls(s, [("add_memory", {"content": f"token {GH} for CI", "category": "project"})])
        memory = s.list_memories()[0]
        assert memory.content == "token [secret: github-token] for CI"
        await _calls(s, [("update_memory", {"id": memory.id, "content": f"token {GH} for CI, rotated"})])
        assert GH not in s.get_memory(memory.id).content
        assert all(GH not in json.dumps(h.to_json()) for h in s.memory_history(memory.id))
    finally:
        s.close()
