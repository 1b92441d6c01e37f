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

# How far back a turn's words tell of, in days ("yesterday I…", "last weekend we…"): read only when the
# query names a date (`told`), from the start of each turn. English and the five languages of dates_i18n.
TOLD = (
    (1.5, ("yesterday", "last night", "gestern", "ayer", "anoche", "hier soir", "昨天", "昨日", "昨晚")),
    (
        9.0,
        (
            "last week",
            "last weekend",
            "last saturday",
            "last sunday",
            "last friday",
            "the other day",
            "letzte woche",
            "letztes wochenende",
            "semana pasada",
            "fin de semana pasado",
            "semaine dernière",
            "week-end dernier",
            "上周",
            "上个周末",
            "先週",
        ),
    ),
    (40.0, ("last month", "letzten monat", "mes pasado", "mois dernier", "上个月", "先月")),
)
_TOLD_SQL = (
    "(SELECT CASE "
    + " ".join(
        "WHEN " + " OR ".join(f"instr(c, '{w}') > 0" for w in words) + f" THEN {days}" for days, words in TOLD
    )
    + " ELSE 0 END FROM (SELECT lower(substr(n.content, 1, 400)) AS c))"
)


def message_context(
    con: apsw.Connection,
    message_ids: Sequence[int],
    filters: Filters,
    window: int = 1,
    gap_hours: float = 3.0,
    *,
    told: bool = False,
) -> Context:
    """Each message's thread, and the turns up to `window` places before and after it that pass the
    filters, with what the conversation ranking reads of them (store.search.conversation): role,
    author, time, whether the turn asks something, and (`told`: the query names a date) how far back
    its words tell of. One query; a neighbour is in its message's thread by definition."""
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
        "instr(n.content, '?') + instr(n.content, '\uff1f') > 0, "
        f"{_TOLD_SQL if told else '0'} "
        f"FROM {every} AS j CROSS JOIN messages n ON n.id = j.value",
        (param,),
    )
    thread_of: dict[int, int] = {}
    near: dict[int, list[int]] = {}
    turns: dict[int, Turn] = {}
    for nid, tid, seq, role, at, name, asks, back in rows:
        turns[nid] = Turn(
            tid,
            seq,
            role,
            name.strip() if isinstance(name, str) and name.strip() else None,
            None if at is None else float(at),
            bool(asks),
            float(back or 0.0),
        )
        thread_of[nid] = tid
    centres = [mid for mid in message_ids if mid in turns]
    hood = build(turns, centres, width, gap_hours)
    for mid in centres:
        listed_near = [n for n, d in hood.window_of.get(mid, ()) if abs(d) == 1]
        if listed_near:
            near[mid] = listed_near
    return Context(thread_of, near, hood)
