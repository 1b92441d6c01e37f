"""The tools' behaviour, in process (an MCP client against the server object, a temp chat.db, the fake
embedder): what they write, what they refuse, what counts as an access, paging, schemas and errors."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, get_args

import pytest
from mcp import Client

from app.mcp import args as mcp_args
from app.mcp.server import MAX_CHARS, build_server
from app.mcp.table import TOOLS
from embeddings import FakeEmbedder
from store import CATEGORIES, ROLES, Store
from store.extract.suggestions import accept_suggestion, extract_suggestions, list_suggestions
from tests.app.mcp.mcp_helpers import T0, fill, text_of


@pytest.fixture
def env(tmp_path: Path) -> Iterator[tuple[Store, dict[str, int]]]:
    s = Store(tmp_path / "chat.db", embedder=FakeEmbedder())
    ids = fill(s)
    yield s, ids
    s.close()


async def call(s: Store, tool: str, args: dict[str, Any], **server: Any) -> Any:
    async with Client(build_server(lambda: s, **server)) as client:
        return await client.call_tool(tool, args)


def test_enums_match_the_store() -> None:
    assert get_args(mcp_args.Category) == CATEGORIES
    assert get_args(mcp_args.Role) == ROLES


async def test_every_parameter_is_described_and_every_tool_annotated(
    env: tuple[Store, dict[str, int]],
) -> None:
    s, _ = env
    async with Client(build_server(lambda: s)) as client:
        tools = (await client.list_tools()).tools
    assert len(tools) == len(TOOLS)
    for t in tools:
        assert t.description and len(t.description) > 40, t.name
        assert t.output_schema is not None, t.name
        for name, prop in t.input_schema["properties"].items():
            assert prop.get("description"), (t.name, name)
        a = t.annotations
        assert a is not None and a.title and a.read_only_hint is not None and a.open_world_hint is False
    by_name = {t.name: t for t in tools}
    hints = {name: t.annotations.destructive_hint for name, t in by_name.items() if t.annotations}
    assert hints["delete_memory"] is True and hints["update_memory"] is True and hints["add_memory"] is True
    assert by_name["search_memory"].input_schema["properties"]["k"]["maximum"] == 50
    assert by_name["add_memory"].input_schema["properties"]["importance"]["minimum"] == 1


async def test_update_and_delete_refuse_a_pinned_memory(env: tuple[Store, dict[str, int]]) -> None:
    s, ids = env
    before = s.get_memory(ids["pinned"])
    for tool, args in (
        ("update_memory", {"id": ids["pinned"], "content": "Answer in American English"}),
        ("delete_memory", {"id": ids["pinned"]}),
    ):
        r = await call(s, tool, args)
        assert r.is_error
        assert f"refused: memory {ids['pinned']} is pinned by the user" in text_of(r)
    assert s.get_memory(ids["pinned"]) == before
    assert [h.event for h in s.memory_history(ids["pinned"])] == ["add"]
    # Unpinning is its own, visible call; after it the update goes through, with history.
    assert not (await call(s, "unpin_memory", {"id": ids["pinned"]})).is_error
    r = await call(s, "update_memory", {"id": ids["pinned"], "category": "fact"})
    assert not r.is_error and r.structured_content["action"] == "updated"
    assert [h.event for h in s.memory_history(ids["pinned"])] == ["add", "unpin", "recategorise"]


async def test_add_memory_merges_and_refuses_like_the_cli(env: tuple[Store, dict[str, int]]) -> None:
    s, ids = env
    r = await call(s, "add_memory", {"content": "I prefer restic for backups!", "category": "preference"})
    assert (
        r.structured_content["action"] == "merged" and r.structured_content["memory"]["id"] == ids["restic"]
    )
    s.edit_memory(ids["nas"], content="My NAS is a Synology DS920+ with 4 disks")  # hand-edited now
    r = await call(
        s, "add_memory", {"content": "My NAS is a Synology DS920+ with 4 disks.", "category": "fact"}
    )
    assert r.is_error and f"nearly duplicates memory {ids['nas']}" in text_of(r)
    r = await call(s, "add_memory", {"content": "I am learning Go", "category": "skill"})
    assert r.structured_content["action"] == "exists"


async def test_trash_and_restore_keep_the_memory(env: tuple[Store, dict[str, int]]) -> None:
    s, ids = env
    r = await call(s, "delete_memory", {"id": ids["go"]})
    assert r.structured_content["action"] == "trashed"
    r = await call(s, "search_memory", {"query": "learning Go"})
    assert ids["go"] not in [h["id"] for h in r.structured_content["results"]]
    r = await call(s, "list_memories", {"in_trash": True})
    assert [m["id"] for m in r.structured_content["memories"]] == [ids["go"]]
    assert (await call(s, "delete_memory", {"id": ids["go"]})).structured_content[
        "action"
    ] == "already_trashed"
    r = await call(s, "update_memory", {"id": ids["go"], "importance": 8})
    assert r.is_error and "in the trash: restore it first" in text_of(r)
    assert (await call(s, "restore_memory", {"id": ids["go"]})).structured_content["action"] == "restored"
    assert s.get_memory(ids["go"]).deleted_at is None


async def test_what_counts_as_an_access(env: tuple[Store, dict[str, int]]) -> None:
    s, ids = env

    def counts() -> dict[int, int]:
        return {m.id: m.access_count for m in s.list_memories()}

    start = counts()
    await call(s, "list_memories", {})
    await call(s, "list_memories", {"pinned": True})
    assert counts() == start  # listing never counts
    r = await call(s, "search_memory", {"query": "restic backups", "k": 1})
    assert [h["id"] for h in r.structured_content["results"]] == [ids["restic"]]
    assert counts()[ids["restic"]] == start[ids["restic"]] + 1
    assert {i: c for i, c in counts().items() if i != ids["restic"]} == {
        i: c for i, c in start.items() if i != ids["restic"]
    }
    r = await call(s, "get_profile", {"budget": 5000})
    assert sorted(m["id"] for m in r.structured_content["memories"]) == sorted(start)
    assert all(counts()[i] >= start[i] + 1 for i in start)


async def test_search_memory_says_where_a_memory_came_from(env: tuple[Store, dict[str, int]]) -> None:
    s, ids = env
    from store import ThreadIn
    from store.records import MessageIn

    t = s.write_thread(
        ThreadIn(
            "generic",
            "t9",
            "Editors",
            [MessageIn("user", "I prefer Helix over Vim for quick edits.", "e1", T0)],
        )
    )
    extract_suggestions(s, t.thread_id)
    sug = [x for x in list_suggestions(s, thread_id=t.thread_id) if "Helix" in x.content][0]
    memory = accept_suggestion(s, sug.id).memory
    r = await call(s, "search_memory", {"query": "Helix"})
    hit = next(h for h in r.structured_content["results"] if h["id"] == memory.id)
    assert hit["source_thread_id"] == t.thread_id and hit["source_thread_title"] == "Editors"
    assert hit["source_message_id"] == sug.message_id is not None
    assert f"from thread {t.thread_id} “Editors”, message {sug.message_id}" in text_of(r)


async def test_search_conversations_returns_k_when_k_exist(env: tuple[Store, dict[str, int]]) -> None:
    s, ids = env
    # 33 messages in three threads; the old tool searched "all" and dropped memories afterwards.
    for k in (1, 8, 20):
        r = await call(s, "search_conversations", {"query": "systemd timer restic backups", "k": k})
        assert len(r.structured_content["results"]) == k
        assert {h["kind"] for h in r.structured_content["results"]} <= {"message", "summary"}
    r = await call(
        s, "search_conversations", {"query": "timer", "k": 50, "thread": ids["backups"], "role": "user"}
    )
    got = r.structured_content["results"]
    assert got and all(h["thread_id"] == ids["backups"] and h["role"] == "user" for h in got)
    r = await call(
        s, "search_conversations", {"query": "sourdough", "since": "2023-12-01", "until": "2024-01-01"}
    )
    assert {h["thread_title"] for h in r.structured_content["results"]} == {"Sourdough starter"}


async def test_list_threads_filters_and_pages(env: tuple[Store, dict[str, int]]) -> None:
    s, ids = env
    r = await call(s, "list_threads", {"limit": 2})
    assert len(r.structured_content["threads"]) == 2 and r.structured_content["next_offset"] == 2
    r2 = await call(s, "list_threads", {"limit": 2, "offset": 2})
    assert len(r2.structured_content["threads"]) == 1 and r2.structured_content["next_offset"] is None
    r = await call(s, "list_threads", {"title": "TIMER"})
    assert [t["id"] for t in r.structured_content["threads"]] == [ids["long"]]
    r = await call(s, "list_threads", {"until": "2023-12-01"})
    assert [t["title"] for t in r.structured_content["threads"]] == ["Home lab backups"]
    r = await call(s, "list_threads", {"since": "2023-12-01T00:00:00Z", "sort": "title"})
    assert [t["title"] for t in r.structured_content["threads"]] == ["Sourdough starter", "Timer notes"]


async def test_read_thread_windows_and_summary(env: tuple[Store, dict[str, int]]) -> None:
    s, ids = env
    msgs = s.get_messages(ids["long"])
    target = msgs[20]
    r = await call(s, "read_thread", {"thread": ids["long"], "around_message": target.id, "limit": 6})
    seqs = [m["seq"] for m in r.structured_content["messages"]]
    assert seqs == [17, 18, 19, 20, 21, 22] and r.structured_content["offset"] == 17
    assert r.structured_content["next_offset"] == 23
    r = await call(s, "read_thread", {"thread": ids["long"], "offset": 28, "limit": 10, "max_chars": 100})
    assert [m["seq"] for m in r.structured_content["messages"]] == [28, 29]
    assert r.structured_content["next_offset"] is None
    from store.extract.summaries import summarize_thread

    summarize_thread(s, ids["backups"])
    r = await call(s, "read_thread", {"thread": ids["backups"]})
    assert r.structured_content["summary"] and "Summary:" in text_of(r)


async def test_long_messages_are_cut_and_results_capped(env: tuple[Store, dict[str, int]]) -> None:
    s, _ = env
    from store import ThreadIn
    from store.records import MessageIn

    t = s.write_thread(ThreadIn("generic", "big", "Big", [MessageIn("user", "word " * 5000, "b1", T0)]))
    r = await call(s, "read_thread", {"thread": t.thread_id, "max_chars": 300})
    m = r.structured_content["messages"][0]
    assert m["truncated"] and len(m["content"]) <= 300 + len(" … (truncated)")
    for i in range(60):
        s.add_memory(f"memory {i}: " + "lorem ipsum dolor " * 30, "fact", force=True, embed=False)
    r = await call(s, "list_memories", {"limit": 100})
    assert len(text_of(r)) <= MAX_CHARS and "truncated to fit" in text_of(r)
    assert len(r.structured_content["memories"]) == 64  # the structured part is bounded by limit instead


async def test_an_unexpected_failure_says_what_and_why(tmp_path: Path) -> None:
    def broken() -> Store:
        raise RuntimeError("disk on fire")

    async with Client(build_server(broken)) as client:
        r = await client.call_tool("list_memories", {})
    assert r.is_error and "unexpected RuntimeError in memapp: disk on fire" in text_of(r)


async def test_a_store_error_on_open_is_a_tool_error(tmp_path: Path) -> None:
    bad = tmp_path / "not-a-db"
    bad.write_bytes(b"hello, not sqlite" * 100)
    async with Client(build_server(lambda: Store(bad, embedder=None))) as client:
        r = await client.call_tool("search_memory", {"query": "x"})
    assert r.is_error and "is not a memapp database" in text_of(r)


def test_the_server_answers_before_the_store_is_imported() -> None:
    """`initialize` needs only the SDK: numpy, the store and SQLite load on the first tool call."""
    import subprocess
    import sys

    code = (
        "import sys\nfrom app.mcp.server import build_server\n"
        "build_server(lambda: None)\n"
        "print(sorted(m for m in ('numpy', 'store.store', 'torch') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.strip() == "[]"


async def test_a_pin_made_elsewhere_is_respected(env: tuple[Store, dict[str, int]]) -> None:
    """The TUI (another connection) pins a memory; the assistant's next update or delete is refused by the
    store itself, under the write lock, and nothing changes."""
    from store.errors import PinnedMemoryError

    s, ids = env
    with Store(s.path, embedder=None) as tui:
        tui.pin_memory(ids["go"], True)
    r = await call(s, "update_memory", {"id": ids["go"], "content": "I am fluent in Go"})
    assert r.is_error and f"refused: memory {ids['go']} is pinned" in text_of(r)
    r = await call(s, "delete_memory", {"id": ids["go"]})
    assert r.is_error and "is not deleted through MCP" in text_of(r)
    with pytest.raises(PinnedMemoryError):
        s.edit_memory(ids["go"], importance=1, refuse_pinned=True)
    m = s.get_memory(ids["go"])
    assert (m.content, m.importance, m.deleted_at) == ("I am learning Go", 4, None)
    assert [h.event for h in s.memory_history(ids["go"])] == ["add", "pin"]
    assert s.edit_memory(ids["go"], importance=5).importance == 5  # the CLI/TUI path is unchanged


@pytest.mark.model
async def test_a_nonsense_query_says_no_good_match_and_counts_nothing(tmp_path: Path, real_embedder) -> None:  # type: ignore[no-untyped-def]
    """With the real model (the floor is calibrated on its cosines): nothing comes back, the notice says
    why, and no memory's access count moves."""
    s = Store(tmp_path / "chat.db", embedder=real_embedder)
    fill(s)
    start = {m.id: m.access_count for m in s.list_memories()}
    for tool in ("search_memory", "search_conversations"):
        r = await call(s, tool, {"query": "quantum chromodynamics lattice"})
        assert not r.is_error and r.structured_content["results"] == []
        assert r.structured_content["notice"].startswith("no good match"), r.structured_content
    assert {m.id: m.access_count for m in s.list_memories()} == start
    s.close()


async def test_weak_results_are_never_sent(tmp_path: Path) -> None:
    """Results the answer floor judges unsure come back to the CLI and TUI as "weak"; MCP sends none of
    them (a model would read them as answers), says there is no good match, and counts nothing."""
    from store.config import Config
    from store.search.engine import NOTICE_UNSURE

    cfg = Config()
    cfg.search.answer_floor = 1.0  # every hybrid answer is unsure
    s = Store(tmp_path / "chat.db", config=cfg, embedder=FakeEmbedder())
    fill(s)
    start = {m.id: m.access_count for m in s.list_memories()}
    for tool, scope in (("search_memory", "memories"), ("search_conversations", "conversations")):
        assert s.search("restic backups", scope=scope, touch=False, weak=True).weak  # there were some
        r = await call(s, tool, {"query": "restic backups"})
        assert not r.is_error and r.structured_content["results"] == []
        assert r.structured_content["notice"] == NOTICE_UNSURE and "weak" not in r.structured_content
        assert "weak" not in text_of(r)
    assert {m.id: m.access_count for m in s.list_memories()} == start
    s.close()
