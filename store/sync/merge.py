"""Applying another device's changeset to the mirror: the conflict handler and the merge of concurrent edits.

`apsw.Changeset.apply` applies what applies cleanly (an insert of a new row, an update whose old values
are the ones here: a fast-forward) and calls `Handler.conflict` for the rest. Because every editable row
carries its `stamps` (store.sync.tables), any edit made here that the other device had not seen makes
the update's old values differ, so a clean apply is always a true fast-forward. The handler never
writes (it runs inside SQLite's apply loop): it keeps the conflicting change and answers OMIT, and the
engine merges those afterwards with `merge_row`, in the same transaction:

- each register (lww column) takes the value of the higher stamp, whatever the order the changes
  arrive in, so every device ends with the same row;
- a memory's text that loses is not dropped: it becomes a copy of the memory, filed in the conflicts
  queue (kind "sync") by store.sync.materialize; a category or importance that loses is recorded in the
  memory's history (a `conflict` event);
- a memory deleted on one device while edited on the other stays, with the edit (delete vs edit keeps
  the edit), and the restore is recorded; a memory purged on one device while its text, category or
  importance was edited on the other comes back (the handler lets the delete through and the engine
  keeps the canonical row: the next capture sends it again whole); any other change made without
  seeing the purge is dropped (store.sync.tombstones).

Deletes of threads win over concurrent renames, appends and imports (store.sync.tombstones drops those
before the apply; a re-import made after the delete was seen brings a thread back); pins and access
counts are sets and per-device counters (store.sync.tables) and never really conflict.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import apsw

from store.sync.tables import ACCESS, BY_NAME, MEMORIES, PINS, Spec

OMIT = apsw.SQLITE_CHANGESET_OMIT
REPLACE = apsw.SQLITE_CHANGESET_REPLACE
ABORT = apsw.SQLITE_CHANGESET_ABORT
GUARDED = ("content", "category", "importance")
RESTORED = "+r"  # appended to a stamp: the register's state after a delete undone by a concurrent edit  # a memory's fields whose losing value is never dropped


@dataclass
class Stashed:
    """A change the handler set aside: `op` is "update" (concurrent edit) or "insert" (the row exists
    here already)."""

    table: str
    op: str
    old: tuple[Any, ...] | None
    new: tuple[Any, ...]
    local: tuple[Any, ...] | None


@dataclass
class Handler:
    """The conflict callback for one apply, and what it set aside."""

    stashed: list[Stashed] = field(default_factory=list)
    # memories purged there, changed here: kept, and sent again whole (uid -> their stamps here)
    resurrect: dict[str, str] = field(default_factory=dict)

    def conflict(self, reason: int, change: apsw.TableChange) -> int:
        try:
            return self._decide(reason, change)
        except Exception:  # an exception inside SQLite's apply loop would abort it with a vaguer error
            return ABORT

    def _decide(self, reason: int, change: apsw.TableChange) -> int:
        table, op = change.name, change.op
        old = tuple(change.old) if change.old is not None else None
        new = tuple(change.new) if change.new is not None else ()
        local = tuple(change.conflict) if change.conflict is not None else None
        if reason in (apsw.SQLITE_CHANGESET_CONSTRAINT, apsw.SQLITE_CHANGESET_FOREIGN_KEY):
            return ABORT
        if table in (PINS,):
            return OMIT  # a pin already here, or already removed: a set, nothing to decide
        if table == ACCESS:
            # A counter row gone here went with its memory (purged here, or purged elsewhere and sent
            # again whole by a device whose own row then carries the count): nothing to add back.
            if reason == apsw.SQLITE_CHANGESET_NOTFOUND:
                return OMIT
            return REPLACE  # the owning device's row is the truth about its own count
        spec = BY_NAME[table]
        if reason == apsw.SQLITE_CHANGESET_NOTFOUND:
            return OMIT  # edited there, deleted here: the deleting side keeps it deleted (or resends it)
        if op == "DELETE":  # deleted there, changed here
            if (
                table == MEMORIES.name
                and old is not None
                and local is not None
                and _edited_unseen(old, local)
            ):
                self.resurrect[str(old[0])] = str(local[-1])
            return REPLACE
        if reason == apsw.SQLITE_CHANGESET_CONFLICT:  # an insert of a row that exists here
            self.stashed.append(Stashed(table, "insert", None, new, local))
            return OMIT
        if spec.stamped or local is not None:
            self.stashed.append(Stashed(table, "update", old, new, local))
        return OMIT


def _edited_unseen(purged: tuple[Any, ...], here: tuple[Any, ...]) -> bool:
    """Whether a memory purged elsewhere holds here a text, category or importance the purger had not
    seen (a newer stamp, another value): then it is kept and sent again whole, because that edit exists
    nowhere else. A trash, a restore or an import of the same memory made without seeing the purge is
    not one (the purger had seen what it threw away); store.sync.tombstones drops those everywhere, so
    whether the memory survives does not depend on which device heard of the purge first."""
    ps, hs = _stamps(purged[-1], {}), _stamps(here[-1], {})
    return any(
        here[MEMORIES.index(c)] != purged[MEMORIES.index(c)] and hs.get(c, "") > ps.get(c, "")
        for c in GUARDED
    )


def _present(value: Any) -> bool:
    return value is not apsw.no_change


def _stamps(value: Any, fallback: dict[str, str]) -> dict[str, str]:
    if not _present(value) or not value:
        return dict(fallback)
    parsed = json.loads(value)
    return {str(k): str(v) for k, v in parsed.items()} if isinstance(parsed, dict) else dict(fallback)


def _order_key(value: Any) -> tuple[int, str]:
    """A total order over SQLite values (None first), for choosing between two fixed values."""
    return (0, "") if value is None else (1, repr(value))


def _max(a: Any, b: Any) -> Any:
    if a is None or b is None:
        return b if a is None else a
    return max(a, b)


@dataclass
class Loser:
    """A register's value that lost to a concurrent edit with a higher stamp."""

    column: str
    value: Any
    stamp: str
    winner: Any


@dataclass
class Merged:
    row: list[Any]
    losers: list[Loser]
    restored: bool = False  # a delete undone because the other device edited the memory meanwhile
    stamps: dict[str, str] = field(default_factory=dict)


def merge_row(spec: Spec, stash: Stashed) -> Merged:
    """The merged mirror row for a stashed insert or update (deterministic: the same on every device)."""
    assert stash.local is not None
    local = list(stash.local)
    new = stash.new
    ls = _stamps(local[-1], {}) if spec.stamped else {}
    if stash.op == "insert":
        os_: dict[str, str] = {}
        ns = _stamps(new[-1], {}) if spec.stamped else {}
    else:
        old = stash.old or ()
        os_ = _stamps(old[-1], ls) if spec.stamped else {}
        ns = _stamps(new[-1], os_) if spec.stamped else {}
    out = Merged(list(local), [], stamps=dict(ls))
    for c in spec.columns:
        i = spec.index(c)
        value = new[i]
        if not _present(value):
            continue
        if c in spec.lww:
            _merge_register(out, c, i, value, ls.get(c, ""), os_.get(c, ""), ns.get(c, ""), stash.op)
        elif c in spec.maxed:
            out.row[i] = _max(local[i], value)
        elif (
            stash.op == "update"
            and stash.old is not None
            and _present(stash.old[i])
            and local[i] == stash.old[i]
        ):
            out.row[i] = value  # a fixed column edited there, untouched here
        else:
            out.row[i] = min(local[i], value, key=_order_key)
    if spec is MEMORIES:
        out.restored = _keep_edit_over_delete(out, ls, ns)
    if spec.stamped:
        out.row[-1] = json.dumps(out.stamps, sort_keys=True)
    return out


def _merge_register(out: Merged, c: str, i: int, value: Any, lo: str, ro: str, rn: str, op: str) -> None:
    if op == "update" and rn == ro:
        return  # not edited there
    if op == "update" and lo == ro:
        out.row[i], out.stamps[c] = value, rn  # fast-forward: not edited here since
        return
    if rn == lo:
        return  # the same edit, seen twice
    if rn > lo:
        if out.row[i] != value:
            out.losers.append(Loser(c, out.row[i], lo, value))
        out.row[i], out.stamps[c] = value, rn
    elif out.row[i] != value:
        out.losers.append(Loser(c, value, rn, out.row[i]))


def _keep_edit_over_delete(out: Merged, ls: dict[str, str], ns: dict[str, str]) -> bool:
    """Delete vs edit keeps the edit: a memory the merge leaves deleted is restored when the side that did
    not delete it holds an edit (text, category, importance) the deleting side had not seen. Decided on
    the two versions' stamps alone (not on the order changes arrived in), so every device decides alike:
    the deleting side's delete stamp is the higher one (the other had not seen it), and the other side's
    stamp for some such field is higher than the deleting side's (the deleter had not seen that edit)."""
    i = MEMORIES.index("deleted_at")
    ld, rd = ls.get("deleted_at", ""), ns.get("deleted_at", "")
    if out.row[i] is None or ld == rd:
        return False
    deleter, other = (ls, ns) if ld > rd else (ns, ls)
    if not any(other.get(c, "") > deleter.get(c, "") for c in GUARDED):
        return False
    out.row[i] = None
    # A stamp of its own, above both and the same on every device: the restore is a new state of the
    # register (it wins over the plain delete wherever the two meet), not the delete's stamp reused.
    out.stamps["deleted_at"] = max(ld, rd) + RESTORED
    return True


def changed_uids(changeset: bytes, deleted: dict[str, set[str]] | None = None) -> dict[str, set[str]]:
    """table -> the uids (or memory uids, for pins and access rows) a changeset touches; those it
    deletes are also added to `deleted`, when given (the same pass)."""
    out: dict[str, set[str]] = {}
    for change in apsw.Changeset.iter(changeset):
        op = change.op
        row: Sequence[Any] = change.new if op == "INSERT" else change.old  # type: ignore[assignment]
        uid = str(row[0])
        out.setdefault(change.name, set()).add(uid)
        if deleted is not None and op == "DELETE":
            deleted.setdefault(change.name, set()).add(uid)
    return out
