"""simonw/llm `logs.db`, opened read-only: both generations of its tables.

Before 0.32 every prompt/response pair was a row of `responses`, grouped by `conversation_id` (NULL in
very old rows: such a response is a conversation of its own). Since 0.32 llm writes content-addressed
`threads/turns/messages/parts`: a thread points at its tip message, each message at its parent, and a
message's text lives in `parts` (ordered by `position`), sometimes stored by reference to `fragments`
(`payload.text_ref`). The legacy tables stay as read-only history, so a database can hold both.

The two generations share id spaces: a thread's id is the conversation id and turn ids are response ids.
A conversation present in both becomes one thread; a legacy response whose id is a turn id, or whose
prompt and answer already appear on the thread's chain (continuing an old conversation replays it),
is not imported twice.

External ids are stable across re-reads: a thread is its conversation/thread id, a legacy message is
"<response id>/prompt" or "<response id>/response", a new message is its content hash.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import apsw

from store.importing.formats._common import (
    ImportProblem,
    Item,
    clean_text,
    describe,
    parse_ts,
    title_or_fallback,
)
from store.records import MessageIn, ThreadIn

SOURCE = "llm"
LEGACY_TABLES = {"responses"}
NEW_TABLES = {"threads", "turns", "messages", "parts"}
_ROLES = {"system": "system", "user": "user", "assistant": "assistant", "tool": "tool"}


def tables(path: Path) -> set[str]:
    """Table names in an SQLite file (empty when it is not readable as one)."""
    try:
        con = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    except apsw.Error:
        return set()
    try:
        return {
            str(r[0]) for r in con.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")
        }
    except apsw.Error:
        return set()
    finally:
        con.close()


def is_llm_db(path: Path) -> bool:
    names = tables(path)
    return "responses" in names or names >= NEW_TABLES


@dataclass
class _Conversation:
    """A legacy conversation's messages, held back when the new tables have the same thread."""

    name: str | None = None
    model: str | None = None
    messages: list[MessageIn] = field(default_factory=list)
    response_ids: list[str] = field(default_factory=list)


def _t(column: str) -> str:
    """`column` read as text that is always valid: SQLite stores whatever bytes a program gave it, and one
    cell that is not UTF-8 (apsw refuses to decode it) used to stop the whole file; it is decoded with
    U+FFFD instead (memapp_utf8, registered by `read`), and other types pass unchanged."""
    return f"CASE WHEN typeof({column}) = 'text' THEN memapp_utf8(CAST({column} AS BLOB)) ELSE {column} END"


class _Utf8:
    """The SQL function behind `_t`, counting the cells it had to repair (for one note per file)."""

    def __init__(self) -> None:
        self.repaired = 0

    def __call__(self, *args: Any) -> Any:
        raw = args[0]
        if not isinstance(raw, bytes):
            return raw
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            self.repaired += 1
            return raw.decode("utf-8", errors="replace")


def read(path: Path) -> Iterator[Item]:
    """Every conversation in an llm logs.db as a ThreadIn (problems as ImportProblem)."""
    label = str(path)
    utf8 = _Utf8()
    try:
        con = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
        con.create_scalar_function("memapp_utf8", utf8, 1, deterministic=True)
        names = {
            str(r[0]) for r in con.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")
        }
    except apsw.Error as exc:
        yield ImportProblem(label, None, f"not a readable SQLite database ({describe(exc)})")
        return
    try:
        if "responses" not in names and not names >= NEW_TABLES:
            yield ImportProblem(
                label, None, "this SQLite file has no llm tables (responses, or threads/turns/messages/parts)"
            )
            return
        new_ids: set[str] = set()
        turn_ids: set[str] = set()
        if names >= NEW_TABLES:
            new_ids = {str(r[0]) for r in con.execute(f"SELECT {_t('id')} FROM threads")}
            turn_ids = {str(r[0]) for r in con.execute(f"SELECT {_t('id')} FROM turns")}
        held: dict[str, _Conversation] = {}
        if "responses" in names:
            yield from _legacy(con, names, label, new_ids, turn_ids, held)
        if names >= NEW_TABLES:
            yield from _threads(con, label, held)
    except apsw.Error as exc:
        yield ImportProblem(label, None, f"could not read the database ({describe(exc)})")
    finally:
        con.close()
    if utf8.repaired:
        n = utf8.repaired
        yield ImportProblem(
            label, None, f"{n} text value{'s' if n > 1 else ''} not valid UTF-8, shown with U+FFFD", note=True
        )


# --- legacy conversations/responses ---------------------------------------------------------------


def _columns(con: apsw.Connection, table: str) -> set[str]:
    return {str(r[1]) for r in con.execute(f"PRAGMA table_info({table})")}


def _legacy(
    con: apsw.Connection,
    names: set[str],
    label: str,
    new_ids: set[str],
    turn_ids: set[str],
    held: dict[str, _Conversation],
) -> Iterator[Item]:
    cols = _columns(con, "responses")
    wanted = [
        "id",
        "model",
        "prompt",
        "system",
        "response",
        "conversation_id",
        "datetime_utc",
        "resolved_model",
        "reasoning",
    ]
    for essential in ("prompt", "response"):
        if essential not in cols:  # a renamed column once lost 4 of 11 prompts without a word
            yield ImportProblem(
                label, None, f"the responses table has no {essential!r} column; those texts could not be read"
            )
    select = ", ".join(f"{_t('r.' + c)} AS {c}" if c in cols else f"NULL AS {c}" for c in wanted)
    has_conv = "conversations" in names
    join = "LEFT JOIN conversations c ON c.id = r.conversation_id" if has_conv else ""
    conv_cols = f"{_t('c.name')}, {_t('c.model')}" if has_conv else "NULL, NULL"
    sql = (
        f"SELECT {select}, {conv_cols} FROM responses r {join} "
        "ORDER BY coalesce(r.conversation_id, r.id), r.datetime_utc, r.id"
    )
    current: str | None = None
    conv = _Conversation()
    for row in con.execute(sql):
        rec = dict(zip([*wanted, "conv_name", "conv_model"], row, strict=True))
        rid = str(rec["id"])
        key = str(rec["conversation_id"]) if rec["conversation_id"] is not None else rid
        if key != current:
            if current is not None:
                yield from _flush_legacy(current, conv, label, new_ids, held)
            current, conv = key, _Conversation(rec["conv_name"], rec["conv_model"])
        if rid in turn_ids:
            continue  # also logged in the new tables
        try:
            conv.messages.extend(_legacy_messages(rec))
            conv.response_ids.append(rid)
        except Exception as exc:  # a malformed row is reported, the rest of the conversation imports
            yield ImportProblem(label, key, f"response {rid}: {describe(exc)}")
    if current is not None:
        yield from _flush_legacy(current, conv, label, new_ids, held)


def _legacy_messages(rec: dict[str, Any]) -> list[MessageIn]:
    rid = str(rec["id"])
    when = parse_ts(rec["datetime_utc"])
    out = []
    prompt = clean_text(rec["prompt"]) if isinstance(rec["prompt"], str) else ""
    if prompt:
        meta: dict[str, Any] = {}
        if isinstance(rec["system"], str) and rec["system"].strip():
            meta["system"] = clean_text(rec["system"])
        out.append(MessageIn("user", prompt, f"{rid}/prompt", when, meta))
    answer = clean_text(rec["response"]) if isinstance(rec["response"], str) else ""
    reasoning = clean_text(rec["reasoning"]) if isinstance(rec["reasoning"], str) else ""
    if answer or reasoning:
        meta = (
            {"model": rec["resolved_model"] or rec["model"]}
            if (rec["resolved_model"] or rec["model"])
            else {}
        )
        if reasoning:
            meta["reasoning"] = [reasoning]
        out.append(MessageIn("assistant", answer, f"{rid}/response", when, meta))
    return out


def _flush_legacy(
    key: str, conv: _Conversation, label: str, new_ids: set[str], held: dict[str, _Conversation]
) -> Iterator[Item]:
    if not conv.messages:
        return
    if key in new_ids:
        held[key] = conv  # merged into the new-table thread of the same id
        return
    yield _legacy_thread(key, conv)


def _legacy_thread(key: str, conv: _Conversation) -> ThreadIn:
    times = [m.created_at for m in conv.messages if m.created_at is not None]
    meta = {"model": conv.model} if conv.model else {}
    return ThreadIn(
        SOURCE,
        key,
        title_or_fallback(conv.name, conv.messages),
        conv.messages,
        min(times) if times else None,
        max(times) if times else None,
        meta,
    )


# --- 0.32 threads/turns/messages/parts ------------------------------------------------------------


def _threads(con: apsw.Connection, label: str, held: dict[str, _Conversation]) -> Iterator[Item]:
    graph = {
        str(h): (str(role), parent)
        for h, parent, role in con.execute(
            f"SELECT {_t('hash')}, {_t('parent_hash')}, {_t('role')} FROM messages"
        )
    }
    dated = _date_messages(con, graph)
    rows = list(
        con.execute(
            f"SELECT {_t('id')}, {_t('name')}, {_t('tip_message_hash')}, {_t('forked_from')}, "
            f"{_t('datetime_utc')} FROM threads ORDER BY datetime_utc, id"
        )
    )
    for thread_id, name, tip, forked_from, when in rows:
        if thread_id is None:  # would all share the key "None" (merged, and never a no-op on re-import)
            yield ImportProblem(label, None, f"a thread named {name!r} has no id; it was skipped")
            continue
        key = str(thread_id)
        try:
            messages = _chain(con, tip, graph, dated, parse_ts(when))
        except Exception as exc:  # one broken chain must not stop the other threads
            yield ImportProblem(label, key, describe(exc))
            continue
        legacy = held.pop(key, None)
        if legacy is not None:
            messages = _without_replayed(legacy.messages, messages) + messages
            name = name or legacy.name
        if not messages:
            continue
        times = [m.created_at for m in messages if m.created_at is not None]
        meta = {"forked_from": str(forked_from)} if forked_from else {}
        yield ThreadIn(
            SOURCE,
            key,
            title_or_fallback(name, messages),
            messages,
            min(times) if times else parse_ts(when),
            max(times) if times else parse_ts(when),
            meta,
        )
    for key, conv in held.items():  # thread row vanished between queries: still import the history
        yield _legacy_thread(key, conv)


def _date_messages(
    con: apsw.Connection, graph: dict[str, tuple[str, Any]]
) -> dict[str, tuple[float | None, str | None]]:
    """Messages have no timestamp: each gets the time and model of the earliest turn whose chain holds it.

    Turns are visited oldest first and a walk stops at the first message already dated, so shared
    history (forks, replayed conversations) keeps the time it was first written, in linear time.
    """
    dated: dict[str, tuple[float | None, str | None]] = {}
    for tip, model, when in con.execute(
        f"SELECT {_t('tip_message_hash')}, {_t('coalesce(resolved_model, model)')}, {_t('datetime_utc')} FROM turns "
        "ORDER BY datetime_utc, id"
    ):
        stamp = (parse_ts(when), model if isinstance(model, str) else None)
        cur = tip
        while isinstance(cur, str) and cur in graph and cur not in dated:
            dated[cur] = stamp
            cur = graph[cur][1]
    return dated


def _chain(
    con: apsw.Connection,
    tip: Any,
    graph: dict[str, tuple[str, Any]],
    dated: dict[str, tuple[float | None, str | None]],
    thread_time: float | None,
) -> list[MessageIn]:
    """Messages from the root to `tip` (cycle-safe), dated by the turns that produced them."""
    hashes: list[str] = []
    seen: set[str] = set()
    cur = tip
    while isinstance(cur, str) and cur in graph and cur not in seen:
        seen.add(cur)
        hashes.append(cur)
        cur = graph[cur][1]
    hashes.reverse()
    out = []
    for h in hashes:
        msg = _parts(con, h, graph[h][0])
        if msg is None:
            continue
        when, model = dated.get(h, (None, None))
        msg.created_at = when if when is not None else thread_time
        if msg.role == "assistant" and model:
            msg.metadata["model"] = model
        out.append(msg)
    return out


def _parts(con: apsw.Connection, message_hash: str, role: str) -> MessageIn | None:
    texts: list[str] = []
    meta: dict[str, Any] = {}
    kinds: list[str] = []
    for kind, tool_name, text, payload in con.execute(
        f"SELECT {_t('type')}, {_t('tool_name')}, {_t('text')}, {_t('payload')} FROM parts "
        "WHERE message_hash = ? ORDER BY position, id",
        (message_hash,),
    ):
        data = _json(payload)
        kinds.append(str(kind))
        body = text if isinstance(text, str) else _text_ref(con, data, meta)
        if kind == "text":
            if body:
                texts.append(body)
        elif kind == "reasoning":
            if body:
                meta.setdefault("reasoning", []).append(clean_text(body))
        elif kind in ("tool_call", "tool_result"):
            entry = {"name": tool_name, **{k: v for k, v in data.items() if k != "text_ref"}}
            if body:
                entry["text"] = body
            meta.setdefault("tool_calls" if kind == "tool_call" else "tool_results", []).append(entry)
        elif kind == "attachment":
            meta.setdefault("attachments", []).append(
                data.get("id") or data.get("path") or data.get("url") or "attachment"
            )
    content = clean_text("\n".join(texts))
    if not content and not meta:
        return None
    if role == "user" and not content and kinds and all(k == "tool_result" for k in kinds):
        role = "tool"
    if role not in _ROLES:
        raise ValueError(f"message {message_hash} has unknown role {role!r}")
    return MessageIn(_ROLES[role], content, message_hash, None, meta)


def _json(payload: Any) -> dict[str, Any]:
    if not isinstance(payload, str) or not payload:
        return {}
    try:
        value = json.loads(payload)
    except (ValueError, RecursionError):
        return {"raw": payload}
    return value if isinstance(value, dict) else {"value": value}


def _text_ref(con: apsw.Connection, data: dict[str, Any], meta: dict[str, Any]) -> str:
    """Rebuild text stored by reference: fragment contents and literals, in order."""
    refs = data.get("text_ref")
    if not isinstance(refs, list):
        return data["text"] if isinstance(data.get("text"), str) else ""
    out = []
    for piece in refs:
        if not isinstance(piece, dict):
            continue
        if isinstance(piece.get("literal"), str):
            out.append(piece["literal"])
        elif "fragment" in piece:
            row = con.execute(
                f"SELECT {_t('content')} FROM fragments WHERE id = ?", (piece["fragment"],)
            ).fetchone()
            if row is not None and isinstance(row[0], str):
                out.append(row[0])
            else:
                meta.setdefault("missing_fragments", []).append(piece["fragment"])
    return "".join(out)


def _without_replayed(legacy: list[MessageIn], chain: list[MessageIn]) -> list[MessageIn]:
    """Legacy messages whose prompt/answer pair is not already on the new chain."""
    pairs = {
        (a.content, b.content)
        for a, b in zip(chain, chain[1:], strict=False)
        if a.role == "user" and b.role == "assistant"
    }
    out: list[MessageIn] = []
    i = 0
    while i < len(legacy):
        m = legacy[i]
        nxt = legacy[i + 1] if i + 1 < len(legacy) else None
        if (
            m.role == "user"
            and nxt is not None
            and nxt.role == "assistant"
            and nxt.external_id == (m.external_id or "").replace("/prompt", "/response")
            and (m.content, nxt.content) in pairs
        ):
            i += 2
            continue
        out.append(m)
        i += 1
    return out
