"""Claude.ai data exports: the zip, its folder, `conversations.json` and `memories.json`.

Newer exports keep a message's text in `content[]` blocks and leave `text` as "", so text comes from the
blocks of type `text` and falls back to `text` only when there are none. `thinking`, `tool_use` and
`tool_result` blocks go to message metadata: they are not what was said, and reasoning in the searchable
text would drown the answers.

Attachments carry the text Claude extracted from the file (never the binary). That text is appended to
the message content in a delimited section::

    --- attachment: notes.txt ---
    <extracted text>
    --- end of attachment: notes.txt ---

so a search for something that was only in a pasted file still finds the conversation; the attachment
and file names are also listed in metadata.

`chat_messages` is a flat list, but when messages carry `parent_message_uuid` it is a tree (edits and
retries). Then we follow `current_leaf_message_uuid` when present, else the most recently created leaf
(an inference: the official export does not say which branch was active).

`memories.json` is Claude's own long-term memory as Markdown; every bullet or line becomes one memory
with origin "claude-memory"; project memories default to the `project` category.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from store.importing.formats._common import (
    BadRecord,
    Bundle,
    ImportFormatError,
    ImportProblem,
    Item,
    JsonError,
    JsonStream,
    Skipped,
    as_dict,
    as_list,
    as_text,
    bad_utf8_problems,
    clean_text,
    describe,
    guess_category,
    ident,
    json_items,
    parse_ts,
    skipped_problem,
    stream_error,
    title_or_fallback,
)
from store.records import MemoryIn, MessageIn, ThreadIn

SOURCE = "claude"
ORIGIN = "claude-memory"
CONVERSATION_FILE = re.compile(r"conversations\.json")
MEMORIES_FILE = re.compile(r"memories\.json")
_SENDERS = {"human": "user", "user": "user", "assistant": "assistant", "system": "system"}
_MEMORY_KEYS = ("conversations_memory", "project_memories")
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+")
_HEADING = re.compile(r"^\s*(?:#{1,6}\s+.*|\*\*[^*]+\*\*:?|\*[^*]+\*:?|__[^_]+__:?|[^.!?]{1,60}:)\s*$")


def read(path: Path) -> Iterator[Item]:
    """Every conversation (ThreadIn), memory (MemoryIn) and problem in a Claude.ai export."""
    try:
        bundle = Bundle(path)
    except (ImportFormatError, OSError) as exc:
        yield ImportProblem(str(path), None, describe(exc))
        return
    with bundle:
        if bundle.kind == "file":
            names = bundle.names
        else:
            names = bundle.matching(CONVERSATION_FILE) + bundle.matching(MEMORIES_FILE)
        if not names:
            yield ImportProblem(
                str(path), None, "no conversations.json or memories.json in this Claude export"
            )
            return
        try:
            bundle.check_sizes(names)
        except ImportFormatError as exc:
            yield ImportProblem(str(path), None, str(exc))
            return
        for name in names:
            label = bundle.label(name)
            stream: JsonStream | None = None
            try:
                with bundle.open(name) as fp:
                    stream = JsonStream(fp)
                    for item in json_items(stream):
                        if isinstance(item, Skipped):
                            yield skipped_problem(item, label, "conversation")
                            continue
                        yield from _one(item, label)
            except (JsonError, OSError, zipfile.BadZipFile, EOFError) as exc:
                yield ImportProblem(label, None, stream_error(exc, stream))
                continue
            yield from bad_utf8_problems(stream, label)


def _one(item: Any, label: str) -> Iterator[Item]:
    if isinstance(item, dict) and any(k in item for k in _MEMORY_KEYS):
        try:
            yield from parse_memories(item)
        except Exception as exc:  # a bad memories entry must not stop the conversations
            yield ImportProblem(label, "memories", describe(exc))
        return
    conv_id = (ident(item.get("uuid")) or ident(item.get("id"))) if isinstance(item, dict) else None
    try:
        thread = parse_conversation(item)
    except Exception as exc:  # one malformed conversation must not stop the rest of the export
        yield ImportProblem(label, conv_id, describe(exc))
        return
    if thread is not None:
        yield thread


def parse_conversation(conv: Any) -> ThreadIn | None:
    """One conversation -> a thread, or None when it has no messages (Claude exports contain such)."""
    conv = as_dict(conv, "conversation")
    conv_id = ident(conv.get("uuid")) or ident(conv.get("id"))
    if conv_id is None:
        raise BadRecord("conversation has no uuid")
    raw = as_list(conv.get("chat_messages"), "chat_messages")
    ordered = _active_branch([as_dict(m, "message") for m in raw], conv.get("current_leaf_message_uuid"))
    messages = [m for m in (_message(m, i) for i, m in ordered) if m is not None]
    if not messages:
        return None
    meta: dict[str, Any] = {}
    summary = conv.get("summary")
    if isinstance(summary, str) and summary.strip():
        meta["summary"] = clean_text(summary)
    project = conv.get("project")
    if isinstance(project, dict) and isinstance(project.get("name"), str):
        meta["project"] = project["name"]
    return ThreadIn(
        source=SOURCE,
        external_id=conv_id,
        title=title_or_fallback(conv.get("name"), messages),
        messages=messages,
        created_at=parse_ts(conv.get("created_at")) or messages[0].created_at,
        updated_at=parse_ts(conv.get("updated_at")) or messages[-1].created_at,
        metadata=meta,
    )


def _active_branch(msgs: list[dict[str, Any]], leaf: Any) -> list[tuple[int, dict[str, Any]]]:
    """(list index, message) along the active branch; the list as it is when it carries no tree."""
    indexed = list(enumerate(msgs))
    by_id = {m["uuid"]: (i, m) for i, m in indexed if isinstance(m.get("uuid"), str)}
    if not msgs or not all(isinstance(m.get("parent_message_uuid"), str) for m in msgs):
        return indexed
    if not (isinstance(leaf, str) and leaf in by_id):
        parents = {m["parent_message_uuid"] for m in msgs}
        leaves = [(i, m) for i, m in indexed if m.get("uuid") not in parents]
        if not leaves:
            return indexed
        leaf = max(leaves, key=lambda im: (parse_ts(im[1].get("created_at")) or 0.0, im[0]))[1].get("uuid")
    chain: list[tuple[int, dict[str, Any]]] = []
    seen: set[str] = set()
    cur: Any = leaf
    while isinstance(cur, str) and cur in by_id and cur not in seen:
        seen.add(cur)
        chain.append(by_id[cur])
        cur = by_id[cur][1].get("parent_message_uuid")
    chain.reverse()
    return chain


def _message(msg: dict[str, Any], index: int) -> MessageIn | None:
    sender = msg.get("sender")
    role = _SENDERS.get(sender) if isinstance(sender, str) else None
    if role is None:
        raise BadRecord(f"message {msg.get('uuid') or index} has unknown sender {sender!r}")
    texts: list[str] = []
    meta: dict[str, Any] = {}
    only_tool_results = True
    for block in as_list(msg.get("content"), "content"):
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        only_tool_results = only_tool_results and kind == "tool_result"
        if kind == "text" and isinstance(block.get("text"), str) and block["text"].strip():
            texts.append(block["text"])
        elif kind == "thinking":
            thought = block.get("thinking")
            if isinstance(thought, str) and thought.strip():
                meta.setdefault("thinking", []).append(clean_text(thought))
        elif kind == "tool_use":
            meta.setdefault("tool_calls", []).append(
                {k: block[k] for k in ("id", "name", "input") if k in block}
            )
        elif kind == "tool_result":
            meta.setdefault("tool_results", []).append(
                {
                    "tool_use_id": block.get("tool_use_id"),
                    "name": block.get("name"),
                    "content": _block_text(block.get("content")),
                    "is_error": bool(block.get("is_error")),
                }
            )
    if not texts and as_text(msg.get("text")).strip():
        texts.append(as_text(msg.get("text")))
    text = clean_text("\n\n".join(texts))

    sections = _attachments(msg, meta)
    content = "\n\n".join([text, *sections]) if text else "\n\n".join(sections)
    if not content and not meta:
        return None
    if role == "user" and not text and only_tool_results and "tool_results" in meta:
        role = "tool"
    return MessageIn(
        role=role,
        content=content,
        external_id=ident(msg.get("uuid")) or f"idx:{index}",
        created_at=parse_ts(msg.get("created_at")),
        metadata=meta,
    )


def _attachments(msg: dict[str, Any], meta: dict[str, Any]) -> list[str]:
    """The text Claude extracted from each attachment, as delimited sections (names go to `meta`)."""
    sections: list[str] = []
    for att in as_list(msg.get("attachments"), "attachments"):
        if not isinstance(att, dict):
            continue
        name = att.get("file_name") if isinstance(att.get("file_name"), str) else "attachment"
        meta.setdefault("attachments", []).append(name)
        body = clean_text(as_text(att.get("extracted_content")))
        if body:
            sections.append(f"--- attachment: {name} ---\n{body}\n--- end of attachment: {name} ---")
    files = [
        f["file_name"]
        for f in as_list(msg.get("files"), "files")
        if isinstance(f, dict) and isinstance(f.get("file_name"), str)
    ]
    if files:
        meta["files"] = files
    return sections


def _block_text(value: Any) -> str:
    """Text of a tool_result's content (a string or a list of text blocks)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(b["text"] for b in value if isinstance(b, dict) and isinstance(b.get("text"), str))
    return ""


def parse_memories(entry: dict[str, Any]) -> list[MemoryIn]:
    """One memories.json entry -> one memory per bullet or line of its Markdown."""
    out = memory_lines(as_text(entry.get("conversations_memory")), default="fact")
    projects = entry.get("project_memories")
    if projects is not None:
        for _project, text in as_dict(projects, "project_memories").items():
            out.extend(memory_lines(as_text(text), default="project"))
    return out


def memory_lines(markdown: str, *, default: str) -> list[MemoryIn]:
    """Split Claude's memory Markdown into memories, skipping headings; a heading can set the category."""
    out: list[MemoryIn] = []
    heading_hint: str | None = None
    seen: set[str] = set()
    for raw in clean_text(markdown).splitlines():
        line = raw.strip()
        if not line:
            continue
        if _HEADING.match(line) and not _BULLET.match(line):
            low = line.lower()
            heading_hint = next(
                (
                    c
                    for c, words in (
                        ("preference", ("preference", "likes")),
                        ("project", ("project", "work")),
                        ("skill", ("skill", "expertise")),
                    )
                    if any(w in low for w in words)
                ),
                None,
            )
            continue
        text = _BULLET.sub("", line).strip()
        if not text or text.casefold() in seen:
            continue
        seen.add(text.casefold())
        if default == "project":
            category = guess_category(text, default="project", full=False)
        else:
            category = guess_category(text, default=heading_hint or default, full=heading_hint is None)
        out.append(MemoryIn(category=category, content=text, origin=ORIGIN))
    return out
