"""The one table of MCP tools: which function, its title, and the hints a client uses to decide whether to
ask the user before a call (MCP tool annotations).

To add a tool, write a function of (store, arguments…) returning a results model and add a row here; the
server registers every row (only the read-only ones with `--read-only`).

Hints (MCP: destructive means "may do more than add"; a client asks the user first): read_only tools change
nothing the user sees (a search still counts an access, which is bookkeeping, not content). A tool that can
change or hide what is already remembered is destructive, even where history or the trash can undo it:
add_memory (a near-duplicate merges into an existing memory and rewords it; a reversal supersedes the old
memory, issue 28.22), update_memory, delete_memory, unpin_memory (the memory loses its protection from
cleanup and automatic merges) and resolve_conflict. restore_memory and pin_memory only add back or protect.
Repeating any write with the same arguments has no further effect, so all are idempotent. No tool reaches
outside the local chat.db (open_world is false for all).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from app.mcp import memory_tools as mem
from app.mcp import thread_tools as conv
from app.mcp import truth_tools as truth


@dataclass(frozen=True, slots=True)
class ToolSpec:
    fn: Callable[..., Any]  # (store, **arguments) -> a results model with render()
    title: str
    read_only: bool
    destructive: bool = False
    idempotent: bool = True
    capped: bool = True  # the text rendering is cut to the server's MAX_CHARS (not for budgeted tools)

    @property
    def name(self) -> str:
        return self.fn.__name__


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(mem.search_memory, "Search memories", read_only=True),
    ToolSpec(mem.get_profile, "Session profile", read_only=True, capped=False),
    ToolSpec(mem.list_memories, "List memories", read_only=True),
    ToolSpec(mem.add_memory, "Add a memory", read_only=False, destructive=True),
    ToolSpec(mem.update_memory, "Correct a memory", read_only=False, destructive=True),
    ToolSpec(mem.delete_memory, "Move a memory to the trash", read_only=False, destructive=True),
    ToolSpec(mem.restore_memory, "Restore a memory from the trash", read_only=False),
    ToolSpec(mem.pin_memory, "Pin a memory", read_only=False),
    ToolSpec(mem.unpin_memory, "Unpin a memory", read_only=False, destructive=True),
    ToolSpec(conv.search_conversations, "Search past conversations", read_only=True),
    ToolSpec(conv.list_threads, "List conversations", read_only=True),
    ToolSpec(conv.read_thread, "Read a conversation", read_only=True),
    ToolSpec(conv.get_context, "Context to continue a conversation", read_only=True, capped=False),
    ToolSpec(truth.list_conflicts, "List memory conflicts", read_only=True),
    ToolSpec(truth.resolve_conflict, "Resolve a memory conflict", read_only=False, destructive=True),
)
