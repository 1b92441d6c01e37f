"""Dates relative to an event the archive talks about: "the week before her birthday", "the day after the
migration", "since the move".

Why: a question dated by an event names no day, and the answer's turn rarely repeats the event's words
("What did Tomás do the day after his bike was stolen?" is answered by "went to the police station and got a
crime number"). The archive knows when the event happened: the day its turns talk about it most. So the
event's words are searched on their own (the keyword retriever: one FTS5 query, no model), the day with the
most keyword evidence among the strong matches is the event's day, and store.search.dates `around_event`
turns the relation ("the week before", "two days after", "since") into a window the ranking lifts, as it
does an explicit date. The day a chat talks about an event is usually the day it happens (the reactions
cluster there); when it is told later ("my birthday was last Saturday"), the window's loose edges and the
ranking's own evidence carry the rest.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import replace

import apsw

from store.db import id_table
from store.search.dates import Window, around_event, event_cue
from store.search.keyword import KeywordHit
from store.text import MAX_QUERY_CHARS

STRONG = (
    0.2  # a match counts towards its day when its coverage of the event's words is this close to the best
)
MATCHES = 10  # the event words' best matches looked at
DAYS = 3  # the likeliest days kept
LIKELY = 0.3  # ... when they weigh at least this share of the likeliest
CANDIDATE_WINDOWS = 2  # the likeliest days whose turns become candidates (each costs a retrieval per half)
FIRST = re.compile(r"\b(first|earliest)\b")
LAST = re.compile(r"\b(last|latest|most recent)\b")


def event_days(matches: Sequence[tuple[float, float, float]], words: str = "") -> list[tuple[dt.date, float]]:
    """The days (UTC) an event likely happened on, likeliest first, each with its share of the likeliest's
    weight. `matches`: the event words' best keyword matches, (time, BM25, coverage). A match counts when it
    holds about as many of the event's words as the best one (a rare name alone must not outweigh "Happy
    birthday Marta"), weighing BM25 x coverage on its day. "the first parkrun" is the earliest such day,
    "the last one" the latest."""
    strong = [m for m in matches[:MATCHES] if m[1] > 0]
    if not strong:
        return []
    best = max(cov for _, _, cov in strong)
    mass: dict[dt.date, float] = defaultdict(float)
    for at, score, cov in strong:
        if cov >= best - STRONG:
            mass[dt.datetime.fromtimestamp(at, dt.UTC).date()] += score * max(cov, 0.05)
    top = max(mass.values())
    days = sorted((d for d in mass if mass[d] >= LIKELY * top), key=lambda d: (-mass[d], d))[:DAYS]
    if FIRST.search(words) or LAST.search(words):
        days.sort(reverse=bool(LAST.search(words)) and not FIRST.search(words))
        return [(d, 1.0 if i == 0 else mass[d] / top) for i, d in enumerate(days)]
    return [(d, mass[d] / top) for d in days]


def event_windows(
    query: str, now: float | None, find: Callable[[str], Sequence[tuple[float, float, float]]]
) -> list[Window]:
    """The windows of a query dated by an event, likeliest first (empty: no event cue, or nothing in the
    archive talks about it). `find(words)`: the archive's best keyword matches for the event's words, as
    (message time, BM25, coverage), best first; `now`: the newest message's time."""
    cue = event_cue(query[:MAX_QUERY_CHARS])
    if cue is None:
        return []
    ref = dt.datetime.fromtimestamp(now, dt.UTC).date() if now is not None else dt.date.today()
    return [
        replace(around_event(cue, day, ref), share=share)
        for day, share in event_days(find(cue.event), cue.event)
    ]


def timed(con: apsw.Connection, hits: Sequence[KeywordHit]) -> list[tuple[float, float, float]]:
    """(time, BM25, coverage) of message hits, best first (what `event_windows`'s `find` returns)."""
    ids = [h.key[1] for h in hits if h.key[0] == "message"]
    if not ids:
        return []
    listed, param = id_table(ids)
    at = {
        int(i): float(t)
        for i, t in con.execute(
            f"SELECT id, created_at FROM messages WHERE id IN (SELECT value FROM {listed})", (param,)
        )
        if t is not None
    }
    return [(at[h.key[1]], h.bm25, h.coverage) for h in hits if h.key[0] == "message" and h.key[1] in at]


__all__ = ["CANDIDATE_WINDOWS", "MATCHES", "event_days", "event_windows", "timed"]
