"""`memapp mcp`: the memory as a Model Context Protocol server over stdio, for AI tools.

Tools answer in compact text within a size cap (never the whole database), so a client's context is not
flooded. Writes go through the same Store methods as the CLI and TUI, so history, merge rules and pins
hold. The embedding model loads lazily on the first semantic search, and nothing but protocol is ever
written to stdout: logs go to stderr. Sync tools run in the SDK's worker threads; the Store gives each
thread its own SQLite connection.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from store import CATEGORIES, Store
from store.errors import StoreError
from store.records import iso
from store.search.engine import Filters

log = logging.getLogger(__name__)

MAX_CHARS = 6000  # cap on one tool result
MAX_K = 50

INSTRUCTIONS = (
    "memapp is the user's private, local memory: durable facts about them (preferences, projects, skills, "
    "facts) and their past AI conversations. Call search_memory before answering questions that may depend on "
    "what the user told you before; call add_memory when they state a lasting preference or fact."
)


def _cap(text: str) -> str:
    if len(text) <= MAX_CHARS:
        return text
    return text[: MAX_CHARS - 40].rstrip() + "\n… (truncated to fit the result size cap)"


def _flat(text: str, width: int = 400) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _k(k: int) -> int:
    if not 1 <= k <= MAX_K:
        raise ToolError(f"k must be between 1 and {MAX_K}, got {k}")
    return k


def _category(category: str | None) -> str | None:
    if category is not None and category not in CATEGORIES:
        raise ToolError(f"unknown category {category!r}: use one of {', '.join(CATEGORIES)}")
    return category


def build_server(open_store: Callable[[], Store]) -> MCPServer:
    """The server with every tool; `open_store` is called once, on the first tool call."""
    holder: dict[str, Store] = {}

    def store() -> Store:
        if "store" not in holder:
            holder["store"] = open_store()
        return holder["store"]

    def guarded(fn: Callable[..., str]) -> Callable[..., str]:
        """Store errors become MCP tool errors (isError results), never a crashed server. Results are
        capped, except get_context's JSON, whose size the caller's token budget already bounds."""

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> str:
            try:
                text = fn(*args, **kwargs)
            except ToolError:
                raise
            except StoreError as exc:
                raise ToolError(str(exc)) from exc
            return text if fn.__name__ == "get_context" else _cap(text)

        return wrapper

    server = MCPServer("memapp", instructions=INSTRUCTIONS)

    @server.tool()
    @guarded
    def search_memory(query: str, category: str | None = None, k: int = 8) -> str:
        """Search the user's long-term memories (preferences, projects, skills, facts), semantic + keyword."""
        filters = Filters(category=_category(category))
        resp = store().search(query, scope="memories", k=_k(k), filters=filters)
        lines = [
            f"[{r.id}] ({r.category}) {_flat(store().get_memory(r.id).content)}{_memory_note(r)}"
            for r in resp.results
        ]
        head = f"{len(lines)} memories for {query!r}" + (f" ({resp.notice})" if resp.notice else "")
        return "\n".join([head, *lines]) if lines else head.replace(f"{len(lines)} memories", "No memories")

    @server.tool()
    @guarded
    def add_memory(content: str, category: str, importance: int = 5) -> str:
        """Remember a durable fact about the user. Near-duplicates merge into the existing memory."""
        _category(category)
        if not 1 <= importance <= 10:
            raise ToolError(f"importance must be 1-10, got {importance}")
        res = store().add_memory(content, category, importance=importance, origin="mcp")
        verb = {"added": "Added", "merged": "Merged into", "exists": "Already remembered as"}[res.action]
        out = f"{verb} memory {res.memory.id} ({res.memory.category}, importance {res.memory.importance})"
        if res.superseded:
            out += f"; it supersedes memory {', '.join(map(str, res.superseded))} (kept as no longer current)"
        if res.conflicts:
            out += f"; conflict {', '.join(map(str, res.conflicts))} needs review (list_conflicts)"
        return out

    @server.tool()
    @guarded
    def list_memories(category: str | None = None, pinned: bool | None = None, limit: int = 50) -> str:
        """List the user's current memories (not superseded), pinned first (optionally one category, or only
        pinned ones)."""
        mems = store().list_memories(
            category=_category(category), pinned=pinned, state="current", limit=_k(min(limit, MAX_K))
        )
        store().touch_memories([m.id for m in mems])
        if not mems:
            return "No memories."
        return "\n".join(
            f"[{m.id}]{' 📌' if m.pinned else ''} ({m.category}, importance {m.importance}) "
            f"{_flat(m.content)}"
            for m in mems
        )

    @server.tool()
    @guarded
    def pin_memory(id: int) -> str:  # noqa: A002 - the tool's public argument name
        """Pin a memory so it is always included and never cleaned up."""
        m = store().pin_memory(id, True)
        return f"Pinned memory {m.id}: {_flat(m.content, 200)}"

    @server.tool()
    @guarded
    def search_conversations(query: str, k: int = 8, thread: int | None = None) -> str:
        """Search the user's past AI conversations (messages and thread summaries)."""
        filters = Filters(thread_id=thread)
        resp = store().search(query, scope="all" if thread is None else "messages", k=_k(k), filters=filters)
        hits = [r for r in resp.results if r.kind != "memory"]
        lines = []
        for r in hits:
            t = store().get_thread(r.thread_id) if r.thread_id is not None else None
            where = f"thread {r.thread_id} “{_flat(t.title, 60)}”" if t else "?"
            if r.kind == "message":
                m = store().get_message(r.id)
                lines.append(
                    f"[message {r.id} in {where}, {r.role}, {iso(m.created_at) or 'no date'}] "
                    f"{_flat(r.content)}"
                )
            else:
                lines.append(f"[summary of {where}] {_flat(r.content)}")
        head = f"{len(lines)} results for {query!r}" + (f" ({resp.notice})" if resp.notice else "")
        return "\n".join([head, *lines])

    @server.tool()
    @guarded
    def get_context(thread: int, budget: int, query: str | None = None) -> str:
        """The message list (OpenAI format, as JSON) to continue a past thread within a token budget."""
        import json

        from store.context.builder import build_context

        if budget < 64:
            raise ToolError("budget must be at least 64 tokens")
        result = build_context(store(), thread, budget, query=query)
        return json.dumps(result.to_json(), ensure_ascii=False)

    _add_conflict_tools(server, store, guarded)
    return server


# -- keeping memories true (issue 17): a self-contained block, easy to move into a tool table ---------------


def _memory_note(r: Any) -> str:
    """A memory hit's provenance, and whether a newer memory superseded it."""
    if r.source_message_id is not None:
        note = f" (from message {r.source_message_id} in thread {r.thread_id})"
    elif r.thread_id is not None:
        note = f" (from thread {r.thread_id})"
    else:
        note = f" (origin: {r.origin})" if r.origin else ""
    if r.superseded_by is not None:
        note += f" [superseded by memory {r.superseded_by}: no longer current]"
    return note


def _add_conflict_tools(
    server: MCPServer, store: Callable[[], Store], guarded: Callable[[Callable[..., str]], Callable[..., str]]
) -> None:
    @server.tool()
    @guarded
    def list_conflicts(limit: int = 20) -> str:
        """Pairs of the user's memories that may contradict or repeat each other, waiting for a decision."""
        from store.truth.conflicts import list_conflicts as open_conflicts

        items = open_conflicts(store(), limit=_k(min(limit, MAX_K)))
        if not items:
            return "No conflicts to review."
        return "\n".join(
            f"[conflict {c.id}] {c.relation} ({', '.join(c.reasons) or 'close in meaning'}); suggested: {c.suggested}\n"
            f"  new [{c.new.id}] {_flat(c.new.content, 200)}\n  old [{c.old.id}] {_flat(c.old.content, 200)}"
            for c in items
        )

    @server.tool()
    @guarded
    def resolve_conflict(id: int, keep: str) -> str:  # noqa: A002 - the tool's public argument name
        """Decide a conflict: keep "new" (the old memory is superseded), "old" (the new one is trashed),
        "both" (both stay current) or "merge" (one memory with the new wording). Ask the user first."""
        from store.truth.conflicts import KEEPS
        from store.truth.conflicts import resolve_conflict as resolve

        if keep not in KEEPS:
            raise ToolError(f"keep must be one of {', '.join(KEEPS)}, got {keep!r}")
        c = resolve(store(), id, keep)
        return f"Resolved conflict {c.id}: kept {c.resolution} (memories {c.new.id} and {c.old.id})"


def run_stdio(open_store: Callable[[], Store]) -> None:
    build_server(open_store).run()
