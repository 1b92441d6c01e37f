"""The turns around a search's candidates, read in one query: what the conversation ranking needs.

Kept apart from the engine (store.search.engine) so it stays one screen of SQL: each candidate's thread,
the turns up to `window` places either side that pass the filters, and of each turn its role, its
author (the `name` an import keeps in a message's metadata: the generic format's `name`), its time and
whether it asks something. store.search.conversation turns these into sessions and windows.
"""

from __future__ import annotations

from collections.abc import Sequence

import apsw

from store.db import id_table
from store.search.candidates import message_where
from store.search.conversation import Turn, build
from store.search.filters import Filters
from store.search.rank import Context


def message_context(
    con: apsw.Connection,
    message_ids: Sequence[int],
    filters: Filters,
    window: int = 1,
    gap_hours: float = 3.0,
) -> Context:
    """Each message's thread, and the turns up to `window` places before and after it that pass the
    filters, with what the conversation ranking reads of them (store.search.conversation): role,
    author, time, whether the turn asks something. One query; a neighbour is in its message's
    thread by definition."""
    if not message_ids:
        return Context()
    where, args = message_where(filters, "n")
    listed, param = id_table(message_ids)
    width = max(1, int(window))
    # The window's turns once each (neighbouring candidates share most of theirs), then what is read of
    # them: half the rows, and the metadata and text looked at once per turn.
    near_ids = [
        int(i)
        for (i,) in con.execute(
            "SELECT DISTINCT n.id FROM messages m JOIN messages n ON n.thread_id = m.thread_id "
            f"AND n.seq BETWEEN m.seq - {width} AND m.seq + {width} AND {' AND '.join(where)} "
            f"WHERE m.id IN (SELECT value FROM {listed})",
            [*args, param],
        )
    ]
    every, param = id_table(near_ids)
    rows = con.execute(
        "SELECT n.id, n.thread_id, n.seq, n.role, n.created_at, "
        "CASE WHEN json_valid(n.metadata) THEN json_extract(n.metadata, '$.name') END, "
        "instr(n.content, '?') + instr(n.content, '\uff1f') > 0 "
        f"FROM {every} AS j CROSS JOIN messages n ON n.id = j.value",
        (param,),
    )
    thread_of: dict[int, int] = {}
    near: dict[int, list[int]] = {}
    turns: dict[int, Turn] = {}
    for nid, tid, seq, role, at, name, asks in rows:
        turns[nid] = Turn(
            tid,
            seq,
            role,
            name.strip() if isinstance(name, str) and name.strip() else None,
            None if at is None else float(at),
            bool(asks),
        )
        thread_of[nid] = tid
    centres = [mid for mid in message_ids if mid in turns]
    hood = build(turns, centres, width, gap_hours)
    for mid in centres:
        listed_near = [n for n, d in hood.window_of.get(mid, ()) if abs(d) == 1]
        if listed_near:
            near[mid] = listed_near
    return Context(thread_of, near, hood)
