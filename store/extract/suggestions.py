"""Memory suggestions: candidates found in a thread, kept until the user accepts, edits or rejects them.

Why a table and not just a list computed on the fly: the user's decision must outlive the run. A
rejected suggestion is remembered by content hash (the same normalisation as memories: whitespace and
case folded) and never offered again, from this thread or any other; an accepted one links to the memory
it became. Nothing becomes a memory without acceptance (`accept_all` is the explicit "accept them all").

Novelty: a candidate whose text is already a memory (active or in the trash: the user threw it away) is
not suggested. A candidate that is a duplicate or paraphrase of an active memory of the same category
(store.truth.classify: cosine >= memory.merge_threshold, or a paraphrase where no negation, number or
name differs) is offered as a *merge* into that memory: accepting goes through `Store.add_memory`, which
merges by the same rule (or refuses, for a pinned or hand-edited memory,
unless forced), so what the suggestion says is what accepting does.

Accepting is not one transaction with the memory write: `add_memory` embeds outside its own transaction
(seconds of model work never hold the write lock). If the process dies between the two, the suggestion is
still pending and accepting it again finds the identical memory ("exists") and completes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from store.errors import InvalidInputError, NotFoundError, StoreError
from store.extract.patterns import Candidate, find_candidates
from store.memories import AddResult
from store.memory_rows import content_hash, validate
from store.records import Memory, SuggestionIn, iso, json_dumps, now
from store.secrets.sensitive import sensitive

if TYPE_CHECKING:
    from store.store import Store

STATUSES = ("pending", "accepted", "rejected")
COLUMNS = (
    "id, thread_id, message_id, category, content, importance, pattern, status, merge_with, similarity, "
    "memory_id, created_at, decided_at"
)


@dataclass(frozen=True, slots=True)
class Suggestion:
    id: int
    thread_id: int | None
    message_id: int | None
    category: str
    content: str
    importance: int
    pattern: str  # the phrasing rule that found it ("prefer", "building", "zh-like", …)
    status: str  # pending | accepted | rejected
    merge_with: int | None  # an existing memory it nearly duplicates: accepting merges there
    similarity: float | None
    memory_id: int | None  # the memory accepting produced
    created_at: float
    decided_at: float | None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "thread_id": self.thread_id,
            "message_id": self.message_id,
            "category": self.category,
            "content": self.content,
            "importance": self.importance,
            "pattern": self.pattern,
            "status": self.status,
            "action": "merge" if self.merge_with is not None else "add",
            "merge_with": self.merge_with,
            "similarity": None if self.similarity is None else round(self.similarity, 4),
            "memory_id": self.memory_id,
            "created_at": iso(self.created_at),
            "decided_at": iso(self.decided_at),
        }


@dataclass(frozen=True, slots=True)
class ExtractResult:
    """What scanning one thread found: new suggestions, and why other candidates were left out."""

    thread_id: int
    new: list[Suggestion]
    pending: list[Suggestion]  # every pending suggestion of the thread, new ones included
    already_memories: int = 0  # the text is already a memory (or was thrown away)
    already_decided: int = 0  # suggested before: pending elsewhere, accepted or rejected

    def to_json(self) -> dict[str, Any]:
        return {
            "thread_id": self.thread_id,
            "new": len(self.new),
            "already_memories": self.already_memories,
            "already_decided": self.already_decided,
            "pending": [s.to_json() for s in self.pending],
        }


@dataclass(frozen=True, slots=True)
class AcceptResult:
    suggestion: Suggestion
    memory: Memory
    action: str  # what add_memory did: added | merged | exists
    similarity: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "suggestion": self.suggestion.to_json(),
            "action": self.action,
            "similarity": None if self.similarity is None else round(self.similarity, 4),
            "memory": self.memory.to_json(),
        }


@dataclass(slots=True)
class BulkResult:
    accepted: list[AcceptResult] = field(default_factory=list)
    failed: list[tuple[Suggestion, str]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "accepted": [a.to_json() for a in self.accepted],
            "failed": [{"suggestion": s.to_json(), "error": e} for s, e in self.failed],
        }


def _row(r: Sequence[Any]) -> Suggestion:
    return Suggestion(
        int(r[0]), r[1], r[2], r[3], r[4], int(r[5]), r[6], r[7], r[8], r[9], r[10], r[11], r[12]
    )


# -- reads ---------------------------------------------------------------------------------------------


def get_suggestion(store: Store, suggestion_id: int) -> Suggestion:
    row = store.con.execute(
        f"SELECT {COLUMNS} FROM memory_suggestions WHERE id = ?", (suggestion_id,)
    ).fetchone()
    if row is None:
        raise NotFoundError(f"no suggestion with id {suggestion_id}")
    return _row(row)


def list_suggestions(
    store: Store,
    *,
    thread_id: int | None = None,
    status: str | None = "pending",
    limit: int = 500,
    offset: int = 0,
) -> list[Suggestion]:
    """Suggestions in the order they were said (thread, message); `status=None` lists every status."""
    if status is not None and status not in STATUSES:
        raise InvalidInputError(f"unknown status {status!r}: use one of {', '.join(STATUSES)}")
    where: list[str] = ["1"]
    args: list[Any] = []
    if thread_id is not None:
        where.append("thread_id = ?")
        args.append(thread_id)
    if status is not None:
        where.append("status = ?")
        args.append(status)
    rows = store.con.execute(
        f"SELECT {COLUMNS} FROM memory_suggestions WHERE {' AND '.join(where)} "
        "ORDER BY thread_id, coalesce(message_id, 0), id LIMIT ? OFFSET ?",
        [*args, limit, offset],
    )
    return [_row(r) for r in rows]


def imported_suggestions(store: Store, limit: int = 500) -> list[Suggestion]:
    """Pending suggestions that belong to no thread (an imported text list of memories), oldest first."""
    rows = store.con.execute(
        f"SELECT {COLUMNS} FROM memory_suggestions WHERE status = 'pending' AND thread_id IS NULL "
        "ORDER BY id LIMIT ?",
        (limit,),
    )
    return [_row(r) for r in rows]


def count_pending(store: Store, thread_id: int | None = None) -> int:
    if thread_id is None:
        return int(store.scalar("SELECT count(*) FROM memory_suggestions WHERE status = 'pending'"))
    return int(
        store.scalar(
            "SELECT count(*) FROM memory_suggestions WHERE status = 'pending' AND thread_id = ?", (thread_id,)
        )
    )


# -- finding -------------------------------------------------------------------------------------------


def source_messages(store: Store, memory_ids: Sequence[int]) -> dict[int, int]:
    """memory id -> the message it was accepted from, for the memories that came from a suggestion (the
    others' source is only their thread, if any). For search results that say where a memory came from."""
    rows = store.con.execute(
        "SELECT memory_id, min(message_id) FROM memory_suggestions WHERE status = 'accepted' "
        "AND message_id IS NOT NULL AND memory_id IN (SELECT value FROM json_each(?)) GROUP BY memory_id",
        (json_dumps([int(i) for i in memory_ids]),),
    )
    return {int(mid): int(msg) for mid, msg in rows}


def _known_hashes(store: Store, table: str, hashes: list[str]) -> set[str]:
    rows = store.con.execute(
        f"SELECT content_hash FROM {table} WHERE content_hash IN (SELECT value FROM json_each(?))",
        (json_dumps(hashes),),
    )
    return {str(r[0]) for r in rows}


def extract_suggestions(store: Store, thread_id: int) -> ExtractResult:
    """Scan the thread's user messages and store the new candidates as pending suggestions. Idempotent."""
    store.get_thread(thread_id)
    rows = store.con.execute(
        "SELECT id, seq, content FROM messages WHERE thread_id = ? AND role = 'user' ORDER BY seq",
        (thread_id,),
    )
    found = find_candidates((int(i), int(s), str(c)) for i, s, c in rows)
    hashes = [content_hash(c.content) for c in found]
    as_memory = _known_hashes(store, "long_term_memories", hashes)
    decided = _known_hashes(store, "memory_suggestions", hashes)
    fresh = [(c, h) for c, h in zip(found, hashes, strict=True) if h not in as_memory and h not in decided]
    merges = _near_duplicates(store, [c for c, _ in fresh])
    t = now()
    new_ids: list[int] = []
    with store.con:
        for (c, h), (merge_with, sim) in zip(fresh, merges, strict=True):
            row = (
                thread_id,
                c.message_id,
                c.category,
                c.content,
                h,
                c.importance,
                c.pattern,
                merge_with,
                sim,
                t,
            )
            if (new_id := _insert(store, row)) is not None:
                new_ids.append(new_id)
    new = [get_suggestion(store, i) for i in new_ids]
    return ExtractResult(
        thread_id,
        new,
        list_suggestions(store, thread_id=thread_id),
        sum(1 for h in hashes if h in as_memory),
        sum(1 for h in hashes if h in decided and h not in as_memory),
    )


def _insert(store: Store, row: tuple[Any, ...]) -> int | None:
    """One pending suggestion (thread_id, message_id, category, content, content_hash, importance, pattern,
    merge_with, similarity, created_at); its id, or None when the same text is suggested already."""
    store.con.execute(
        "INSERT INTO memory_suggestions(thread_id, message_id, category, content, content_hash, importance, "
        "pattern, merge_with, similarity, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT(content_hash) DO NOTHING",
        row,
    )
    return store.con.last_insert_rowid() if store.con.changes() else None


def _near_duplicates(store: Store, found: list[Candidate]) -> list[tuple[int | None, float | None]]:
    """For each candidate, the active same-category memory it nearly duplicates (merge) and how closely."""
    out: list[tuple[int | None, float | None]] = [(None, None)] * len(found)
    if not found or store.vector_problem or not store.vectors.tables_exist():
        return out
    vecs = store.embed_texts([c.content for c in found])
    if vecs is None:
        return out
    for i, (c, v) in enumerate(zip(found, vecs, strict=True)):
        merge = store.plan_memory(c.content, c.category, v).merge_into
        if merge is not None:
            out[i] = (merge[0].id, round(float(merge[1].similarity), 4))
    return out


def suggest_imported(store: Store, items: Sequence[SuggestionIn], *, embed: bool = True) -> tuple[int, int]:
    """Store memories proposed by an import (a pasted list) as pending suggestions with no thread.

    Returns (added, known): `known` counts texts that are already a memory or were suggested before
    (pending, accepted or rejected: a rejected text is never offered again). `embed` looks for
    near-duplicate memories to offer a merge, as suggestions found in threads do.
    """
    hashes = [content_hash(s.content) for s in items]
    known = _known_hashes(store, "long_term_memories", hashes) | _known_hashes(
        store, "memory_suggestions", hashes
    )
    fresh: list[tuple[SuggestionIn, str]] = []
    for s, h in zip(items, hashes, strict=True):
        try:
            validate(s.content, s.category, s.importance)
        except InvalidInputError:
            continue  # not storable (empty, not valid Unicode): counted as not added
        if sensitive(s.content):
            continue  # a password, token or card number is never proposed (issue 31.7)
        if h not in known:
            known.add(h)
            fresh.append((s, h))
    candidates = [Candidate(s.content, s.category, s.importance, s.origin) for s, _ in fresh]
    merges = _near_duplicates(store, candidates) if embed else [(None, None)] * len(fresh)
    t = now()
    added = 0
    with store.con:
        for (s, h), (merge_with, sim) in zip(fresh, merges, strict=True):
            row = (None, None, s.category, s.content, h, s.importance, s.origin, merge_with, sim, t)
            added += _insert(store, row) is not None
    return added, len(items) - added


# -- decisions -----------------------------------------------------------------------------------------


def _pending(store: Store, suggestion_id: int) -> Suggestion:
    s = get_suggestion(store, suggestion_id)
    if s.status != "pending":
        raise InvalidInputError(f"suggestion {suggestion_id} is already {s.status}")
    return s


def accept_suggestion(
    store: Store,
    suggestion_id: int,
    *,
    content: str | None = None,
    category: str | None = None,
    importance: int | None = None,
    force: bool = False,
) -> AcceptResult:
    """Make the suggestion a memory (optionally edited first) through `Store.add_memory`.

    Raises DuplicateMemoryError when it nearly duplicates a pinned or hand-edited memory (nothing is
    changed; `force` adds it as a new memory anyway).
    """
    s = _pending(store, suggestion_id)
    text = s.content if content is None else content
    validate(text, category, importance)
    res: AddResult = store.add_memory(
        text,
        category or s.category,
        importance=s.importance if importance is None else int(importance),
        origin="extract",
        source_thread_id=s.thread_id,
        source_message_id=s.message_id,
        force=force,
    )
    with store.con:  # only while still pending: a rejection made meanwhile elsewhere stands
        store.con.execute(
            "UPDATE memory_suggestions SET status = 'accepted', memory_id = ?, decided_at = ? "
            "WHERE id = ? AND status = 'pending'",
            (res.memory.id, now(), s.id),
        )
    return AcceptResult(get_suggestion(store, s.id), res.memory, res.action, res.similarity)


def reject_suggestion(store: Store, suggestion_id: int) -> Suggestion:
    """Remember the rejection: the same text is never suggested again. Rejecting twice is a no-op."""
    return reject_suggestions(store, [suggestion_id])[0]


def reject_suggestions(store: Store, suggestion_ids: Sequence[int]) -> list[Suggestion]:
    """Reject several suggestions in one transaction: all of them, or (an unknown id, an accepted one)
    none."""
    with store.con:
        found = [get_suggestion(store, i) for i in suggestion_ids]
        for s in found:
            if s.status == "accepted":
                raise InvalidInputError(f"suggestion {s.id} is already accepted (memory {s.memory_id})")
        t = now()
        for s in found:
            store.con.execute(
                "UPDATE memory_suggestions SET status = 'rejected', decided_at = ? WHERE id = ? "
                "AND status = 'pending'",
                (t, s.id),
            )
        return [get_suggestion(store, s.id) for s in found]


def accept_all(store: Store, thread_id: int | None = None) -> BulkResult:
    """Accept every pending suggestion (of one thread, or all). One that cannot be accepted (it nearly
    duplicates a pinned or hand-edited memory) stays pending and is reported, the rest go through."""
    out = BulkResult()
    for s in list_suggestions(store, thread_id=thread_id, limit=1_000_000):
        try:
            out.accepted.append(accept_suggestion(store, s.id))
        except StoreError as exc:
            out.failed.append((s, str(exc)))
    return out
