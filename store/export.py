"""Lossless JSON export and restore, and Markdown for reading.

The JSON export is every canonical row of every canonical table, column by column (so it stays lossless
as migrations add columns), with the schema version it was written at. Derived indexes are not exported:
restore rebuilds the FTS rows and, unless the export carries embeddings of the same model, re-embeds.
Restoring keeps every id, so it goes into an empty chat.db (a non-empty one is refused, nothing written):
a backup that comes back with different ids would break scripts that stored them.

Secrets (docs/guide/privacy.md): every export, JSON or Markdown, is written with detected secrets replaced
by markers whatever `[privacy] redact` says; a restore passes the store's own gate.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import numpy as np

from embeddings import precision_switching
from store.db import read_snapshot
from store.errors import StoreError
from store.files import atomic_write, partial_dir, private_dir, replaceable, swap_in, write_private
from store.memory_rows import content_hash
from store.migrations import LATEST, current_version
from store.records import CATEGORIES, iso
from store.secrets import redact_text
from store.secrets.rows import redact_row
from store.store import Store
from store.text import fts_put
from store.vectors.floats import as_f32

FORMAT = "memapp-export"
# Parents before children, so foreign keys hold while restoring row by row.
FIRST = ("threads", "long_term_memories", "messages")
SKIP = {"settings", "schema_migrations", "message_chunks"}
FTS_SOURCES = {
    "messages": ("fts_messages", "id", "content"),
    "long_term_memories": ("fts_memories", "id", "content"),
    "thread_summaries": ("fts_summaries", "thread_id", "content"),
}


def canonical_tables(store: Store) -> list[str]:
    names = [
        str(r[0])
        for r in store.con.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
            "AND name NOT LIKE 'fts\\_%' ESCAPE '\\' AND name NOT LIKE 'vec\\_%' ESCAPE '\\' "
            # The sync state (store.sync) is this device's, never a backup's: a restored copy syncing as
            # the same device would clash with it.
            "AND name NOT LIKE 'sync\\_%' ESCAPE '\\' "
            "AND sql NOT LIKE 'CREATE VIRTUAL%'"
        )
    ]
    rest = sorted(n for n in names if n not in FIRST and n not in SKIP)
    return [n for n in FIRST if n in names] + rest


def _columns(store: Store, table: str) -> list[str]:
    return [str(r[1]) for r in store.con.execute(f"PRAGMA table_info({table})")]


def _rows(store: Store, table: str, where: str = "", args: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
    """The rows as an export writes them: every detected secret replaced, whatever `[privacy] redact` is
    (an export leaves the machine's protection behind; docs/guide/privacy.md)."""
    cols = _columns(store, table)
    sql = f"SELECT {', '.join(cols)} FROM {table} {where} ORDER BY rowid"
    return [_export_row(table, dict(zip(cols, row, strict=True))) for row in store.con.execute(sql, args)]


def _export_row(table: str, row: dict[str, Any]) -> dict[str, Any]:
    """A row with its secrets replaced (a memory's hash follows its text, so a restore finds them equal)."""
    out = redact_row(table, row)
    if "content_hash" in out and out.get("content") != row.get("content"):
        out["content_hash"] = content_hash(str(out["content"]))
    return out


def _scope(
    table: str, cols: list[str], thread: int | None, category: str | None
) -> tuple[str, tuple[Any, ...]]:
    """The WHERE clause that limits `table` to one thread and/or one category of memories."""
    if thread is not None:
        if table == "threads":
            return "WHERE id = ?", (thread,)
        if "thread_id" in cols:
            return "WHERE thread_id = ?", (thread,)
        if table in ("long_term_memories", "memory_history") and category is None:
            return "WHERE 0", ()
    if category is not None:
        if table == "long_term_memories":
            return "WHERE category = ?", (category,)
        if table == "memory_history":
            return "WHERE memory_id IN (SELECT id FROM long_term_memories WHERE category = ?)", (category,)
        if thread is None and table not in ("long_term_memories", "memory_history"):
            return "WHERE 0", ()
    return "", ()


def export_json(
    store: Store, *, thread: int | None = None, category: str | None = None, include_embeddings: bool = False
) -> dict[str, Any]:
    if thread is not None:
        store.get_thread(thread)
    if category is not None and category not in CATEGORIES:
        raise StoreError(f"unknown category {category!r}")
    tables: dict[str, list[dict[str, Any]]] = {}
    with read_snapshot(store.con):  # one consistent view across tables, writers not blocked
        for table in canonical_tables(store):
            where, args = _scope(table, _columns(store, table), thread, category)
            tables[table] = _rows(store, table, where, args)
        if thread is not None or category is not None:
            _detach_missing_parents(store, tables)
        data: dict[str, Any] = {
            "format": FORMAT,
            "schema_version": current_version(store.con),
            "tables": tables,
        }
        if include_embeddings:
            data["embeddings"] = _export_vectors(store, tables)
    return data


def write_export(
    store: Store,
    fh: IO[str],
    *,
    thread: int | None = None,
    category: str | None = None,
    include_embeddings: bool = False,
) -> dict[str, int]:
    """The JSON export written to `fh` row by row; returns the row count per table.

    A whole-database export is streamed from one read snapshot, one row at a time, so its memory stays
    flat however big chat.db is (building the whole dict first took 1.26 GB for a 251 MB export). A scoped
    export (one thread or category) is small, and needs every row at hand to detach links to rows it
    leaves out, so it is built with export_json and then written."""
    if thread is not None or category is not None:
        data = export_json(store, thread=thread, category=category, include_embeddings=include_embeddings)
        json.dump(data, fh, ensure_ascii=False, indent=1)
        fh.write("\n")
        return {t: len(rows) for t, rows in data["tables"].items()}
    counts: dict[str, int] = {}
    with read_snapshot(store.con):
        fh.write(f'{{"format": "{FORMAT}", "schema_version": {current_version(store.con)}, "tables": {{')
        for i, table in enumerate(canonical_tables(store)):
            cols = _columns(store, table)
            fh.write(("," if i else "") + f"\n {json.dumps(table)}: [")
            n = 0
            for row in store.con.execute(f"SELECT {', '.join(cols)} FROM {table} ORDER BY rowid"):
                fh.write(
                    ("," if n else "")
                    + "\n  "
                    + json.dumps(_export_row(table, dict(zip(cols, row, strict=True))), ensure_ascii=False)
                )
                n += 1
            fh.write("\n ]")
            counts[table] = n
        fh.write("\n}")
        if include_embeddings:
            fh.write(', "embeddings": ')
            _stream_vectors(store, fh)
        fh.write("}\n")
    return counts


def _stream_vectors(store: Store, fh: IO[str]) -> None:
    rec = store.vectors.recorded_model()
    if rec is None or not store.vectors.tables_exist():
        fh.write("null")
        return
    fh.write(f'{{"model": {json.dumps(rec[0])}, "dimension": {int(rec[1])}, "memories": {{')
    for i, (mid, blob) in enumerate(store.con.execute("SELECT memory_id, embedding FROM vec_memories")):
        fh.write(("," if i else "") + f'\n  "{int(mid)}": "{_b64_vector(blob)}"')
    fh.write('}, "chunks": [')
    rows = store.con.execute(
        "SELECT c.message_id, c.chunk_index, c.start_char, c.end_char, v.embedding FROM message_chunks c "
        "JOIN vec_chunks v ON v.chunk_id = c.id ORDER BY c.id"
    )
    for i, (mid, ci, a, b, blob) in enumerate(rows):
        item = {
            "message_id": mid,
            "chunk_index": ci,
            "start_char": a,
            "end_char": b,
            "vector": _b64_vector(blob),
        }
        fh.write(("," if i else "") + "\n  " + json.dumps(item))
    fh.write("]}")


def save_export(store: Store, dest: Path, **options: Any) -> dict[str, int]:
    """write_export into `dest`, whole or not at all, private (store/files.py says why)."""
    with atomic_write(dest) as fh:
        return write_export(store, fh, **options)


def _detach_missing_parents(store: Store, tables: dict[str, list[dict[str, Any]]]) -> None:
    """A scoped export may leave out rows that exported rows point at (a memory's source thread, a
    suggestion's memory). Such links are ON DELETE SET NULL in the schema; do the same here, so the
    export restores with its foreign keys intact."""
    for table, rows in tables.items():
        for fk in store.con.execute(f"PRAGMA foreign_key_list({table})").fetchall():
            parent, column, parent_col, on_delete = str(fk[2]), str(fk[3]), str(fk[4] or "id"), fk[6]
            if on_delete != "SET NULL" or parent not in tables:
                continue
            present = {r[parent_col] for r in tables[parent]}
            for row in rows:
                if row.get(column) is not None and row[column] not in present:
                    row[column] = None


def _b64_vector(blob: bytes) -> str:
    """A stored (float16) vector as the export writes every vector: base64 of float32 little-endian."""
    return base64.b64encode(as_f32(blob)).decode("ascii")


def _export_vectors(store: Store, tables: dict[str, list[dict[str, Any]]]) -> dict[str, Any] | None:
    rec = store.vectors.recorded_model()
    if rec is None or not store.vectors.tables_exist():
        return None
    memory_ids = {r["id"] for r in tables.get("long_term_memories", [])}
    message_ids = {r["id"] for r in tables.get("messages", [])}
    mems = {
        str(mid): _b64_vector(blob)
        for mid, blob in store.con.execute("SELECT memory_id, embedding FROM vec_memories")
        if mid in memory_ids
    }
    chunks = [
        {"message_id": mid, "chunk_index": ci, "start_char": a, "end_char": b, "vector": _b64_vector(blob)}
        for mid, ci, a, b, blob in store.con.execute(
            "SELECT c.message_id, c.chunk_index, c.start_char, c.end_char, v.embedding FROM message_chunks c "
            "JOIN vec_chunks v ON v.chunk_id = c.id ORDER BY c.id"
        )
        if mid in message_ids
    ]
    return {"model": rec[0], "dimension": rec[1], "memories": mems, "chunks": chunks}


def is_export(data: Any) -> bool:
    return isinstance(data, dict) and data.get("format") == FORMAT


def restore_json(store: Store, data: dict[str, Any]) -> dict[str, int]:
    """Restore an export into an empty chat.db, ids and all. Returns rows restored per table."""
    if not is_export(data) or not isinstance(data.get("tables"), dict):
        raise StoreError('not a memapp export (expected {"format": "memapp-export", "tables": …})')
    version = data.get("schema_version")
    if not isinstance(version, int) or version > LATEST:
        raise StoreError(f"this export has schema version {version}; this memapp knows up to {LATEST}")
    tables: dict[str, Any] = data["tables"]
    known = canonical_tables(store)
    for name, rows in tables.items():
        if name not in known or not isinstance(rows, list):
            raise StoreError(f"the export has an unknown table {name!r}; nothing was restored")
    non_empty = [t for t in known if store.scalar(f"SELECT count(*) FROM {t}")]
    if non_empty:
        raise StoreError(
            f"{store.path} is not empty ({', '.join(non_empty)}); restore a memapp export into a "
            "new database (--db NEW.db), then copy what you need"
        )
    counts: dict[str, int] = {}
    changed: dict[str, set[int]] = {"messages": set(), "long_term_memories": set()}
    with store.con:
        for table in known:
            rows = tables.get(table, [])
            cols = set(_columns(store, table))
            for i, row in enumerate(rows):
                if not isinstance(row, dict) or not set(row) <= cols:
                    extra = set(row) - cols if isinstance(row, dict) else {"?"}
                    raise StoreError(
                        f"{table}: a row has unknown columns {sorted(extra)}; nothing was restored"
                    )
                row = rows[i] = _gate(store, table, row, changed)
                names = list(row)
                store.con.execute(
                    f"INSERT INTO {table}({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
                    [row[n] for n in names],
                )
            counts[table] = len(rows)
            if table in FTS_SOURCES:
                fts, key, text = FTS_SOURCES[table]
                for row in rows:
                    fts_put(store.con, fts, row[key], row[text])
        _restore_vectors(store, data.get("embeddings"), changed)
    return counts


def _gate(store: Store, table: str, row: dict[str, Any], changed: dict[str, set[int]]) -> dict[str, Any]:
    """A restored row through the secret gate (Store.redact's rule, `[privacy] redact`): an export from an
    older memapp may hold secrets. A memory's or suggestion's hash follows its new text; the ids whose
    text changed are noted, so their exported vectors (made from the secret) are not restored."""
    if not store.redacting:
        return row
    out = redact_row(table, row)
    if out == row:
        return row
    if "content_hash" in out and out.get("content") != row.get("content"):
        out["content_hash"] = content_hash(str(out["content"]))
    if table in changed and isinstance(row.get("id"), int):
        changed[table].add(row["id"])
    return out


def _restore_vectors(store: Store, emb: Any, changed: dict[str, set[int]]) -> None:
    """Vectors come back only from the same model as the store's, and only for rows restored as they were
    exported; the rest `memapp embed` redoes."""
    if not isinstance(emb, dict) or store.embedder is None:
        return
    switching = precision_switching(store.embedder)
    if (
        emb.get("model") != store.embedder.name
        and store.vectors.recorded_model() is None
        and switching is not None
    ):
        switching.use_model_of(
            str(emb.get("model"))
        )  # the same model at its other precision (float32 / int8): take it
    if (emb.get("model"), emb.get("dimension")) != (store.embedder.name, store.embedder.dimension):
        return
    store.ensure_vector_tables()
    for mid, b64 in emb.get("memories", {}).items():
        if int(mid) in changed["long_term_memories"]:
            continue
        m = store.get_memory(int(mid))
        vec = np.frombuffer(base64.b64decode(b64), dtype=np.float32)
        store.vectors.put_memory(m.id, vec, m.category, m.deleted_at is not None)
    by_message: dict[int, list[dict[str, Any]]] = {}
    for c in emb.get("chunks", []):
        if int(c["message_id"]) not in changed["messages"]:
            by_message.setdefault(int(c["message_id"]), []).append(c)
    for mid, chunks in by_message.items():
        msg = store.get_message(mid)
        chunks.sort(key=lambda c: c["chunk_index"])
        vecs = np.stack([np.frombuffer(base64.b64decode(c["vector"]), dtype=np.float32) for c in chunks])
        store.vectors.put_chunks(
            mid,
            msg.thread_id,
            msg.role,
            msg.created_at,
            [(c["start_char"], c["end_char"]) for c in chunks],
            vecs,
        )


# -- Markdown --------------------------------------------------------------------------------------------

_SLUG = re.compile(r"[^\w]+", re.UNICODE)


def _slug(title: str) -> str:
    return _SLUG.sub("-", title.casefold()).strip("-")[:50] or "untitled"


def _fence(text: str) -> str:
    """Message text as Markdown, unchanged (it usually is Markdown already)."""
    return text.rstrip() + "\n"


def markdown_files(
    store: Store, *, thread: int | None = None, category: str | None = None
) -> Iterator[tuple[str, str]]:
    """(relative path, content) of a file per thread and one for memories, by category."""
    if category is None:
        threads = (
            [store.get_thread(thread)]
            if thread is not None
            else store.list_threads(sort="created", limit=10**9)
        )
        for t in sorted(threads, key=lambda t: t.id):
            lines = [
                f"# {t.title}",
                "",
                f"- source: {t.source}" + (f" ({t.external_id})" if t.external_id else ""),
                f"- created: {iso(t.created_at)}",
                f"- last active: {iso(t.updated_at)}",
                f"- messages: {t.message_count}, tokens: {t.token_count}",
                "",
            ]
            summary = store.get_summary(t.id)
            if summary is not None:
                lines += ["## Summary", "", summary.content.rstrip(), ""]
            lines += ["## Messages", ""]
            for msg in store.get_messages(t.id, limit=10**9):
                lines += [
                    f"### {msg.role}" + (f" · {iso(msg.created_at)}" if msg.created_at else ""),
                    "",
                    _fence(msg.content),
                ]
            yield f"threads/{t.id:05d}-{_slug(redact_text(t.title))}.md", redact_text("\n".join(lines))
    if thread is None:
        lines = ["# Memories", ""]
        for cat in [category] if category else list(CATEGORIES):
            mems = store.list_memories(category=cat, limit=10**9)
            lines += [f"## {cat.capitalize()}", ""]
            for m in mems:
                pin = "📌 " if m.pinned else ""
                flat = " ".join(m.content.split())
                gone = f", superseded by #{m.superseded_by}" if m.valid_until is not None else ""
                flat = f"~~{flat}~~" if gone else flat
                lines.append(
                    f"- {pin}{flat} _(importance {m.importance}, used {m.access_count}×, #{m.id}{gone})_"
                )
            lines += [] if mems else ["_none_"]
            lines.append("")
        yield "memories.md", redact_text("\n".join(lines))


MARKDOWN_NAMES = {"threads", "memories.md"}


def write_markdown(store: Store, out_dir: Path, *, parents: bool = True, **scope: Any) -> list[Path]:
    """One file per thread plus memories.md; files 0600 and folders 0700. The folder is written whole:
    built beside `out_dir` and swapped in (store.files), so a kill leaves the previous export or the new
    one, and a re-export holds no file of a thread deleted since (issue 31, 8). A folder holding anything
    an export does not write is refused, never replaced; `parents=False` refuses a missing parent."""
    out_dir = out_dir.expanduser().absolute()
    stray = replaceable(out_dir, MARKDOWN_NAMES, ".md")
    if stray is not None:
        raise StoreError(
            f"{out_dir} holds {stray}, which a Markdown export does not write; the export replaces the "
            "whole folder, so choose a new or empty folder"
        )
    if not out_dir.parent.is_dir():
        if not parents:
            raise StoreError(f"{out_dir.parent} does not exist; create it first")
        private_dir(out_dir.parent)
    names = []
    with partial_dir(out_dir) as tmp:
        for rel, text in markdown_files(store, **scope):
            path = tmp / rel
            private_dir(path.parent)
            write_private(path, text)
            names.append(rel)
        swap_in(tmp, out_dir)
    return [out_dir / rel for rel in names]
