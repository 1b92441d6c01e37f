"""Open WebUI chat exports (Settings > Chats > Export): a JSON list of chats.

Rows are `{id, title, chat: {history: {messages, currentId}, messages, timestamp}, created_at, ...}`; Open
WebUI's own importer also takes bare chat objects, so we do too. `history.messages` is a tree (every
regeneration is a child); the active branch is `currentId` followed back through `parentId`. When that is
missing we do what Open WebUI does: the last entry of the legacy linear `chat.messages` copy.

Reasoning and tool calls are inlined in assistant content as `<details type="reasoning">` /
`<details type="tool_calls">` HTML; they are cut out of the searchable text into metadata. Inline base64
images are shortened (they are megabytes of noise for search and token counts).

Units differ: the chat's `timestamp` is milliseconds, a message's `timestamp` and the row's
`created_at`/`updated_at` are seconds; `parse_ts` tells them apart by magnitude.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from store.importing.formats._common import (
    BadRecord,
    ImportProblem,
    Item,
    JsonError,
    JsonStream,
    Skipped,
    as_dict,
    as_list,
    bad_utf8_problems,
    clean_text,
    describe,
    ident,
    json_items,
    parse_ts,
    skipped_problem,
    stream_error,
    title_or_fallback,
)
from store.records import MessageIn, ThreadIn

SOURCE = "openwebui"
_ROLES = {"user": "user", "assistant": "assistant", "system": "system", "tool": "tool"}
_DETAILS_TYPES = {
    "reasoning": "reasoning",
    "tool_calls": "tool_calls",
    "code_interpreter": "code_interpreter",
}
_DETAILS_OPEN = re.compile(r"<details\b([^>]*)>", re.IGNORECASE)
_DETAILS_ANY = re.compile(r"<details\b[^>]*>|</details\s*>", re.IGNORECASE)
# An attribute starts only where a name starts: without the look-behind, a long run of word characters
# (a mutated export had 400 KB of them inside a <details> tag) was re-scanned from every position (minutes).
_ATTR = re.compile(r'(?<![\w-])([\w-]++)\s*=\s*"([^"]*)"')
_SUMMARY_OPEN = re.compile(r"<summary\b[^>]*>", re.IGNORECASE)
_SUMMARY_CLOSE = re.compile(r"</summary\s*>", re.IGNORECASE)
_QUOTE_PREFIX = re.compile(r"^> ?", re.MULTILINE)
_DATA_URI = re.compile(r"data:([\w.+/-]+);base64,[A-Za-z0-9+/=]{64,}")


def read(path: Path) -> Iterator[Item]:
    """Every chat (ThreadIn) and problem in an Open WebUI export file."""
    label = str(path)
    stream: JsonStream | None = None
    try:
        with path.open("rb") as fp:
            stream = JsonStream(fp)
            for row in json_items(stream, ("chats",)):
                if isinstance(row, Skipped):
                    yield skipped_problem(row, label, "chat")
                    continue
                chat_id = (ident(row.get("id")) or _chat_id(row)) if isinstance(row, dict) else None
                try:
                    thread = parse_chat(row)
                except Exception as exc:  # one malformed chat must not stop the rest
                    yield ImportProblem(label, chat_id, describe(exc))
                    continue
                if thread is not None:
                    yield thread
    except (JsonError, OSError) as exc:
        yield ImportProblem(label, None, stream_error(exc, stream))
        return
    yield from bad_utf8_problems(stream, label)


def _chat_id(row: dict[str, Any]) -> str | None:
    chat = row.get("chat")
    return ident(chat.get("id")) if isinstance(chat, dict) else None


def parse_chat(row: Any) -> ThreadIn | None:
    """One exported row (or bare chat) -> its active branch as a thread; None when it has no messages."""
    row = as_dict(row, "chat")
    chat = as_dict(row["chat"], "chat") if "chat" in row else row
    chat_id = ident(row.get("id")) or ident(chat.get("id"))
    if chat_id is None:
        raise BadRecord("chat has no id")
    history = as_dict(chat.get("history") or {}, "history")
    tree = as_dict(history.get("messages") or {}, "history.messages")
    linear = [m for m in as_list(chat.get("messages"), "messages") if isinstance(m, dict)]
    path = _active_branch(
        tree, linear, history.get("currentId") or row.get("current_message_id") or chat.get("currentId")
    )
    messages = [m for m in (_message(m, i) for i, m in enumerate(path)) if m is not None]
    if not messages:
        return None
    meta: dict[str, Any] = {}
    if isinstance(chat.get("models"), list) and chat["models"]:
        meta["models"] = [m for m in chat["models"] if isinstance(m, str)]
    tags = (row.get("meta") or {}).get("tags") if isinstance(row.get("meta"), dict) else None
    if isinstance(tags, list) and tags:
        meta["tags"] = [t for t in tags if isinstance(t, str)]
    for flag in ("pinned", "archived"):
        if row.get(flag) is True:
            meta[flag] = True
    return ThreadIn(
        source=SOURCE,
        external_id=chat_id,
        title=title_or_fallback(row.get("title") or chat.get("title"), messages),
        messages=messages,
        created_at=parse_ts(row.get("created_at"))
        or parse_ts(chat.get("timestamp"))
        or messages[0].created_at,
        updated_at=parse_ts(row.get("updated_at")) or messages[-1].created_at,
        metadata=meta,
    )


def _active_branch(tree: dict[str, Any], linear: list[dict[str, Any]], current: Any) -> list[dict[str, Any]]:
    """Root-to-tip messages of the branch shown last (cycle-safe)."""
    if not (isinstance(current, str) and current in tree):
        last = linear[-1].get("id") if linear else None
        current = last if isinstance(last, str) and last in tree else _newest_leaf(tree)
    if current is None:
        return linear
    chain: list[dict[str, Any]] = []
    seen: set[str] = set()
    cur: Any = current
    while isinstance(cur, str) and cur in tree and cur not in seen:
        seen.add(cur)
        node = as_dict(tree[cur], f"message {cur}")
        chain.append({"id": cur, **node})
        cur = node.get("parentId")
    chain.reverse()
    return chain


def _newest_leaf(tree: dict[str, Any]) -> str | None:
    leaves = [(k, v) for k, v in tree.items() if isinstance(v, dict) and not v.get("childrenIds")]
    if not leaves:
        return None
    return max(enumerate(leaves), key=lambda e: (parse_ts(e[1][1].get("timestamp")) or 0.0, e[0]))[1][0]


def _message(msg: dict[str, Any], index: int) -> MessageIn | None:
    raw_role = msg.get("role")
    role = _ROLES.get(raw_role) if isinstance(raw_role, str) else None
    if role is None:
        raise BadRecord(f"message {msg.get('id') or index} has unknown role {raw_role!r}")
    raw = msg.get("content")
    if isinstance(raw, list):  # OpenAI-style parts
        raw = "\n".join(p["text"] for p in raw if isinstance(p, dict) and isinstance(p.get("text"), str))
    if raw is not None and not isinstance(raw, str):
        raise BadRecord(f"message {msg.get('id') or index} content is {type(raw).__name__}")
    text, blocks = split_details(raw or "")
    text = clean_text(_DATA_URI.sub(r"data:\1;base64,(omitted)", text))
    meta: dict[str, Any] = dict(blocks)
    model = msg.get("model") or msg.get("modelName")
    if role == "assistant" and isinstance(model, str) and model:
        meta["model"] = model
    files = [
        f.get("name") or (f.get("file") or {}).get("filename")
        for f in as_list(msg.get("files"), "files")
        if isinstance(f, dict)
    ]
    if any(isinstance(f, str) for f in files):
        meta["files"] = [f for f in files if isinstance(f, str)]
    if not text and not meta:
        return None
    return MessageIn(
        role=role,
        content=text,
        external_id=ident(msg.get("id")) or f"idx:{index}",
        created_at=parse_ts(msg.get("timestamp")),
        metadata=meta,
    )


def _drop_summary(text: str) -> str:
    """The block's first `<summary>…</summary>` removed. Two linear searches: the lazy regex
    `<summary>.*?</summary>` restarted at every unclosed `<summary>` and scanned to the end each time
    (a 288 KB message took 34 s)."""
    opening = _SUMMARY_OPEN.search(text)
    if opening is None:
        return text
    closing = _SUMMARY_CLOSE.search(text, opening.end())
    if closing is None:
        return text
    return text[: opening.start()] + text[closing.end() :]


def split_details(text: str) -> tuple[str, dict[str, list[Any]]]:
    """Cut `<details type="reasoning|tool_calls|code_interpreter">` blocks (nesting-aware) out of text."""
    out: list[str] = []
    found: dict[str, list[Any]] = {}
    pos = 0
    while True:
        m = _DETAILS_OPEN.search(text, pos)
        if m is None:
            out.append(text[pos:])
            break
        attrs = {k: html.unescape(v) for k, v in _ATTR.findall(m.group(1))}
        kind = _DETAILS_TYPES.get(attrs.get("type", ""))
        if kind is None:
            out.append(text[pos : m.end()])
            pos = m.end()
            continue
        depth, cursor, inner_end, end = 1, m.end(), len(text), len(text)
        while depth:
            tag = _DETAILS_ANY.search(text, cursor)
            if tag is None:
                break  # unclosed block (a stream cut off): everything after it is reasoning
            depth += -1 if tag.group(0).startswith("</") else 1
            cursor = tag.end()
            if depth == 0:
                inner_end, end = tag.start(), tag.end()
        inner = html.unescape(_drop_summary(text[m.end() : inner_end])).strip()
        if kind == "reasoning":
            inner = _QUOTE_PREFIX.sub("", inner).strip()  # Open WebUI quotes reasoning lines with "> "
            if inner:
                found.setdefault("reasoning", []).append(clean_text(inner))
        else:
            entry: dict[str, Any] = {k: v for k, v in attrs.items() if k not in ("type", "done")}
            if inner:
                entry["text"] = clean_text(inner)
            found.setdefault(kind, []).append(entry)
        out.append(text[pos : m.start()])
        pos = end
    return "".join(out), found
