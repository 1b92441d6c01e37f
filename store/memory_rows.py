"""One memory row: its columns, how it is read, checked, hashed and listed, and its history rows.

Why apart from store.memories: everything that touches a memory needs these (store.memories' add, edit
and trash, superseding in store.truth.timeline, conflicts, cleanup, checks, suggestions), while
store.memories holds the decisions about a change (merge or add, what an edit re-embeds, what the trash
keeps). `MemoryRowsMixin` sits under both Store mixins that change memories (TimelineMixin, then
MemoriesMixin), so each reads a memory and writes its history row through the one method here.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Any

from store.core import StoreCore
from store.errors import InvalidInputError, NotFoundError
from store.records import CATEGORIES, HistoryEvent, Memory, json_dumps, json_loads, now
from store.text import unpaired_surrogate

MEMORY_COLUMNS = (
    "id, category, content, importance, access_count, last_accessed, pinned, user_edited, origin, "
    "source_thread_id, token_count, created_at, updated_at, deleted_at, valid_from, valid_until, superseded_by, "
    "source_message_id, source_note"
)
_WS = re.compile(r"\s+")
MEMORY_STATES = {
    "current": "valid_until IS NULL",
    "superseded": "valid_until IS NOT NULL",
    "conflicts": "id IN (SELECT new_id FROM memory_conflicts WHERE status = 'open' "
    "UNION SELECT old_id FROM memory_conflicts WHERE status = 'open')",
}
ORDERS = {
    # A superseded memory never lists above the current ones (its successor among them).
    "list": "valid_until IS NOT NULL, pinned DESC, category, importance DESC, updated_at DESC, id",
    "standing": "pinned DESC, importance DESC, access_count DESC, updated_at DESC, id",
}


def content_hash(text: str) -> str:
    return hashlib.sha256(_WS.sub(" ", text.strip()).casefold().encode("utf-8")).hexdigest()


def memory_from_row(row: Sequence[Any]) -> Memory:
    return Memory(
        id=row[0],
        category=row[1],
        content=row[2],
        importance=row[3],
        access_count=row[4],
        last_accessed=row[5],
        pinned=bool(row[6]),
        user_edited=bool(row[7]),
        origin=row[8],
        source_thread_id=row[9],
        token_count=row[10],
        created_at=row[11],
        updated_at=row[12],
        deleted_at=row[13],
        valid_from=row[14],
        valid_until=row[15],
        superseded_by=row[16],
        source_message_id=row[17],
        source_note=row[18],
    )


def memory_fields(m: Memory) -> dict[str, Any]:
    return {"content": m.content, "category": m.category, "importance": m.importance, "pinned": m.pinned}


def validate(content: str | None = None, category: str | None = None, importance: int | None = None) -> None:
    if content is not None and not content.strip():
        raise InvalidInputError("memory text is empty")
    if content is not None and (at := unpaired_surrogate(content)) is not None:
        raise InvalidInputError(
            f"memory text is not valid Unicode (an unpaired surrogate at character {at}); nothing was stored"
        )
    if category is not None and category not in CATEGORIES:
        raise InvalidInputError(f"unknown category {category!r}: use one of {', '.join(CATEGORIES)}")
    if importance is not None and (isinstance(importance, bool) or not 1 <= int(importance) <= 10):
        raise InvalidInputError(f"importance must be 1-10, got {importance}")


class MemoryRowsMixin(StoreCore):
    """Reading memories, and the history row every change of one writes inside its transaction."""

    # -- reads ---------------------------------------------------------------------------------------

    def get_memory(self, memory_id: int) -> Memory:
        row = self.con.execute(
            f"SELECT {MEMORY_COLUMNS} FROM long_term_memories WHERE id = ?", (memory_id,)
        ).fetchone()
        if row is None:
            raise NotFoundError(f"no memory with id {memory_id}")
        return memory_from_row(row)

    def list_memories(
        self,
        *,
        category: str | None = None,
        pinned: bool | None = None,
        trash: bool = False,
        text: str | None = None,
        state: str | None = None,
        limit: int = 1000,
        offset: int = 0,
        order: str = "list",
    ) -> list[Memory]:
        """Active memories (or the trash), pinned first, then by category and importance; `order="standing"`:
        pinned first, then by importance and use across categories (what a profile picks first). `state`:
        "current" (not superseded), "superseded", or "conflicts" (in an open conflict)."""
        where = ["deleted_at IS NOT NULL" if trash else "deleted_at IS NULL"]
        args: list[Any] = []
        if state is not None:
            clause = MEMORY_STATES.get(state)
            if clause is None:
                raise InvalidInputError(f"unknown state {state!r}: use one of {', '.join(MEMORY_STATES)}")
            where.append(clause)
        if category is not None:
            validate(category=category)
            where.append("category = ?")
            args.append(category)
        if pinned is not None:
            where.append("pinned = ?")
            args.append(int(pinned))
        if text:
            where.append("instr(lower(content), lower(?)) > 0")
            args.append(text)
        if order not in ORDERS:
            raise InvalidInputError(f"unknown order {order!r}: use one of {', '.join(ORDERS)}")
        sort = "deleted_at DESC, id" if trash else ORDERS[order]
        sql = (
            f"SELECT {MEMORY_COLUMNS} FROM long_term_memories WHERE {' AND '.join(where)} "
            f"ORDER BY {sort} LIMIT ? OFFSET ?"
        )
        return [memory_from_row(r) for r in self.con.execute(sql, [*args, limit, offset])]

    def count_memories(self) -> tuple[int, int]:
        """(active, of which pinned): one query."""
        row = self.con.execute(
            "SELECT count(*), coalesce(sum(pinned), 0) FROM long_term_memories WHERE deleted_at IS NULL"
        ).fetchone()
        assert row is not None  # an aggregate always has a row
        return int(row[0]), int(row[1])

    def memory_history(self, memory_id: int) -> list[HistoryEvent]:
        rows = self.con.execute(
            "SELECT id, memory_id, event, old, new, at FROM memory_history WHERE memory_id = ? ORDER BY id",
            (memory_id,),
        )
        return [
            HistoryEvent(r[0], r[1], r[2], json_loads(r[3]) or None, json_loads(r[4]) or None, r[5])
            for r in rows
        ]

    # -- inside a transaction ------------------------------------------------------------------------

    def event_time(self) -> float:
        """Now, but never before the latest recorded event: a clock set back (a wrong date after a dead
        CMOS battery, a VM restored from a snapshot) must not date a change into the past, where it
        would look old at once (a memory trashed "a year ago" is purged by the next `trash purge`)."""
        last = self.con.execute("SELECT at FROM memory_history ORDER BY id DESC LIMIT 1").fetchone()
        t = now()
        return t if last is None or last[0] is None else max(t, float(last[0]))  # type: ignore[arg-type]

    def record_history(
        self,
        memory_id: int,
        event: str,
        old: dict[str, Any] | None,
        new: dict[str, Any] | None,
        at: float | None = None,
    ) -> None:
        """A memory_history row with the old and new values, inside the caller's transaction: every module
        that changes a memory writes it (this mixin, store.memories, store.truth.timeline and conflicts)."""
        self.con.execute(
            "INSERT INTO memory_history(memory_id, event, old, new, at) VALUES (?, ?, ?, ?, ?)",
            (
                memory_id,
                event,
                None if old is None else json_dumps(old),
                None if new is None else json_dumps(new),
                at or now(),
            ),
        )
