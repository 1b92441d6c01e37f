"""What a search may be restricted to: its scope (which kinds of rows) and its filters.

Kept apart from the engine so the SQL builders (store.search.candidates) and the retrievers can name the
filters without importing the engine that calls them.
"""

from __future__ import annotations

from dataclasses import dataclass

from store.errors import InvalidInputError
from store.records import CATEGORIES, ROLES

SCOPES = ("all", "memories", "messages", "summaries", "conversations")
KINDS = ("memory", "message", "summary")
# "conversations" is messages and summaries together: searched as one, so k results come back when k
# exist (searching "all" and dropping the memories afterwards returned fewer).
_SCOPE_KINDS = {
    "all": KINDS,
    "memories": ("memory",),
    "messages": ("message",),
    "summaries": ("summary",),
    "conversations": ("message", "summary"),
}


@dataclass(frozen=True, slots=True)
class Filters:
    """Restrictions applied inside both retrievers. A filter that a kind has no field for excludes that
    kind: `category`/`pinned` keep memories only, `role` messages only, `thread_id` messages and
    summaries; `since`/`until` (epoch seconds, half-open) apply to every kind. `as_of` keeps the memories
    valid at that moment (valid_from <= as_of < valid_until) and what was written by then."""

    thread_id: int | None = None
    category: str | None = None
    role: str | None = None
    since: float | None = None
    until: float | None = None
    pinned: bool | None = None
    include_archived: bool = False  # messages and summaries of archived threads are left out unless True
    source: str | None = None  # only messages and summaries of threads imported from this source
    as_of: float | None = None  # what was true then: memories valid at that time, messages said by then

    def kinds(self, scope: str) -> tuple[str, ...]:
        if scope not in SCOPES:
            raise InvalidInputError(f"unknown scope {scope!r}: use one of {', '.join(SCOPES)}")
        kinds = set(_SCOPE_KINDS[scope])
        if self.category is not None or self.pinned is not None:
            kinds &= {"memory"}
        if self.role is not None:
            kinds &= {"message"}
        if self.thread_id is not None or self.source is not None:
            kinds &= {"message", "summary"}
        if not kinds:
            raise InvalidInputError(
                f"no {scope if scope != 'all' else 'item'} can match these filters together "
                "(--category/--pinned apply to memories, --role to messages, --thread and --source to messages "
                "and summaries)"
            )
        return tuple(k for k in KINDS if k in kinds)

    def validate(self) -> None:
        """Raise InvalidInputError for a value no row can have (an unknown category or role, an empty
        date range)."""
        if self.category is not None and self.category not in CATEGORIES:
            raise InvalidInputError(f"unknown category {self.category!r}: use one of {', '.join(CATEGORIES)}")
        if self.role is not None and self.role not in ROLES:
            raise InvalidInputError(f"unknown role {self.role!r}: use one of {', '.join(ROLES)}")
        if self.since is not None and self.until is not None and self.since >= self.until:
            raise InvalidInputError("--since must be before --until")
