"""The conflicts queue: pairs of memories the classifier would not decide alone, and the user's decisions.

Why a queue and not a guess: a changed value without a word saying it changed ("uses Postgres for billing"
next to "uses Redis for billing") may be an update or a second fact; a paraphrase in another category may
be worth merging or not. The user decides once, with both texts side by side:

    keep new   the old memory is superseded by the new one (valid_until, ranked down, out of context)
    keep old   the new memory goes to the trash (restorable), the old one is current again
    both       both stay current (undoes an automatic supersede)
    merge      one memory: the old row takes the new wording (importance the max, pinned if either was),
               the new row goes to the trash

Each decision writes a `resolve` history row on both memories, in the same transaction. Automatic
supersedes are stored here already resolved (`keep new`), so `memapp conflicts list --all` shows them and
a second `resolve` can change the decision.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from store.errors import InvalidInputError, NotFoundError
from store.memory_rows import content_hash
from store.records import Memory, iso, json_loads, now

if TYPE_CHECKING:
    from store.store import Store

KEEPS = ("new", "old", "both", "merge")
# What each answer does, in the words the card and the CLI use.
OPTION_WORDS = {
    "new": "newer replaces older",
    "both": "keep both",
    "merge": "merge into one memory",
    "old": "keep the older one only",
}
HEADLINES = {
    "reversal": "The newer memory says the opposite of the older one.",
    "update": "The newer memory may replace the older one.",
    "paraphrase": "The two may say the same thing.",
    "unsure": "These two are about the same thing, and something differs.",
}
COLUMNS = "id, new_id, old_id, relation, similarity, reasons, status, resolution, created_at, resolved_at"


@dataclass(frozen=True, slots=True)
class Conflict:
    id: int
    new_id: int
    old_id: int
    relation: str  # reversal | update | paraphrase | unsure
    similarity: float | None
    reasons: tuple[str, ...]
    status: str  # open | resolved
    resolution: str | None  # new | old | both | merge
    created_at: float
    resolved_at: float | None
    new: Memory
    old: Memory

    @property
    def suggested(self) -> str:
        """The resolution the classifier leans to (the TUI's default button)."""
        return {"reversal": "new", "update": "new", "paraphrase": "merge"}.get(self.relation, "both")

    @property
    def explanation(self) -> str:
        """Why this pair was raised, in plain words (the conflict card, `memapp conflicts`, MCP)."""
        head = HEADLINES.get(self.relation, HEADLINES["unsure"])
        why = "; ".join(self.reasons)
        automatic = self.status == "resolved" and self.resolved_at == self.created_at
        choice = OPTION_WORDS.get(self.resolution or "", "?")
        if self.status == "open":
            done = " Nothing changes until you choose."
        elif automatic:
            done = f" memapp was sure and chose: {choice}. You can change it."
        else:
            done = f" You chose: {choice}."
        return f"{head}{f' Why: {why}.' if why else ''}{done}"

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "relation": self.relation,
            "similarity": self.similarity,
            "reasons": list(self.reasons),
            "status": self.status,
            "resolution": self.resolution,
            "suggested": self.suggested,
            "explanation": self.explanation,
            "created_at": iso(self.created_at),
            "resolved_at": iso(self.resolved_at),
            "new": self.new.to_json(),
            "old": self.old.to_json(),
        }


def _conflict(store: Store, r: Sequence[Any]) -> Conflict:
    reasons = json_loads(r[5])
    return Conflict(
        int(r[0]),
        int(r[1]),
        int(r[2]),
        str(r[3]),
        r[4],
        tuple(reasons) if isinstance(reasons, list) else (),
        str(r[6]),
        r[7],
        float(r[8]),
        r[9],
        store.get_memory(int(r[1])),
        store.get_memory(int(r[2])),
    )


def get_conflict(store: Store, conflict_id: int) -> Conflict:
    row = store.con.execute(f"SELECT {COLUMNS} FROM memory_conflicts WHERE id = ?", (conflict_id,)).fetchone()
    if row is None:
        raise NotFoundError(f"no conflict with id {conflict_id}")
    return _conflict(store, row)


def list_conflicts(
    store: Store, *, status: str | None = "open", limit: int = 500, offset: int = 0
) -> list[Conflict]:
    """Open conflicts (newest first) whose memories are both out of the trash; `status=None`: every one."""
    if status not in (None, "open", "resolved"):
        raise InvalidInputError(f"unknown status {status!r}: use open or resolved")
    where = "c.status = ?" if status else "1"
    args: list[Any] = [status] if status else []
    if status == "open":
        where += " AND n.deleted_at IS NULL AND o.deleted_at IS NULL"
    rows = store.con.execute(
        f"SELECT {', '.join('c.' + c for c in COLUMNS.split(', '))} FROM memory_conflicts c "
        "JOIN long_term_memories n ON n.id = c.new_id JOIN long_term_memories o ON o.id = c.old_id "
        f"WHERE {where} ORDER BY c.id DESC LIMIT ? OFFSET ?",
        [*args, limit, offset],
    ).fetchall()
    return [_conflict(store, r) for r in rows]


def count_open(store: Store) -> int:
    row = store.con.execute(
        "SELECT count(*) FROM memory_conflicts c JOIN long_term_memories n ON n.id = c.new_id "
        "JOIN long_term_memories o ON o.id = c.old_id WHERE c.status = 'open' "
        "AND n.deleted_at IS NULL AND o.deleted_at IS NULL"
    ).fetchone()
    return int(row[0]) if row else 0


def open_conflict_ids(store: Store) -> dict[int, int]:
    """memory id -> an open conflict it is part of (the Memories screen marks and filters them)."""
    out: dict[int, int] = {}
    for c in list_conflicts(store, limit=10_000):
        out.setdefault(c.new_id, c.id)
        out.setdefault(c.old_id, c.id)
    return out


def resolve_conflict(store: Store, conflict_id: int, keep: str, *, content: str | None = None) -> Conflict:
    """Apply the user's decision (see the module docstring). One transaction; history on both memories.

    A conflict can be decided again: the previous decision is undone first (a merge gives the old memory
    its own words back and the new one comes back from the trash), so `--keep old` after `--keep merge`
    keeps the old wording (issue 31.10). The same decision again changes nothing and writes no history."""
    if keep not in KEEPS:
        raise InvalidInputError(f"unknown resolution {keep!r}: use one of {', '.join(KEEPS)}")
    if content is not None and (keep != "merge" or not content.strip()):
        raise InvalidInputError("a text of your own goes with --keep merge, and it cannot be empty")
    c = get_conflict(store, conflict_id)
    unmerge = _merged_away(store, c) if c.resolution == "merge" and keep != "merge" else None
    vec = store.embed_texts([unmerge]) if unmerge is not None else None
    own_vec = store.embed_texts([content.strip()]) if content is not None else None
    with store.con:
        c = get_conflict(store, conflict_id)
        if c.status == "resolved" and c.resolution == keep and content is None:
            return c
        if content is not None and c.resolution == "merge":
            _undo(store, c, keep, vec, now())
            c = get_conflict(store, conflict_id)
        t = now()
        if c.resolution in ("merge", "old"):
            _undo(store, c, keep, vec, t)
            c = get_conflict(store, conflict_id)
        new, old = c.new, c.old
        if new.deleted_at is not None and keep in ("new", "both", "merge"):
            raise InvalidInputError(f"memory {new.id} is in the trash: restore it first")
        if old.deleted_at is not None and keep in ("old", "both", "merge"):
            raise InvalidInputError(f"memory {old.id} is in the trash: restore it first")
        if keep == "new":
            _keep_new(store, c, t)
        elif keep in ("old", "both"):
            _reinstate_if(store, old, new.id)
            _reinstate_if(store, new, old.id)
            if keep == "old":
                store.delete_memory(new.id, reason=f"conflict {c.id}: kept memory {old.id}")
        else:
            _merge(store, c, t, content.strip() if content is not None else None, own_vec)
        store.con.execute(
            "UPDATE memory_conflicts SET status = 'resolved', resolution = ?, resolved_at = ? WHERE id = ?",
            (keep, t, c.id),
        )
        for mid in (new.id, old.id):
            store.record_history(
                mid,
                "resolve",
                {"conflict": c.id, "resolution": c.resolution},
                {"conflict": c.id, "resolution": keep},
                t,
            )
        return get_conflict(store, c.id)


def _keep_new(store: Store, c: Conflict, t: float) -> None:
    new, old = c.new, c.old
    _reinstate_if(store, new, old.id)
    if old.superseded_by != new.id:
        until = max(new.valid_from or new.created_at, old.valid_from or old.created_at)
        store.con.execute(
            "UPDATE long_term_memories SET valid_until = ?, superseded_by = ?, updated_at = ? WHERE id = ?",
            (until, new.id, t, old.id),
        )
        store.record_history(
            old.id,
            "supersede",
            {"valid_until": old.valid_until, "superseded_by": old.superseded_by},
            {"valid_until": until, "superseded_by": new.id, "conflict": c.id},
        )


def _merge(store: Store, c: Conflict, t: float, own: str | None = None, own_vec: Any = None) -> None:
    """The old row takes the new wording (or the user's own, `own`: then it counts as edited by hand);
    the new row goes to the trash."""
    new, old = c.new, c.old
    _reinstate_if(store, old, new.id)
    importance = max(old.importance, new.importance)
    text = own if own is not None else new.content
    store.con.execute(
        "UPDATE long_term_memories SET content = ?, content_hash = ?, importance = ?, pinned = ?, "
        "token_count = ?, updated_at = ?, user_edited = user_edited OR ? WHERE id = ?",
        (
            text,
            content_hash(text),
            importance,
            int(old.pinned or new.pinned),
            store.tokens.count(text),
            t,
            int(own is not None),
            old.id,
        ),
    )
    if own is None:
        store.reindex_memory(old.id, new.id)
    else:
        store.reindex_memory(old.id)
        if own_vec is not None:
            store.put_memory_vector(old.id, own_vec[0])
    store.record_history(
        old.id,
        "merge",
        {"content": old.content, "importance": old.importance, "pinned": old.pinned},
        {
            "content": text,
            "importance": importance,
            "pinned": old.pinned or new.pinned,
            "from": new.id,
            **({"edited": True} if own is not None else {}),
        },
    )
    store.delete_memory(new.id, reason=f"conflict {c.id}: merged into memory {old.id}")


def _merged_away(store: Store, c: Conflict) -> str | None:
    """The old memory's own words before this conflict's merge (its `merge` history row)."""
    for h in reversed(store.memory_history(c.old_id)):
        if h.event == "merge" and h.new and h.new.get("from") == c.new_id and h.old:
            return str(h.old.get("content"))
    return None


def _undo(store: Store, c: Conflict, keep: str, vec: Any, t: float) -> None:
    """Take back a merge (the old memory's words, importance and pin as they were) or a keep-old (the new
    memory out of the trash), so the next decision starts from the two memories as they were."""
    if c.resolution == "merge":
        for h in reversed(store.memory_history(c.old_id)):
            if h.event == "merge" and h.new and h.new.get("from") == c.new_id and h.old:
                before = h.old
                content = str(before.get("content"))
                store.con.execute(
                    "UPDATE long_term_memories SET content = ?, content_hash = ?, importance = ?, pinned = ?, "
                    "token_count = ?, updated_at = ? WHERE id = ?",
                    (
                        content,
                        content_hash(content),
                        int(before.get("importance", c.old.importance)),
                        int(bool(before.get("pinned", c.old.pinned))),
                        store.tokens.count(content),
                        t,
                        c.old_id,
                    ),
                )
                store.reindex_memory(c.old_id)
                if vec is not None:
                    store.put_memory_vector(c.old_id, vec[0])
                store.record_history(
                    c.old_id,
                    "edit",
                    {"content": c.old.content},
                    {"content": content, "unmerged": c.new_id},
                    t,
                )
                break
    if c.new.deleted_at is not None and keep != "old":
        store.restore_memory(c.new_id)


def _reinstate_if(store: Store, memory: Memory, by: int) -> None:
    """Make `memory` current again if the other memory of the pair had superseded it."""
    if memory.superseded_by == by and memory.valid_until is not None:
        store.reinstate_memory(memory.id)
