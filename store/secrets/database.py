"""`memapp secrets scan` and `memapp secrets redact`: the secrets an existing chat.db already holds.

A chat.db filled before redaction existed (or with `[privacy] redact = "off"`) holds secrets in every
text column: messages and their metadata, thread titles, memories and their history, summaries,
suggestions, topics, conflict reasons. `scan` counts them (by kind, thread and month; never a value);
`redact` rewrites each row with markers, with everything derived from it in the same transaction: the
keyword index row, the token counts, and the vectors (deleted there, since they were made from the
secret; embedded again at the end from the new text, or by `memapp embed`).

Kill-safe by construction: rows are rewritten a batch per transaction, so a kill leaves each row either
as it was or redacted with its indexes, never between; redaction is idempotent, so a re-run finds only
what is left and finishes the job (and re-embeds what a killed run left without vectors).
"""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from store.db import read_snapshot
from store.memory_rows import content_hash
from store.secrets.detector import Finding, find_secrets
from store.secrets.rows import redact_json_text
from store.text import fts_put

if TYPE_CHECKING:
    from store.store import Store

BATCH = 500  # rows per transaction: short write locks, and few commits


@dataclass(frozen=True)
class Source:
    """One text column: what to read of each row (key, text, thread, time), and whether it holds JSON."""

    table: str
    column: str
    fields: str  # key, text, thread_id, at: columns of the table (as `src`)
    where: str = "1"
    key: str = "id"
    is_json: bool = False


SOURCES = (
    Source(
        "messages",
        "content",
        "id, content, thread_id, coalesce(created_at, (SELECT created_at FROM threads t WHERE t.id = src.thread_id))",
    ),
    Source("messages", "metadata", "id, metadata, thread_id, created_at", "metadata != '{}'", is_json=True),
    Source("threads", "title", "id, title, id, created_at"),
    Source("threads", "source_title", "id, source_title, id, created_at", "source_title IS NOT NULL"),
    Source("threads", "metadata", "id, metadata, id, created_at", "metadata != '{}'", is_json=True),
    Source("long_term_memories", "content", "id, content, source_thread_id, created_at"),
    Source("memory_history", "old", "id, old, NULL, at", "old IS NOT NULL", is_json=True),
    Source("memory_history", "new", "id, new, NULL, at", "new IS NOT NULL", is_json=True),
    Source("thread_summaries", "content", "thread_id, content, thread_id, updated_at", key="thread_id"),
    Source("memory_suggestions", "content", "id, content, thread_id, created_at"),
    Source("memory_topics", "topic", "rowid, topic, thread_id, last_seen_at", key="rowid"),
    Source("compression_history", "details", "id, details, thread_id, created_at", is_json=True),
    Source("memory_conflicts", "reasons", "id, reasons, NULL, created_at", is_json=True),
)


def findings(text: str, is_json: bool) -> list[Finding]:
    """The secrets in a column's value (a JSON column: in each of its strings)."""
    found = find_secrets(text)
    if not found or not is_json:
        return found
    try:
        data = json.loads(text)
    except ValueError:
        return found
    out: list[Finding] = []
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out += find_secrets(item)
        elif isinstance(item, list):
            stack += item
        elif isinstance(item, dict):
            stack += list(item.values())
    return out


def _rows(store: Store, source: Source, after: Any, limit: int) -> list[tuple[Any, ...]]:
    sql = (
        f"SELECT {source.fields} FROM {source.table} AS src WHERE ({source.where}) AND src.{source.key} > ? "
        f"ORDER BY src.{source.key} LIMIT ?"
    )
    return list(store.con.execute(sql, (after, limit)))


def _walk(store: Store, source: Source) -> Iterator[list[tuple[Any, ...]]]:
    after: Any = -1
    while batch := _rows(store, source, after, BATCH):
        yield batch
        after = batch[-1][0]


def _month(ts: float | None) -> str:
    if ts is None:
        return "unknown"
    return dt.datetime.fromtimestamp(float(ts), tz=dt.UTC).strftime("%Y-%m")


@dataclass
class ScanReport:
    """What chat.db holds: counts only, never a value."""

    secrets: int = 0
    rows: int = 0
    by_kind: Counter[str] = field(default_factory=Counter)
    by_table: Counter[str] = field(default_factory=Counter)
    by_thread: Counter[int] = field(default_factory=Counter)
    by_month: Counter[str] = field(default_factory=Counter)
    thread_titles: dict[int, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "secrets": self.secrets,
            "rows": self.rows,
            "by_kind": dict(self.by_kind.most_common()),
            "by_table": dict(self.by_table.most_common()),
            "by_thread": [
                {"thread_id": t, "title": self.thread_titles.get(t, ""), "secrets": n}
                for t, n in self.by_thread.most_common()
            ],
            "by_month": dict(sorted(self.by_month.items())),
        }


def scan(store: Store, progress: Callable[[str], None] | None = None) -> ScanReport:
    """Count the secrets in every text column (one read snapshot: writers are not blocked)."""
    report = ScanReport()
    with read_snapshot(store.con):
        for source in SOURCES:
            if progress is not None:
                progress(f"{source.table}.{source.column}")
            for batch in _walk(store, source):
                for _, text, thread_id, at in batch:
                    if not isinstance(text, str):
                        continue
                    found = findings(text, source.is_json)
                    if not found:
                        continue
                    report.rows += 1
                    report.secrets += len(found)
                    report.by_kind.update(f.kind for f in found)
                    report.by_table[f"{source.table}.{source.column}"] += len(found)
                    report.by_month[_month(at)] += len(found)
                    if thread_id is not None:
                        report.by_thread[int(thread_id)] += len(found)
        ids = list(report.by_thread)
        if ids:
            rows = store.con.execute(
                "SELECT id, title FROM threads WHERE id IN (SELECT value FROM json_each(?))",
                (json.dumps(ids),),
            )
            # A title is shown as it will read once redacted: a scan never prints a value.
            report.thread_titles = {int(i): _redacted(str(t)) for i, t in rows}
    return report


def _redacted(text: str) -> str:
    from store.secrets import redact_text

    return redact_text(text)


# -- rewriting ------------------------------------------------------------------------------------------


@dataclass
class RedactReport:
    secrets: int = 0
    rows: int = 0
    by_kind: Counter[str] = field(default_factory=Counter)
    by_table: Counter[str] = field(default_factory=Counter)
    messages_to_embed: int = 0  # their vectors were made from a secret: dropped, to be embedded again
    memories_to_embed: int = 0
    embedded: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "secrets": self.secrets,
            "rows": self.rows,
            "by_kind": dict(self.by_kind.most_common()),
            "by_table": dict(self.by_table.most_common()),
            "messages_to_embed": self.messages_to_embed,
            "memories_to_embed": self.memories_to_embed,
            "embedded": self.embedded,
        }


def redact_database(
    store: Store, *, embed: bool = True, progress: Callable[[str], None] | None = None
) -> RedactReport:
    """Rewrite every secret in chat.db as a marker (whatever `[privacy] redact` says), a batch of rows per
    transaction with their keyword-index rows, counts and vectors; then embed what lost its vectors
    (`embed=False`: leave that to `memapp embed`)."""
    report = RedactReport()
    for source in SOURCES:
        if progress is not None:
            progress(f"{source.table}.{source.column}")
        if source.table in MEMORY_TABLES:
            continue  # below, a memory with its whole history at once
        for batch in _walk(store, source):
            keys = [row[0] for row in batch if isinstance(row[1], str) and findings(row[1], source.is_json)]
            if keys:
                with store.con:  # one transaction: these rows and all that derives from them, or none
                    for key in keys:
                        _rewrite(store, source, key, report)
    _redact_memories(store, report)
    if embed and store.vectors.tables_exist() and store.vector_problem is None:
        report.embedded = embed_redacted(store)
    return report


MEMORY_TABLES = ("long_term_memories", "memory_history")


def _redact_memories(store: Store, report: RedactReport) -> None:
    """Each memory and every history row of it in one transaction: memory_history replays to the row
    at every moment (tests/reliability/invariants.py), since both get the same markers together."""
    after = -1
    while True:
        ids = [
            int(r[0])
            for r in store.con.execute(
                "SELECT id FROM (SELECT id FROM long_term_memories UNION SELECT memory_id FROM memory_history) "
                "WHERE id > ? ORDER BY id LIMIT ?",
                (after, BATCH),
            )
        ]
        if not ids:
            return
        after = ids[-1]
        dirty = [i for i in ids if _memory_texts_with_secrets(store, i)]
        if dirty:
            with store.con:
                for memory_id in dirty:
                    for source, key in _memory_texts_with_secrets(store, memory_id):
                        _rewrite(store, source, key, report)


_MEMORY_CONTENT = next(s for s in SOURCES if (s.table, s.column) == ("long_term_memories", "content"))
_HISTORY = {s.column: s for s in SOURCES if s.table == "memory_history"}


def _memory_texts_with_secrets(store: Store, memory_id: int) -> list[tuple[Source, int]]:
    out: list[tuple[Source, int]] = []
    row = store.con.execute("SELECT content FROM long_term_memories WHERE id = ?", (memory_id,)).fetchone()
    if row is not None and find_secrets(str(row[0])):
        out.append((_MEMORY_CONTENT, memory_id))
    for hid, old, new in store.con.execute(
        "SELECT id, old, new FROM memory_history WHERE memory_id = ? ORDER BY id", (memory_id,)
    ):
        for column, value in (("old", old), ("new", new)):
            if isinstance(value, str) and findings(value, True):
                out.append((_HISTORY[column], int(hid)))
    return out


def embed_redacted(store: Store) -> dict[str, int]:
    """Embed the redacted rows that have no vectors: those this run rewrote, and those a killed run left
    (a marker and no vector). Rows that never had vectors for another reason are `memapp embed`'s."""
    messages = _embed_marked(
        store,
        "SELECT id FROM messages m WHERE content LIKE '%[secret: %' AND NOT EXISTS "
        "(SELECT 1 FROM message_chunks c WHERE c.message_id = m.id) ORDER BY id LIMIT 64",
        lambda ids: store.embed_messages([store.get_message(i) for i in ids]),
    )
    memories = _embed_marked(
        store,
        "SELECT id FROM long_term_memories WHERE content LIKE '%[secret: %' "
        "AND id NOT IN (SELECT memory_id FROM vec_memories) ORDER BY id LIMIT 64",
        lambda ids: store.embed_memories([store.get_memory(i) for i in ids]),
    )
    return {"messages": messages, "memories": memories}


def _embed_marked(store: Store, select: str, embed: Callable[[list[int]], int]) -> int:
    """Embed the rows `select` finds, 64 at a time, until none is left; how many were embedded. A row that
    comes back unembedded is not retried (no loop on a failing model)."""
    done = 0
    seen: set[int] = set()
    while True:
        ids = [int(r[0]) for r in store.con.execute(select)]
        if not ids or seen.issuperset(ids) or embed(ids) == 0:
            return done
        seen.update(ids)
        done += len(ids)


def _rewrite(store: Store, source: Source, key: Any, report: RedactReport) -> None:
    """Redact one row's column (read again under the write lock) and whatever is derived from it."""
    row = store.con.execute(
        f"SELECT {source.column} FROM {source.table} WHERE {source.key} = ?", (key,)
    ).fetchone()
    if row is None or not isinstance(row[0], str):
        return
    old = row[0]
    found = findings(old, source.is_json)
    if not found:
        return
    new = redact_json_text(old)[0] if source.is_json else _redacted(old)
    report.rows += 1
    report.secrets += len(found)
    report.by_kind.update(f.kind for f in found)
    report.by_table[f"{source.table}.{source.column}"] += len(found)
    special = _SPECIAL.get((source.table, source.column))
    if special is not None:
        special(store, key, new, report)
        return
    store.con.execute(f"UPDATE {source.table} SET {source.column} = ? WHERE {source.key} = ?", (new, key))


def _message(store: Store, key: int, new: str, report: RedactReport) -> None:
    store.con.execute(
        "UPDATE messages SET content = ?, token_count = ? WHERE id = ?", (new, store.tokens.count(new), key)
    )
    store.con.execute(
        "UPDATE threads SET token_count = (SELECT coalesce(sum(token_count), 0) FROM messages m "
        "WHERE m.thread_id = threads.id) WHERE id = (SELECT thread_id FROM messages WHERE id = ?)",
        (key,),
    )
    fts_put(store.con, "fts_messages", key, new)
    if store.vectors.tables_exist():
        store.vectors.delete_message_chunks([key])
        report.messages_to_embed += 1


def _memory(store: Store, key: int, new: str, report: RedactReport) -> None:
    store.con.execute(
        "UPDATE long_term_memories SET content = ?, content_hash = ?, token_count = ? WHERE id = ?",
        (new, content_hash(new), store.tokens.count(new), key),
    )
    fts_put(store.con, "fts_memories", key, new)
    if store.vectors.tables_exist():
        store.vectors.delete_memory(key)
        report.memories_to_embed += 1


def _summary(store: Store, key: int, new: str, report: RedactReport) -> None:
    store.con.execute(
        "UPDATE thread_summaries SET content = ?, token_count = ? WHERE thread_id = ?",
        (new, store.tokens.count(new), key),
    )
    fts_put(store.con, "fts_summaries", key, new)


def _suggestion(store: Store, key: int, new: str, report: RedactReport) -> None:
    """A pending suggestion that held a secret is withdrawn (never proposed: issue 31.7); a decided one
    keeps its decision with the text redacted (or goes, when that text is already another row's)."""
    status = store.scalar("SELECT status FROM memory_suggestions WHERE id = ?", (key,))
    digest = content_hash(new)
    taken = store.scalar(
        "SELECT id FROM memory_suggestions WHERE content_hash = ? AND id != ?", (digest, key)
    )
    if status == "pending" or taken is not None:
        store.con.execute("DELETE FROM memory_suggestions WHERE id = ?", (key,))
        return
    store.con.execute(
        "UPDATE memory_suggestions SET content = ?, content_hash = ? WHERE id = ?", (new, digest, key)
    )


def _topic(store: Store, key: int, new: str, report: RedactReport) -> None:
    """Topics are derived (re-extracted with the summary): one that is a secret just goes."""
    store.con.execute("DELETE FROM memory_topics WHERE rowid = ?", (key,))


_SPECIAL: dict[tuple[str, str], Callable[[Store, Any, str, RedactReport], None]] = {
    ("messages", "content"): _message,
    ("long_term_memories", "content"): _memory,
    ("thread_summaries", "content"): _summary,
    ("memory_suggestions", "content"): _suggestion,
    ("memory_topics", "topic"): _topic,
}
