"""What `memapp doctor` checks beyond SQLite's integrity_check: that the content agrees with itself.

Comparing row counts was not enough: an outside attack swapped two keyword-index rows, set a wrong
`message_count` and left a gap in a thread's sequence, and doctor said ok each time. Each check here
names the row and what is wrong with it, so a report can be acted on (`memapp reindex` for the derived
indexes; the canonical rows are the truth).

The per-row comparisons (keyword index text, memory content hashes) read a random sample by default, a
few thousand rows, so doctor stays quick on a big chat.db; `full=True` (`doctor --full`) reads them all.
The per-thread totals and sequences are one grouped query each and always cover everything.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import apsw

from store.memory_rows import content_hash
from store.text import index_text

SAMPLE = 2000
PHRASE_WORDS = 12  # words of a row's text looked up as a phrase at its rowid
FTS_TOKENIZER_ARGS = ["remove_diacritics", "2", "categories", "L* N* Co So"]  # as store/migrations.py
MAX_LISTED = 10  # problems listed per check; the rest are counted

_FTS = (
    ("fts_messages", "messages", "id", "content"),
    ("fts_memories", "long_term_memories", "id", "content"),
    ("fts_summaries", "thread_summaries", "thread_id", "content"),
)


def _rows(con: apsw.Connection, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in con.execute(sql, args)]


def _listed(found: list[str], what: str) -> list[str]:
    if len(found) <= MAX_LISTED:
        return found
    return [*found[:MAX_LISTED], f"… and {len(found) - MAX_LISTED} more {what}"]


def _sampled(full: bool) -> str:
    return "" if full else f" ORDER BY random() LIMIT {SAMPLE}"


def thread_totals(con: apsw.Connection, full: bool) -> list[str]:
    rows = _rows(
        con,
        "SELECT t.id, t.message_count, t.token_count, count(m.id), coalesce(sum(m.token_count), 0) "
        "FROM threads t LEFT JOIN messages m ON m.thread_id = t.id GROUP BY t.id "
        "HAVING t.message_count != count(m.id) OR t.token_count != coalesce(sum(m.token_count), 0)",
    )
    found = [
        f"thread {tid}: message_count {mc} / token_count {tc}, but its messages are {n} with {tokens} tokens"
        for tid, mc, tc, n, tokens in rows
    ]
    return _listed(found, "threads with wrong totals")


def thread_sequences(con: apsw.Connection, full: bool) -> list[str]:
    rows = _rows(
        con,
        "SELECT thread_id, count(*), min(seq), max(seq) FROM messages GROUP BY thread_id "
        "HAVING min(seq) != 0 OR max(seq) != count(*) - 1",
    )
    found = [
        f"thread {tid}: {n} messages numbered {lo}..{hi} (expected 0..{n - 1}: a gap or a repeat)"
        for tid, n, lo, hi in rows
    ]
    return _listed(found, "threads with sequence gaps")


def _phrase(tokenize: Any, text: str) -> str | None:
    """An FTS5 phrase of the first words of `text`, as the index tokenizes them (None: no words)."""
    tokens = [t[2] for t in tokenize(index_text(text).encode("utf-8"), apsw.FTS5_TOKENIZE_DOCUMENT, None)]
    if not tokens:
        return None
    return '"' + " ".join(t.replace('"', '""') for t in tokens[:PHRASE_WORDS]) + '"'


def keyword_index(con: apsw.Connection, full: bool) -> list[str]:
    """The keyword tables are contentless (the canonical rows hold the text), so a row's indexed text
    cannot be read back; instead the first words of the canonical text must match, as a phrase, at the
    same rowid. A row holding another row's text (a swap) fails that, as does a missing row."""
    tokenize = con.fts5_tokenizer("unicode61", FTS_TOKENIZER_ARGS)
    found: list[str] = []
    for fts, table, key, column in _FTS:
        orphans = _rows(
            con, f"SELECT rowid FROM {fts} WHERE rowid NOT IN (SELECT {key} FROM {table}) LIMIT 50"
        )
        found += [f"{fts} row {r[0]} has no row in {table}" for r in orphans]
        for rowid, text in _rows(con, f"SELECT {key}, {column} FROM {table}" + _sampled(full)):
            phrase = _phrase(tokenize, text)
            if phrase is None:
                continue
            hit = _rows(con, f"SELECT rowid FROM {fts} WHERE {fts} MATCH ? AND rowid = ?", (phrase, rowid))
            if not hit:
                found.append(f"{fts} row {rowid} does not hold the text of {table} {rowid}")
    return _listed(found, "keyword-index rows that disagree (run `memapp reindex --keyword-only`)")


def memory_hashes(con: apsw.Connection, full: bool) -> list[str]:
    rows = _rows(con, "SELECT id, content, content_hash FROM long_term_memories" + _sampled(full))
    found = [
        f"memory {mid}: content_hash does not match its text"
        for mid, text, h in rows
        if content_hash(text) != h
    ]
    return _listed(found, "memories with a wrong content hash")


def chunk_spans(con: apsw.Connection, full: bool) -> list[str]:
    rows = _rows(
        con,
        "SELECT c.id, c.message_id, c.start_char, c.end_char, length(m.content) FROM message_chunks c "
        "JOIN messages m ON m.id = c.message_id "
        "WHERE c.start_char < 0 OR c.end_char > length(m.content) OR c.start_char >= c.end_char LIMIT 50",
    )
    found = [f"chunk {cid} of message {mid} spans {a}..{b} of {n} characters" for cid, mid, a, b, n in rows]
    return _listed(found, "chunks outside their message")


CHECKS: dict[str, Callable[[apsw.Connection, bool], list[str]]] = {
    "thread totals": thread_totals,
    "thread sequences": thread_sequences,
    "keyword index": keyword_index,
    "memory hashes": memory_hashes,
    "chunk spans": chunk_spans,
}


def content_problems(con: apsw.Connection, *, full: bool = False) -> list[str]:
    """Every disagreement found, as one line each (empty when the content is consistent). A check that
    cannot run (a damaged page under it) says so instead of stopping the others."""
    problems: list[str] = []
    for name, check in CHECKS.items():
        try:
            problems += check(con, full)
        except apsw.Error as exc:
            problems.append(f"{name}: could not be checked ({exc})")
    return problems
