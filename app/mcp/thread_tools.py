"""The conversation tools: list and read threads, search past conversations, build a thread's context.

All read-only. search_conversations searches messages and summaries as one scope ("conversations" in the
store), so k results come back whenever k exist; get_context is the context builder, unchanged.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcp.server.mcpserver.exceptions import ToolError

from app.mcp.args import (
    AroundMessage,
    ContextBudget,
    ContextQuery,
    K,
    Limit,
    MaxChars,
    Offset,
    Query,
    RoleArg,
    ScopeArg,
    Since,
    SortArg,
    Source,
    ThreadFilter,
    ThreadId,
    TitleFilter,
    Until,
    epoch,
)
from app.mcp.results import (
    ContextOut,
    ConversationHit,
    ConversationSearch,
    MessageOut,
    ThreadOut,
    ThreadPage,
    ThreadRead,
    why,
)
from store.records import iso

if TYPE_CHECKING:  # the store's numpy-backed modules load on the first call, not before `initialize`
    from store.store import Store

_SCOPES = {"both": "conversations", "messages": "messages", "summaries": "summaries"}


def list_threads(
    store: Store,
    title: TitleFilter = None,
    source: Source = None,
    since: Since = None,
    until: Until = None,
    sort: SortArg = "updated",
    offset: Offset = 0,
    limit: Limit = 20,
) -> ThreadPage:
    """List the user's past conversations (threads) a page at a time, last active first by default.
    Filters: title (substring), source, and since/until (threads active in that span)."""
    threads = store.list_threads(
        text=title or None,
        source=source or None,
        since=epoch(since),
        until=epoch(until),
        sort=sort,
        limit=limit + 1,
        offset=offset,
    )
    more = len(threads) > limit
    return ThreadPage(
        threads=[ThreadOut.of(t) for t in threads[:limit]],
        offset=offset,
        next_offset=offset + limit if more else None,
    )


def read_thread(
    store: Store,
    thread: ThreadId,
    offset: Offset = 0,
    limit: Limit = 20,
    around_message: AroundMessage = None,
    max_chars: MaxChars = 2000,
) -> ThreadRead:
    """Read a past conversation: its summary and topics, and a window of its messages in order (from
    offset, or centred on around_message). Long messages are cut to max_chars."""
    t = store.get_thread(thread)
    if around_message is not None:
        m = store.get_message(around_message)
        if m.thread_id != thread:
            raise ToolError(f"message {around_message} is in thread {m.thread_id}, not in thread {thread}")
        offset = max(0, store.message_index(around_message) - limit // 2)
    messages = store.get_messages(thread, offset=offset, limit=limit)
    summary = store.get_summary(thread)
    end = offset + len(messages)
    return ThreadRead(
        thread=ThreadOut.of(t),
        summary=summary.content if summary is not None else None,
        topics=[topic for topic, _ in store.get_topics(thread, 12)],
        offset=offset,
        messages=[MessageOut.of(m, max_chars) for m in messages],
        next_offset=end if end < t.message_count else None,
    )


def search_conversations(
    store: Store,
    query: Query,
    k: K = 8,
    scope: ScopeArg = "both",
    thread: ThreadFilter = None,
    role: RoleArg = None,
    since: Since = None,
    until: Until = None,
) -> ConversationSearch:
    """Search the user's past AI conversations: messages and thread summaries, by keywords and meaning.
    Returns up to k results best first (k whenever k exist), each with its thread, a snippet around the
    match, a score and why it matched. A role filter searches messages only."""
    from store.search.engine import Filters

    filters = Filters(thread_id=thread, role=role, since=epoch(since), until=epoch(until))
    resp = store.search(query, scope=_SCOPES[scope], k=k, filters=filters)
    titles: dict[int, str] = {}
    hits = []
    for r in resp.results:
        if r.thread_id is not None and r.thread_id not in titles:
            titles[r.thread_id] = store.get_thread(r.thread_id).title
        created = store.get_message(r.id).created_at if r.kind == "message" else None
        hits.append(
            ConversationHit(
                kind=r.kind,
                thread_id=r.thread_id,
                thread_title=titles.get(r.thread_id) if r.thread_id is not None else None,
                message_id=r.id if r.kind == "message" else None,
                role=r.role,
                created_at=iso(created),
                content=r.content,
                score=round(r.score, 4),
                matched=list(r.matched),
                why=why(r.matched),
            )
        )
    return ConversationSearch(query=query, mode=resp.mode, notice=resp.notice, results=hits)


def get_context(
    store: Store, thread: ThreadId, budget: ContextBudget, query: ContextQuery = None
) -> ContextOut:
    """The message list (OpenAI format) to continue a past thread within a token budget: pinned and
    relevant memories, the thread summary, older messages condensed and the latest verbatim; never over the
    budget. The memories included count as accessed."""
    from store.context.builder import build_context

    result = build_context(store, thread, budget, query=query)
    data = result.to_json()
    return ContextOut(messages=data["messages"], token_stats=data["token_stats"], metadata=data["metadata"])
