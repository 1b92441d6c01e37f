"""Access-count cleanup: which memories have faded, and moving them to the trash in one go.

A memory is a candidate when it is NOT pinned, its importance is below `max_importance` (3), it was
accessed fewer than `min_access` (2) times, and it was last accessed (or created, if never accessed)
more than `older_than_days` (90) days ago. Thresholds come from config ([cleanup]) and may be overridden
per call (the CLI's flags). Pinned memories are excluded in the query itself, whatever the thresholds.

Cleanup never deletes: `apply_cleanup` moves the candidates to the trash in one transaction, recording a
`cleanup` event with the reason for each, so `memapp trash restore` brings any of them back exactly, and
only `purge` (after the retention period) removes them for good.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from store.config import CleanupConfig
from store.errors import InvalidInputError
from store.memory_rows import MEMORY_COLUMNS, memory_from_row
from store.records import Memory, iso, now
from store.store import Store

DAY = 86400.0


@dataclass(frozen=True, slots=True)
class Thresholds:
    min_access: int = 2  # candidates were accessed fewer times than this
    max_importance: int = 3  # ... have importance below this
    older_than_days: float = 90  # ... and were not accessed (or created) for longer than this

    @classmethod
    def from_config(
        cls,
        cfg: CleanupConfig,
        *,
        min_access: int | None = None,
        max_importance: int | None = None,
        older_than_days: float | None = None,
    ) -> Thresholds:
        t = cls(
            cfg.min_access if min_access is None else min_access,
            cfg.max_importance if max_importance is None else max_importance,
            cfg.older_than_days if older_than_days is None else older_than_days,
        )
        t.validate()
        return t

    def validate(self) -> None:
        if self.min_access < 0:
            raise InvalidInputError(f"--min-access must be 0 or more, got {self.min_access}")
        if self.max_importance < 0:
            raise InvalidInputError(f"--max-importance must be 0 or more, got {self.max_importance}")
        if not math.isfinite(self.older_than_days) or self.older_than_days < 0:
            raise InvalidInputError(f"--older-than must be 0 or more days, got {self.older_than_days}")

    def to_json(self) -> dict[str, Any]:
        return {
            "min_access": self.min_access,
            "max_importance": self.max_importance,
            "older_than_days": self.older_than_days,
        }


@dataclass(frozen=True, slots=True)
class Candidate:
    memory: Memory
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {**self.memory.to_json(), "reason": self.reason}


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def reason(memory: Memory, t: Thresholds, at: float) -> str:
    """Why `memory` is a candidate, in words (shown in the preview and stored with the cleanup event)."""
    last = memory.last_accessed if memory.last_accessed is not None else memory.created_at
    days = int((at - last) // DAY)
    when = (
        f"last accessed {iso(memory.last_accessed)}"
        if memory.last_accessed is not None
        else f"never accessed, created {iso(memory.created_at)}"
    )
    return (
        f"importance {memory.importance} (below {t.max_importance}); "
        f"accessed {_plural(memory.access_count, 'time')} (fewer than {t.min_access}); "
        f"{when}, {_plural(days, 'day')} ago (more than {t.older_than_days:g})"
    )


def find_candidates(
    store: Store, thresholds: Thresholds | None = None, *, at: float | None = None
) -> list[Candidate]:
    """The memories cleanup would move to the trash now, oldest activity first. Never a pinned one."""
    t = thresholds or Thresholds.from_config(store.config.cleanup)
    t.validate()
    at = now() if at is None else at
    rows = store.con.execute(
        f"SELECT {MEMORY_COLUMNS} FROM long_term_memories "
        "WHERE deleted_at IS NULL AND pinned = 0 AND importance < ? AND access_count < ? "
        "AND coalesce(last_accessed, created_at) < ? "
        "ORDER BY coalesce(last_accessed, created_at), id",
        (t.max_importance, t.min_access, at - t.older_than_days * DAY),
    )
    return [Candidate(m, reason(m, t, at)) for m in map(memory_from_row, rows)]


def apply_cleanup(
    store: Store, thresholds: Thresholds | None = None, *, at: float | None = None
) -> list[Candidate]:
    """Move every candidate to the trash in one transaction (`cleanup` events with the reasons)."""
    with store.con:  # the candidates are chosen and trashed under one write lock
        found = find_candidates(store, thresholds, at=at)
        store.delete_memories(
            [c.memory.id for c in found], event="cleanup", reasons={c.memory.id: c.reason for c in found}
        )
    return found


def trash_items(store: Store, *, limit: int = 10_000) -> list[dict[str, Any]]:
    """The trash, newest first, each memory with when purge may remove it."""
    retention = store.config.cleanup.trash_retention_days
    out = []
    for m in store.list_memories(trash=True, limit=limit):
        assert m.deleted_at is not None
        purge_after = m.deleted_at + retention * DAY
        out.append({**m.to_json(), "purge_after": None if m.pinned else iso(purge_after)})
    return out


def restore(store: Store, ids: list[int]) -> tuple[list[Memory], list[int]]:
    """Bring memories back from the trash in one transaction: (restored, ids that were not in the trash).

    Every id is checked first, so an unknown id (NotFoundError) restores nothing.
    """
    with store.con:
        memories = [store.get_memory(i) for i in dict.fromkeys(ids)]
        restored = [store.restore_memory(m.id) for m in memories if m.deleted_at is not None]
    return restored, [m.id for m in memories if m.deleted_at is None]
