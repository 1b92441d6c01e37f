"""Search results from ranked keys: the rows behind them, read in one query per kind, with snippets.

Kept apart from the engine (store.search.engine) so the engine stays the search's steps.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import apsw

from store.db import id_table
from store.search.filters import KINDS
from store.search.keyword import Key
from store.search.query import ParsedQuery
from store.search.rank import Ranked, snippet
from store.search.results import SearchResult

# (id, thread_id, external_id, role, category, content, thread title, time) of each kind; {ids}: the
# table store.db.id_table names.
_HYDRATE = {
    "message": "SELECT m.id, m.thread_id, m.external_id, m.role, NULL, m.content, t.title, m.created_at "
    "FROM messages m JOIN threads t ON t.id = m.thread_id WHERE m.id IN (SELECT value FROM {ids})",
    "memory": "SELECT m.id, m.source_thread_id, NULL, NULL, m.category, m.content, t.title, m.created_at "
    "FROM long_term_memories m LEFT JOIN threads t ON t.id = m.source_thread_id "
    "WHERE m.id IN (SELECT value FROM {ids})",
    "summary": "SELECT s.thread_id, s.thread_id, NULL, NULL, NULL, s.content, t.title, s.updated_at "
    "FROM thread_summaries s JOIN threads t ON t.id = s.thread_id WHERE s.thread_id IN (SELECT value FROM {ids})",
}


def hydrate(
    con: apsw.Connection, ranked: Sequence[Ranked], parsed: ParsedQuery, chunk_of: dict[Key, int]
) -> list[SearchResult]:
    """The rows behind the ranked keys, with their thread's title, in one query per kind; a message
    found by meaning has its snippet around its best chunk (read for the results only)."""
    ids: dict[str, list[int]] = {kind: [] for kind in KINDS}
    for r in ranked:
        ids[r.key[0]].append(r.key[1])
    rows: dict[Key, tuple[Any, ...]] = {}
    for kind, sql in _HYDRATE.items():
        if ids[kind]:
            listed, param = id_table(ids[kind])
            for row in con.execute(sql.format(ids=listed), (param,)):
                rows[(kind, int(row[0]))] = row
    extras: dict[int, tuple[Any, ...]] = {}
    if ids["memory"]:
        listed, param = id_table(ids["memory"])
        for row in con.execute(
            "SELECT id, superseded_by, valid_until, source_message_id, origin FROM long_term_memories "
            f"WHERE id IN (SELECT value FROM {listed})",
            (param,),
        ):
            extras[int(row[0])] = tuple(row[1:])
    chunks = {chunk_of[r.key]: r.key for r in ranked if r.key in chunk_of}
    spans: dict[Key, tuple[int, int]] = {}
    if chunks:
        listed, param = id_table(list(chunks))
        for cid, a, b in con.execute(
            f"SELECT id, start_char, end_char FROM message_chunks WHERE id IN (SELECT value FROM {listed})",
            (param,),
        ):
            spans[chunks[int(cid)]] = (int(a), int(b))
    out = []
    for r in ranked:
        row = rows.get(r.key)
        if row is None:
            continue
        tid, ext, role, category, content, title, at = row[1:]
        extra = extras.get(r.key[1], (None, None, None, None)) if r.key[0] == "memory" else (None,) * 4
        out.append(
            SearchResult(
                r.key[0],
                r.key[1],
                tid,
                ext,
                role,
                category,
                snippet(content, parsed, spans.get(r.key)),
                r.score,
                r.matched,
                title,
                at,
                *extra,
            )
        )
    return out
