"""What a merge leaves for the user to see: conflict copies in the queue, and notes in a memory's history.

Every row made here has a uid derived from what was merged (the memory and the losing edit's stamp), and
values taken from the merged rows, never from this device's clock: the devices that see the same
concurrent edits make the same rows, and when their files cross, the second copy of a row is the same
row (an insert of an existing uid merges into it). These rows are written to the canonical tables only,
so the next capture sends them like any local change: a device that saw the edits in another order, or
not at all yet, gets them too.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from store.memory_rows import content_hash
from store.records import json_dumps
from store.sync.materialize import Touched, history_note
from store.sync.merge import Loser
from store.sync.tables import MEMORIES
from store.text import fts_put
from store.truth.classify import Verdict

if TYPE_CHECKING:
    from store.store import Store

KIND = "sync"  # memory_conflicts.kind of the conflicts sync files (the classifier's are "classifier")


def derived_uid(prefix: str, *parts: str) -> str:
    return prefix + ":" + hashlib.sha256("|".join(parts).encode()).hexdigest()[:32]


@dataclass
class Followup:
    memory_uid: str
    losers: list[Loser]
    restored: bool
    deleted_stamp: str


def _memory_row(store: Store, uid: str) -> dict[str, Any] | None:
    cur = store.con.execute(
        "SELECT id, category, importance, source_thread_id, source_message_id, created_at, updated_at, "
        "valid_from FROM long_term_memories WHERE uid = ?",
        (uid,),
    )
    row = cur.fetchone()
    if row is None:
        return None
    names = [d[0] for d in cur.getdescription()]
    return dict(zip(names, row, strict=True))


def _device_of(stamp: str, names: dict[str, str]) -> str:
    dev = stamp.split(".", 1)[-1]
    return names.get(dev) or dev


def file_copy(store: Store, memory_uid: str, loser: Loser, names: dict[str, str], touched: Touched) -> None:
    """The losing text of a concurrent edit, as a memory of its own in the conflicts queue beside the
    memory that kept the winning text (kind "sync"): the user decides, nothing was dropped."""
    con = store.con
    copy_uid = derived_uid("c", memory_uid, loser.stamp)
    exists = store.scalar("SELECT 1 FROM long_term_memories WHERE uid = ?", (copy_uid,)) or store.scalar(
        f"SELECT 1 FROM {MEMORIES.name} WHERE uid = ?", (copy_uid,)
    )
    m = _memory_row(store, memory_uid)
    if exists or m is None:
        return
    text = str(loser.value)
    mid = int(
        store.scalar(
            "SELECT 1 + max(coalesce((SELECT max(id) FROM long_term_memories), 0), "
            "coalesce((SELECT max(memory_id) FROM memory_history), 0))"
        )
    )
    who = _device_of(loser.stamp, names)
    con.execute(
        "INSERT INTO long_term_memories(id, uid, category, content, importance, origin, user_edited, "
        "source_thread_id, source_message_id, source_note, content_hash, token_count, created_at, updated_at, "
        "valid_from) VALUES (?, ?, ?, ?, ?, 'sync', 1, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            mid,
            copy_uid,
            m["category"],
            text,
            m["importance"],
            m["source_thread_id"],
            m["source_message_id"],
            f"edited on {who} while another device edited it too",
            content_hash(text),
            store.tokens.count(text),
            m["created_at"],
            m["updated_at"],
            m["valid_from"],
        ),
    )
    fts_put(con, "fts_memories", mid, text)
    touched.new_text.add(mid)
    at = float(m["updated_at"])
    history_note(
        store, derived_uid("h", copy_uid, "add"), copy_uid, "add", None, {"content": text, "from": who}, at
    )
    first_history = int(store.scalar("SELECT coalesce(max(id), 0) FROM memory_history"))
    reason = f"edited on two devices at once; this wording is from {who}"
    cid = store.open_conflict(mid, int(m["id"]), Verdict("unsure", "review", 0.0, (reason,)))
    if cid is None:
        return
    conflict_uid = derived_uid("k", copy_uid)
    con.execute(
        "UPDATE memory_conflicts SET uid = ?, kind = ?, similarity = NULL, created_at = ? WHERE id = ?",
        (conflict_uid, KIND, at, cid),
    )
    # The queue's own history rows for the new conflict, made identical on every device that files it.
    for hid, hmid in con.execute(
        "SELECT id, memory_uid FROM memory_history WHERE id > ? AND event = 'conflict'", (first_history,)
    ).fetchall():
        other = memory_uid if hmid == copy_uid else copy_uid
        con.execute(
            "UPDATE memory_history SET uid = ?, at = ?, new = ? WHERE id = ?",
            (
                derived_uid("h", conflict_uid, str(hmid)),
                at,
                json_dumps({"conflict": conflict_uid, "with": other, "relation": KIND}),
                hid,
            ),
        )


def apply_followups(store: Store, followups: list[Followup], names: dict[str, str], touched: Touched) -> int:
    """Conflict copies and history notes for the merges of one apply. Returns the conflicts filed."""
    filed = 0
    for f in followups:
        m = _memory_row(store, f.memory_uid)
        if m is None:
            continue
        at = float(m["updated_at"])
        for loser in f.losers:
            if loser.column == "content":
                before = int(store.scalar("SELECT count(*) FROM memory_conflicts"))
                file_copy(store, f.memory_uid, loser, names, touched)
                filed += int(store.scalar("SELECT count(*) FROM memory_conflicts")) - before
            elif loser.column in ("category", "importance"):
                history_note(
                    store,
                    derived_uid("h", f.memory_uid, loser.column, loser.stamp),
                    f.memory_uid,
                    "conflict",
                    {loser.column: loser.value, "from": _device_of(loser.stamp, names)},
                    {loser.column: loser.winner, "kept": "the later edit", "relation": KIND},
                    at,
                )
        if f.restored:
            history_note(
                store,
                derived_uid("h", f.memory_uid, "restore", f.deleted_stamp),
                f.memory_uid,
                "restore",
                {"deleted_at": "deleted on another device"},
                {
                    "deleted_at": None,
                    "reason": "edited on one device while deleted on another: the edit is kept",
                },
                at,
            )
    return filed
