"""Redaction applied to the store's records and rows: an imported thread (title, messages, metadata), a
JSON column's strings, a whole table row as an export writes it.

Why JSON columns are parsed rather than redacted as text: a marker dropped into JSON text is valid only
while the secret's span stays inside one string, and a key's body or a token escaped as \\n in a
tool call's JSON could end next to a quote. Parsed, every string leaf is redacted on its own and the
column is written back as JSON, so it always loads.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from store.records import MessageIn, ThreadIn, json_dumps
from store.secrets.detector import find_secrets, redact

# Columns that hold JSON, by table (the rest of a row's strings are text).
JSON_COLUMNS: dict[str, frozenset[str]] = {
    "threads": frozenset({"metadata"}),
    "messages": frozenset({"metadata"}),
    "memory_history": frozenset({"old", "new"}),
    "compression_history": frozenset({"details"}),
    "memory_conflicts": frozenset({"reasons"}),
}
# Columns that are names, ids, hashes or paths: never text a person wrote.
NOT_TEXT = frozenset(
    {
        "source",
        "external_id",
        "content_hash",
        "role",
        "category",
        "origin",
        "event",
        "status",
        "path",
        "format",
        "head",
        "relation",
        "resolution",
        "strategy",
        "pattern",
        "source_note",
        "key",
    }
)


def redact_tree(value: Any) -> tuple[Any, int]:
    """`value` (parsed JSON) with every string redacted; and how many secrets were replaced."""
    if isinstance(value, str):
        out, found = redact(value)
        return out, len(found)
    if isinstance(value, list):
        items = [redact_tree(v) for v in value]
        return [v for v, _ in items], sum(n for _, n in items)
    if isinstance(value, dict):
        pairs = {k: redact_tree(v) for k, v in value.items()}
        return {k: v for k, (v, _) in pairs.items()}, sum(n for _, n in pairs.values())
    return value, 0


def redact_json_text(text: str) -> tuple[str, int]:
    """A JSON column's text with its strings redacted (text that is not JSON is redacted as text)."""
    if not find_secrets(text):  # the common case: one scan of the text, nothing parsed
        return text, 0
    try:
        data = json.loads(text)
    except ValueError:
        out, found = redact(text)
        return out, len(found)
    out_data, n = redact_tree(data)
    return json_dumps(out_data), n


def redact_row(table: str, row: dict[str, Any]) -> dict[str, Any]:
    """A copy of `row` (column -> value) with every text column's secrets replaced."""
    json_cols = JSON_COLUMNS.get(table, frozenset())
    out = dict(row)
    for col, value in row.items():
        if not isinstance(value, str) or col in NOT_TEXT:
            continue
        out[col] = redact_json_text(value)[0] if col in json_cols else redact(value)[0]
    return out


def redact_metadata(metadata: dict[str, Any]) -> dict[str, Any]:
    if not metadata or not find_secrets(json_dumps(metadata)):
        return metadata
    return redact_tree(metadata)[0]  # type: ignore[no-any-return]


def redact_thread(thread: ThreadIn) -> ThreadIn:
    """`thread` with its title, message texts and metadata redacted; the same object when nothing was
    found (the common case costs one scan per text and no copy)."""
    messages: list[MessageIn] | None = None
    for i, m in enumerate(thread.messages):
        content, found = redact(m.content)
        metadata = redact_metadata(m.metadata)
        if found or metadata is not m.metadata:
            if messages is None:
                messages = list(thread.messages)
            messages[i] = replace(m, content=content, metadata=metadata)
    title = redact(thread.title)[0]
    metadata = redact_metadata(thread.metadata)
    if messages is None and title == thread.title and metadata is thread.metadata:
        return thread
    return replace(
        thread,
        title=title,
        metadata=metadata,
        messages=messages if messages is not None else thread.messages,
    )
