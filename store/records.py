"""Plain records that cross the store's boundary.

Rows come out of SQLite as these dataclasses, and importers hand the store these input records, so
the CLI, the TUI, the importers and scripts all speak the same small vocabulary. Times are UTC epoch
seconds (float) inside; `iso()` turns them into the ISO-8601 strings that JSON output uses.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

CATEGORIES: tuple[str, ...] = ("preference", "project", "skill", "fact")
ROLES: tuple[str, ...] = ("system", "user", "assistant", "tool")


def iso(ts: float | None) -> str | None:
    """Epoch seconds -> ISO-8601 UTC with a trailing Z (None stays None)."""
    if ts is None:
        return None
    return dt.datetime.fromtimestamp(ts, tz=dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def now() -> float:
    return dt.datetime.now(tz=dt.UTC).timestamp()


def json_dumps(value: Any) -> str:
    """Compact JSON as stored in metadata and history columns (non-ASCII kept, unknown types as str)."""
    import json

    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def json_loads(text: str | None) -> Any:
    """A stored JSON column back; {} for empty or unreadable text (a row never fails to load over it)."""
    import json

    if not text:
        return {}
    try:
        return json.loads(text)
    except ValueError:
        return {}


@dataclass(frozen=True, slots=True)
class Memory:
    id: int
    category: str
    content: str
    importance: int
    access_count: int
    last_accessed: float | None
    pinned: bool
    user_edited: bool
    origin: str
    source_thread_id: int | None
    token_count: int
    created_at: float
    updated_at: float
    deleted_at: float | None
    # Time and provenance (migration 5, store.truth): valid until a newer memory superseded it.
    valid_from: float | None = None
    valid_until: float | None = None
    superseded_by: int | None = None
    source_message_id: int | None = None
    source_note: str | None = None  # where an imported memory came from when no message is known

    @property
    def current(self) -> bool:
        """Not superseded (a memory in the trash is still 'current' here: the trash is a separate state)."""
        return self.valid_until is None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "category": self.category,
            "content": self.content,
            "importance": self.importance,
            "pinned": self.pinned,
            "access_count": self.access_count,
            "last_accessed": iso(self.last_accessed),
            "created_at": iso(self.created_at),
            "updated_at": iso(self.updated_at),
            "source_thread_id": self.source_thread_id,
            "token_count": self.token_count,
            "origin": self.origin,
            "deleted_at": iso(self.deleted_at),
            "valid_from": iso(self.valid_from if self.valid_from is not None else self.created_at),
            "valid_until": iso(self.valid_until),
            "superseded_by": self.superseded_by,
            "source_message_id": self.source_message_id,
            "source_note": self.source_note,
        }


@dataclass(frozen=True, slots=True)
class Thread:
    id: int
    source: str
    external_id: str | None
    title: str
    created_at: float
    updated_at: float
    message_count: int
    token_count: int
    metadata: dict[str, Any]
    archived_at: float | None = None  # archived threads are hidden from lists and search by default
    source_title: str | None = None  # the export's title at the last import (store.titles)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "external_id": self.external_id,
            "source": self.source,
            "title": self.title,
            "message_count": self.message_count,
            "token_count": self.token_count,
            "created_at": iso(self.created_at),
            "updated_at": iso(self.updated_at),
            "archived_at": iso(self.archived_at),
        }


@dataclass(frozen=True, slots=True)
class Message:
    id: int
    thread_id: int
    seq: int
    role: str
    content: str
    token_count: int
    external_id: str | None
    created_at: float | None
    metadata: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "external_id": self.external_id,
            "seq": self.seq,
            "role": self.role,
            "content": self.content,
            "token_count": self.token_count,
            "created_at": iso(self.created_at),
        }


@dataclass(frozen=True, slots=True)
class Summary:
    thread_id: int
    content: str
    last_message_seq: int
    token_count: int
    created_at: float
    updated_at: float

    def to_json(self) -> dict[str, Any]:
        return {
            "thread_id": self.thread_id,
            "content": self.content,
            "last_message_seq": self.last_message_seq,
            "token_count": self.token_count,
            "created_at": iso(self.created_at),
            "updated_at": iso(self.updated_at),
        }


@dataclass(frozen=True, slots=True)
class HistoryEvent:
    id: int
    memory_id: int
    event: str
    old: dict[str, Any] | None
    new: dict[str, Any] | None
    at: float

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "memory_id": self.memory_id,
            "event": self.event,
            "old": self.old,
            "new": self.new,
            "at": iso(self.at),
        }


# --- inputs (what importers produce) -------------------------------------------------------------


@dataclass(slots=True)
class MessageIn:
    """One message of an imported thread, in order. `external_id` keys idempotent re-import."""

    role: str
    content: str
    external_id: str | None = None
    created_at: float | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class ThreadIn:
    """One imported conversation. (source, external_id) identifies it across re-imports."""

    source: str
    external_id: str | None
    title: str
    messages: list[MessageIn]
    created_at: float | None = None
    updated_at: float | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class MemoryIn:
    """A memory found in an export (ChatGPT `bio`, Claude memories.json)."""

    category: str
    content: str
    importance: int = 5
    origin: str = "import"
    created_at: float | None = None
    pinned: bool = False
    # Where it was said, when the export knows (ChatGPT's bio writes): the thread by (source, external id)
    # and the messages that led to it, nearest first (the importer links the nearest one it stored).
    thread_source: str | None = None
    thread_external_id: str | None = None
    message_external_ids: tuple[str, ...] = ()


@dataclass(slots=True)
class SuggestionIn:
    """A memory proposed by an import (a pasted list of memories): stored as a pending suggestion, never
    as a memory, until the person accepts it."""

    category: str
    content: str
    importance: int = 5
    origin: str = "import:text"


@dataclass(frozen=True, slots=True)
class ThreadWrite:
    """What writing one ThreadIn did: used for import reports."""

    thread_id: int
    created: bool
    messages_added: int
    title_changed: bool
