"""The tools' parameter types: each one a type with its description, enum or bounds, so the JSON schema a
client sees says what is allowed, and the SDK rejects a bad argument (with the reason) before a tool runs.

Why Literal types rather than free strings: an assistant reading the schema picks a valid category or role
the first time. CATEGORY and ROLE must equal the store's CATEGORIES and ROLES (a test checks).
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal

from pydantic import Field

Category = Literal["preference", "project", "skill", "fact"]
Role = Literal["system", "user", "assistant", "tool"]
ConversationScope = Literal["both", "messages", "summaries"]
ThreadSort = Literal["updated", "created", "title", "messages", "tokens"]

MAX_K = 50
MAX_PAGE = 100
MAX_BUDGET = 200_000
MAX_ID = 2**53 - 1
"""The largest id a client can send exactly (JSON numbers are doubles in JavaScript clients); SQLite's own
limit, 2**63 - 1, overflowed on the way in ("unexpected OverflowError", issue 28.19)."""
MAX_OFFSET = 1_000_000_000
"""Far past any archive's rows; keeps offset + limit inside SQLite's integers."""

Query = Annotated[
    str,
    Field(
        min_length=1, max_length=2000, description="What to look for, in plain words (not a boolean query)."
    ),
]
K = Annotated[int, Field(ge=1, le=MAX_K, description=f"How many results to return (1-{MAX_K}).")]
MemoryId = Annotated[
    int, Field(ge=1, le=MAX_ID, description="The memory's id, as search_memory or list_memories show it.")
]
ThreadId = Annotated[
    int, Field(ge=1, le=MAX_ID, description="The thread's id, as list_threads or search results show it.")
]
Importance = Annotated[
    int, Field(ge=1, le=10, description="How much this matters to the user, 1 (trivia) to 10 (essential).")
]
MemoryText = Annotated[
    str,
    Field(
        min_length=1,
        max_length=4000,
        description="The memory, as one self-contained sentence about the user (e.g. 'Prefers restic for backups').",
    ),
]
CategoryArg = Annotated[
    Category,
    Field(
        description="preference (likes, dislikes, ways of working), project (what they work on), skill (what "
        "they know or learn), fact (anything else durable about them)."
    ),
]
OptionalCategory = Annotated[Category | None, Field(description="Only memories of this category.")]
NewCategory = Annotated[Category | None, Field(description="The new category (leave out to keep it).")]
NewText = Annotated[
    Annotated[str, Field(min_length=1, max_length=4000)] | None,
    Field(description="The corrected memory text, one self-contained sentence (leave out to keep it)."),
]
NewImportance = Annotated[
    Annotated[int, Field(ge=1, le=10)] | None,
    Field(description="The new importance, 1 (trivia) to 10 (essential) (leave out to keep it)."),
]
PinnedFilter = Annotated[
    bool | None, Field(description="true: only pinned memories; false: only unpinned ones.")
]
TextFilter = Annotated[
    str | None,
    Field(max_length=500, description="Only memories whose text contains this (case-insensitive)."),
]
InTrash = Annotated[bool, Field(description="List the trash instead (newest first): ids for restore_memory.")]
Source = Annotated[
    str | None,
    Field(
        max_length=100, description="Only threads imported from this source (e.g. chatgpt, claude, generic)."
    ),
]
TitleFilter = Annotated[
    str | None,
    Field(max_length=500, description="Only threads whose title contains this (case-insensitive)."),
]
SortArg = Annotated[
    ThreadSort, Field(description="Order: updated (last active first), created, title, messages, tokens.")
]
AroundMessage = Annotated[
    int | None,
    Field(
        ge=1,
        le=MAX_ID,
        description="Show the window around this message id (from search_conversations) instead of offset.",
    ),
]
MaxChars = Annotated[
    int, Field(ge=100, le=50_000, description="Cut each message to this many characters (100-50,000).")
]
RoleArg = Annotated[Role | None, Field(description="Only messages by this role.")]
ScopeArg = Annotated[
    ConversationScope,
    Field(description="both: messages and thread summaries; or only messages, or only summaries."),
]
ThreadFilter = Annotated[int | None, Field(ge=1, le=MAX_ID, description="Only within this thread.")]
ContextQuery = Annotated[
    str | None,
    Field(
        max_length=2000,
        description="Retrieve memories for this text (default: the thread's latest user message).",
    ),
]
Offset = Annotated[
    int,
    Field(ge=0, le=MAX_OFFSET, description="How many items to skip (paging: pass the previous next_offset)."),
]
Limit = Annotated[int, Field(ge=1, le=MAX_PAGE, description=f"How many items per page (1-{MAX_PAGE}).")]
Since = Annotated[
    dt.datetime | None,
    Field(
        description="Only from this moment on: an ISO 8601 date or date-time (UTC when no offset is given)."
    ),
]
Until = Annotated[
    dt.datetime | None,
    Field(
        description="Only before this moment: an ISO 8601 date or date-time (UTC when no offset is given)."
    ),
]
ContextBudget = Annotated[
    int,
    Field(ge=64, le=MAX_BUDGET, description=f"Token budget for the whole message list (64-{MAX_BUDGET:,})."),
]
ProfileBudget = Annotated[
    int, Field(ge=16, le=MAX_BUDGET, description=f"Token budget for the profile text (16-{MAX_BUDGET:,}).")
]


def epoch(moment: dt.datetime | None) -> float | None:
    """A parsed date argument as epoch seconds; a naive one is UTC."""
    if moment is None:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return moment.timestamp()
