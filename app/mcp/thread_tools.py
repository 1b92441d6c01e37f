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
from store import NotFoundError, iso

if TYPE_CHECKING:  # the store's numpy-backed modules load on the first call, not before `initialize`
    from store import Store, Thread

_SCOPES = {"both": "conversations", "messages": "messages", "summaries": "summaries"}


def _thread(store: Store, thread: int) -> Thread:
    """The thread, or a tool error saying it does not exist (not a search's "no good match": an assistant
    that passed a wrong id must learn that the id is wrong, issue 28.18)."""
    try:
        return store.get_thread(thread)
    except NotFoundError as exc:
        raise ToolError(
            f"there is no thread with id {thread}: list_threads and search_conversations give the ids of "
            "existing threads"
        ) from exc


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
    t = _thread(store, thread)
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
    from store.search import Filters

    if thread is not None:
        _thread(store, thread)
    filters = Filters(thread_id=thread, role=role, since=epoch(since), until=epoch(until))
    resp = store.search(query, scope=_SCOPES[scope], k=k, filters=filters)
    hits = []
    for r in resp.results:  # thread title and time come with each result (joined in the search)
        hits.append(
            ConversationHit(
                kind=r.kind,
                thread_id=r.thread_id,
                thread_title=r.thread_title,
                message_id=r.id if r.kind == "message" else None,
                role=r.role,
                created_at=iso(r.created_at) if r.kind == "message" else None,
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
    from store.context import build_context

    _thread(store, thread)
    result = build_context(store, thread, budget, query=query)
    data = result.to_json()
    return ContextOut(messages=data["messages"], token_stats=data["token_stats"], metadata=data["metadata"])
