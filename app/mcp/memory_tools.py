"""The memory tools: search, add, update, trash, restore, pin, unpin, list, and the session-start profile.

Each is a plain function of a Store and the tool's arguments (the server supplies the store; the client
never sees that parameter). Every write is the Store method the CLI and TUI call, so history, the trash
and the merge rules are the same whoever writes.

Why update_memory and delete_memory refuse a pinned memory: the user pinned it, and an assistant must not
change it behind their back. The store checks it under the write lock (`refuse_pinned=True`), so a pin made
in the TUI a moment before is respected too. The refusal says so in words the assistant can show;
unpinning is a separate, visible call (unpin_memory) made only when the user asks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcp.server.mcpserver.exceptions import ToolError

from app.mcp.args import (
    CategoryArg,
    Importance,
    InTrash,
    K,
    Limit,
    MemoryId,
    MemoryText,
    NewCategory,
    NewImportance,
    NewText,
    Offset,
    OptionalCategory,
    PinnedFilter,
    ProfileBudget,
    Query,
    TextFilter,
)
from app.mcp.results import MemoryChange, MemoryHit, MemoryOut, MemoryPage, MemorySearch, ProfileOut, why
from store import DuplicateMemoryError, Memory, PinnedMemoryError

if TYPE_CHECKING:  # the store's numpy-backed modules load on the first call, not before `initialize`
    from store import Store


def _change(action: str, message: str, memory: Memory, similarity: float | None = None) -> MemoryChange:
    return MemoryChange(action=action, message=message, memory=MemoryOut.of(memory), similarity=similarity)


def _refusal(memory_id: int, doing: str) -> ToolError:
    return ToolError(
        f"refused: memory {memory_id} is pinned by the user, so it is not {doing} through MCP. Show the "
        "user what you would change; they can do it in memapp, or ask you to unpin it first (unpin_memory)."
    )


def search_memory(store: Store, query: Query, category: OptionalCategory = None, k: K = 8) -> MemorySearch:
    """Search the user's long-term memories (preferences, projects, skills, facts) by keywords and meaning.

    Call it before answering anything that may depend on what the user told you before. Results come best
    first with a score, why each matched, and the conversation it came from when known. Only results above
    the search's relevance floor come back, and each one returned counts as an access. Only current
    memories: one a newer memory replaced is left out, as from everything sent to an assistant."""
    from store.extract import source_messages
    from store.search import Filters
    from store.truth import only_current

    resp = store.search(query, scope="memories", k=k, filters=Filters(category=category), touch=False)
    ids = only_current(store, [r.id for r in resp.results])
    store.touch_memories(ids)
    messages = source_messages(store, ids)
    hits = []
    for r in (
        r for r in resp.results if r.id in set(ids)
    ):  # the source thread's title comes with each result (joined in the search)
        m = store.get_memory(r.id)
        hits.append(
            MemoryHit(
                **MemoryOut.of(m).model_dump(),
                score=round(r.score, 4),
                matched=list(r.matched),
                why=why(r.matched),
                source_thread_title=r.thread_title if m.source_thread_id is not None else None,
                source_message_id=m.source_message_id
                if m.source_message_id is not None
                else messages.get(m.id),
            )
        )
    return MemorySearch(query=query, mode=resp.mode, notice=resp.notice, results=hits)


def add_memory(
    store: Store, content: MemoryText, category: CategoryArg, importance: Importance = 5
) -> MemoryChange:
    """Remember a durable fact about the user (a lasting preference, project, skill or fact they stated).

    A near-duplicate of an existing memory in the same category merges into it (newest wording, highest
    importance); an identical one is left as it is. A pinned or hand-edited near-duplicate is never changed:
    the call is refused and names it."""
    try:
        res = store.add_memory(content, category, importance=importance, origin="mcp")
    except DuplicateMemoryError as exc:
        raise ToolError(
            f"not added: it nearly duplicates memory {exc.existing_id} (similarity {exc.similarity:.2f}), which "
            "is pinned or was edited by the user and is never changed automatically. Tell the user; if they "
            "want the wording changed, they can edit that memory."
        ) from exc
    message = {
        "added": f"Added memory {res.memory.id}.",
        "merged": f"Merged into memory {res.memory.id} (similarity {res.similarity or 0:.2f}).",
        "exists": f"Already remembered as memory {res.memory.id}; nothing changed.",
    }[res.action]
    if res.superseded:  # store.truth: a reversal or update is never merged, it replaces
        message += f" It supersedes memory {', '.join(map(str, res.superseded))} (kept, no longer current)."
    if res.conflicts:
        message += f" It may contradict another memory: conflict {', '.join(map(str, res.conflicts))} (list_conflicts)."
    return _change(res.action, message, res.memory, res.similarity)


def update_memory(
    store: Store,
    id: MemoryId,  # noqa: A002 - the tool's public argument name
    content: NewText = None,
    category: NewCategory = None,
    importance: NewImportance = None,
) -> MemoryChange:
    """Correct a memory: its text, category and/or importance (give at least one). The old values stay in
    the memory's history. A pinned memory is never changed: the call is refused with a message to show the
    user. A memory in the trash must be restored first."""
    if content is None and category is None and importance is None:
        raise ToolError("nothing to change: give content, category or importance")
    old = store.get_memory(id)
    try:
        new = store.edit_memory(
            id, content=content, category=category, importance=importance, refuse_pinned=True
        )
    except PinnedMemoryError as exc:
        raise _refusal(id, "changed") from exc
    if new == old:
        return _change("unchanged", f"Memory {id} already says that; nothing changed.", new)
    return _change("updated", f"Updated memory {id} (the previous version is in its history).", new)


def delete_memory(store: Store, id: MemoryId) -> MemoryChange:  # noqa: A002
    """Move a memory that is wrong or no longer true to the trash. It can be brought back with
    restore_memory until the trash is emptied. A pinned memory is refused (the user pinned it)."""
    old = store.get_memory(id)
    if old.deleted_at is not None:
        return _change("already_trashed", f"Memory {id} is already in the trash.", old)
    try:
        trashed = store.delete_memory(id, refuse_pinned=True)
    except PinnedMemoryError as exc:
        raise _refusal(id, "deleted") from exc
    return _change("trashed", f"Moved memory {id} to the trash (restore_memory brings it back).", trashed)


def restore_memory(store: Store, id: MemoryId) -> MemoryChange:  # noqa: A002
    """Bring a memory back from the trash, unchanged (list_memories with in_trash=true shows the trash)."""
    old = store.get_memory(id)
    if old.deleted_at is None:
        return _change("already_active", f"Memory {id} is not in the trash.", old)
    return _change("restored", f"Restored memory {id}.", store.restore_memory(id))


def pin_memory(store: Store, id: MemoryId) -> MemoryChange:  # noqa: A002
    """Pin a memory: it is always included in contexts and profiles first, and never cleaned up or changed
    automatically. Pin only what the user asks you to keep."""
    old = store.get_memory(id)
    if old.pinned:
        return _change("already_pinned", f"Memory {id} is already pinned.", old)
    return _change("pinned", f"Pinned memory {id}.", store.pin_memory(id, True))


def unpin_memory(store: Store, id: MemoryId) -> MemoryChange:  # noqa: A002
    """Unpin a memory (only when the user asks): it then ranks like any other and may be updated."""
    old = store.get_memory(id)
    if not old.pinned:
        return _change("already_unpinned", f"Memory {id} is not pinned.", old)
    return _change("unpinned", f"Unpinned memory {id}.", store.pin_memory(id, False))


def list_memories(
    store: Store,
    category: OptionalCategory = None,
    pinned: PinnedFilter = None,
    text: TextFilter = None,
    in_trash: InTrash = False,
    offset: Offset = 0,
    limit: Limit = 20,
) -> MemoryPage:
    """List memories a page at a time: pinned first, then by category and importance. Filters: category,
    pinned (true/false), text (a case-insensitive substring), in_trash (the trash instead, newest first).
    Listing does not count as an access."""
    mems = store.list_memories(
        category=category, pinned=pinned, trash=in_trash, text=text or None, limit=limit + 1, offset=offset
    )
    more = len(mems) > limit
    return MemoryPage(
        memories=[MemoryOut.of(m) for m in mems[:limit]],
        offset=offset,
        next_offset=offset + limit if more else None,
        in_trash=in_trash,
    )


def get_profile(store: Store, budget: ProfileBudget = 1000) -> ProfileOut:
    """What to know about the user at the start of a session, before any thread: pinned memories first,
    then the most important and most used, as one text within `budget` tokens (tiktoken count, never over).
    The memories included count as accessed."""
    from store.context import build_profile

    p = build_profile(store, budget)
    return ProfileOut(
        text=p.text,
        tokens=p.tokens,
        budget=p.budget,
        pinned=p.pinned,
        pinned_left_out=p.pinned_left_out,
        left_out=p.left_out,
        memories=[MemoryOut.of(m) for m in p.memories],
    )
