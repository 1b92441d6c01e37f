"""What the tools return: pydantic models (the SDK publishes their JSON schema as each tool's outputSchema
and sends them as structuredContent) that also render themselves as compact text (`render()`), for clients that show the
text content to the model. One model, two views, so they cannot disagree.

Text is one line per item, whitespace flattened; the server caps it (app.mcp.server.MAX_CHARS) except for
the budgeted tools, whose size the caller's token budget already bounds.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Protocol

from pydantic import BaseModel, Field

from store import Memory, Message, Thread, iso

WHY = {
    ("keyword",): "shares words with the query",
    ("semantic",): "close in meaning to the query",
    ("keyword", "semantic"): "shares words with the query and is close in meaning",
    ("neighbour",): "the turn next to a strong hit",
}


def flat(text: str, width: int = 400) -> str:
    one = " ".join(text.split())
    return one if len(one) <= width else one[: width - 1] + "…"


def why(matched: tuple[str, ...]) -> str:
    return WHY.get(matched, " and ".join(matched))


class _Item(Protocol):
    def line(self) -> str: ...


def _page_text(items: Sequence[_Item], offset: int, next_offset: int | None) -> str:
    """A page of a list, one line per item, and how to ask for the next page (list_memories, list_threads)."""
    text = "\n".join(item.line() for item in items)
    if next_offset is None:
        return text
    shown = f"{offset + 1}-{offset + len(items)}"
    return f"{text}\n(more: call again with offset={next_offset}; this page showed {shown})"


def _hits_text(hits: Sequence[_Item], query: str, notice: str | None, *, none: str, some: str) -> str:
    """Search results, best first under a line that counts them, or one line saying nothing matched
    (search_memory: "No memories match", search_conversations: "Nothing in past conversations matches")."""
    note = f" ({notice})" if notice else ""
    if not hits:
        return f"{none} {query!r}{note}."
    return "\n".join([f"{len(hits)} {some} for {query!r}, best first{note}:", *(h.line() for h in hits)])


class MemoryOut(BaseModel):
    id: int
    category: str
    content: str
    importance: int
    pinned: bool
    access_count: int = Field(
        description="How often it was returned by a search or included in a context/profile."
    )
    last_accessed: str | None
    created_at: str | None
    updated_at: str | None
    origin: str = Field(description="manual, mcp, import, suggestion…: how the memory came to be.")
    source_thread_id: int | None
    in_trash: bool
    superseded_by: int | None = Field(
        None, description="A newer memory replaced this one: it is kept, but no longer current."
    )
    valid_until: str | None = Field(None, description="When it stopped being current (superseded).")

    @classmethod
    def of(cls, m: Memory) -> MemoryOut:
        return cls(
            id=m.id,
            category=m.category,
            content=m.content,
            importance=m.importance,
            pinned=m.pinned,
            access_count=m.access_count,
            last_accessed=iso(m.last_accessed),
            created_at=iso(m.created_at),
            updated_at=iso(m.updated_at),
            origin=m.origin,
            source_thread_id=m.source_thread_id,
            in_trash=m.deleted_at is not None,
            superseded_by=m.superseded_by,
            valid_until=iso(m.valid_until),
        )

    def line(self) -> str:
        flags = ", pinned" if self.pinned else ""
        flags += ", in trash" if self.in_trash else ""
        if self.valid_until is not None:
            flags += f", superseded by memory {self.superseded_by}: no longer current"
        return f"[{self.id}] ({self.category}, importance {self.importance}{flags}) {flat(self.content)}"


class MemoryHit(MemoryOut):
    score: float = Field(
        description="Fused relevance score: higher is better (comparable within one search)."
    )
    matched: list[str] = Field(description="Which retrievers found it: keyword, semantic, or both.")
    why: str = Field(description="Why it matched, in words.")
    source_thread_title: str | None = None
    source_message_id: int | None = Field(None, description="The message it was taken from, when known.")

    def line(self) -> str:
        source = ""
        if self.source_thread_id is not None:
            title = f" “{flat(self.source_thread_title, 60)}”" if self.source_thread_title else ""
            at = f", message {self.source_message_id}" if self.source_message_id is not None else ""
            source = f"; from thread {self.source_thread_id}{title}{at}"
        return f"{super().line()}\n    score {self.score:.3f}: {self.why}{source}"


class MemorySearch(BaseModel):
    query: str
    mode: str = Field(description="hybrid (keywords and meaning), keyword, or semantic.")
    notice: str | None = Field(None, description="Anything the search wants you to know (e.g. keyword-only).")
    results: list[MemoryHit]

    def render(self) -> str:
        return _hits_text(self.results, self.query, self.notice, none="No memories match", some="memories")


class MemoryChange(BaseModel):
    action: str = Field(
        description="added, merged, exists, updated, unchanged, trashed, restored, pinned, unpinned, "
        "or already_* when there was nothing to do."
    )
    message: str
    memory: MemoryOut
    similarity: float | None = Field(None, description="For a merge: how close the new text was to the old.")

    def render(self) -> str:
        return f"{self.message}\n{self.memory.line()}"


class MemoryPage(BaseModel):
    memories: list[MemoryOut]
    offset: int
    next_offset: int | None = Field(description="Pass as offset for the next page; null on the last page.")
    in_trash: bool

    def render(self) -> str:
        if not self.memories:
            return "The trash is empty." if self.in_trash and self.offset == 0 else "No memories."
        return _page_text(self.memories, self.offset, self.next_offset)


class ThreadOut(BaseModel):
    id: int
    title: str
    source: str
    message_count: int
    token_count: int
    created_at: str | None
    updated_at: str | None = Field(description="When the thread was last active.")

    @classmethod
    def of(cls, t: Thread) -> ThreadOut:
        return cls(
            id=t.id,
            title=t.title,
            source=t.source,
            message_count=t.message_count,
            token_count=t.token_count,
            created_at=iso(t.created_at),
            updated_at=iso(t.updated_at),
        )

    def line(self) -> str:
        day = (self.updated_at or "")[:10]
        return f"[{self.id}] “{flat(self.title, 80)}” ({self.source}, {self.message_count} messages, last active {day})"


class ThreadPage(BaseModel):
    threads: list[ThreadOut]
    offset: int
    next_offset: int | None = Field(description="Pass as offset for the next page; null on the last page.")

    def render(self) -> str:
        if not self.threads:
            return "No threads."
        return _page_text(self.threads, self.offset, self.next_offset)


class MessageOut(BaseModel):
    id: int
    seq: int
    role: str
    content: str
    truncated: bool = Field(description="True when content was cut to max_chars.")
    created_at: str | None

    @classmethod
    def of(cls, m: Message, max_chars: int) -> MessageOut:
        cut = len(m.content) > max_chars
        content = m.content[:max_chars].rstrip() + " … (truncated)" if cut else m.content
        return cls(
            id=m.id, seq=m.seq, role=m.role, content=content, truncated=cut, created_at=iso(m.created_at)
        )


class ThreadRead(BaseModel):
    thread: ThreadOut
    summary: str | None
    topics: list[str]
    offset: int = Field(description="Position (0-based) of the first message shown.")
    messages: list[MessageOut]
    next_offset: int | None = Field(description="Pass as offset for the next messages; null at the end.")

    def render(self) -> str:
        t = self.thread
        parts = [f"Thread {t.id} “{t.title}” ({t.source}, {t.message_count} messages)"]
        if self.topics:
            parts.append("Topics: " + ", ".join(self.topics))
        if self.summary:
            parts.append("Summary:\n" + self.summary.strip())
        if self.messages:
            end = self.offset + len(self.messages)
            parts.append(f"Messages {self.offset + 1}-{end} of {t.message_count}:")
            parts += [
                f"--- [{m.id}] {m.role}, {m.created_at or 'no date'} ---\n{m.content}" for m in self.messages
            ]
        else:
            parts.append(f"No messages at offset {self.offset} (the thread has {t.message_count}).")
        if self.next_offset is not None:
            parts.append(f"(more: call again with offset={self.next_offset})")
        return "\n\n".join(parts)


class ConversationHit(BaseModel):
    kind: str = Field(description="message or summary (a thread's summary).")
    thread_id: int | None
    thread_title: str | None
    message_id: int | None = Field(
        description="For a message: its id (read_thread around_message shows its turn)."
    )
    role: str | None
    created_at: str | None
    content: str = Field(description="The part of the text around the match.")
    score: float
    matched: list[str]
    why: str

    def line(self) -> str:
        where = f"thread {self.thread_id} “{flat(self.thread_title or '', 60)}”"
        if self.kind == "message":
            head = f"[message {self.message_id} in {where}, {self.role}, {self.created_at or 'no date'}]"
        else:
            head = f"[summary of {where}]"
        return f"{head} {flat(self.content)}\n    score {self.score:.3f}: {self.why}"


class ConversationSearch(BaseModel):
    query: str
    mode: str
    notice: str | None = None
    results: list[ConversationHit]

    def render(self) -> str:
        none = "Nothing in past conversations matches"
        return _hits_text(self.results, self.query, self.notice, none=none, some="results")


class ContextOut(BaseModel):
    messages: list[dict[str, str]] = Field(description="OpenAI-format messages, oldest first.")
    token_stats: dict[str, int]
    metadata: dict[str, Any]

    def render(self) -> str:
        return json.dumps(self.model_dump(mode="json"), ensure_ascii=False)


class ProfileOut(BaseModel):
    text: str = Field(description="The profile to put in the session's system prompt.")
    tokens: int = Field(description="Tokens of text (tiktoken); never more than budget.")
    budget: int
    pinned: int
    pinned_left_out: int
    left_out: int = Field(description="Active memories that did not fit.")
    memories: list[MemoryOut]

    def render(self) -> str:
        if not self.memories:
            return "No memories fit in this budget." if self.left_out else "No memories are stored yet."
        more = f"; {self.left_out} more did not fit" if self.left_out else ""
        return f"{self.text}\n\n({self.tokens} of {self.budget} tokens{more})"
