"""Claude Code session transcripts: `~/.claude/projects/<project>/<session>.jsonl`, one thread per session.

Each line is one event: `user` and `assistant` lines carry an API message (`message.content` is a string
or a list of blocks: text, thinking, tool_use, tool_result, image), `summary` lines a title Claude Code
wrote for the session, and other types (`system`, `file-history-snapshot`, ...) bookkeeping. Lines link
by `uuid`/`parentUuid`; an assistant answer is split over several lines (one per content block).

What is kept: the person's prompts and the assistant's text, each line its own message keyed by its
`uuid`. Tool calls (tool_use) and their results (tool_result, sent back as `user` lines) are condensed
into run messages (store.importing.formats.agent_session says how and why). A slash command is kept as
what the person typed, `/name arguments` (a bare housekeeping command such as `/clear` is dropped).
Skipped: thinking blocks (the model's scratch work, often longer than the answer), `isMeta` lines (the
prompt a command expands into, reminders), local-command output (`<local-command-stdout>`), compaction
summaries (they restate what the thread already holds), and sidechains: `isSidechain` lines are a
sub-agent's own conversation (the Task tool); the main thread keeps the Task call and the sub-agent's
answer comes back as its result, so sub-agent files (`<session>/subagents/agent-*.jsonl`) add no thread.

Project path (`cwd`), git branch and Claude Code version go into the thread's metadata. The title is the
session's `summary` line, else the first prompt.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from store.importing.formats._common import (
    Item,
    clean_text,
    parse_ts,
    title_or_fallback,
)
from store.importing.formats.agent_session import (
    TranscriptBuilder,
    objects,
    problem_if_it_fails,
)
from store.importing.formats.lines import read_lines, session_id_from_name, short
from store.records import ThreadIn

SOURCE = "claude-code"
_LINE_TYPES = ("user", "assistant", "system", "queue-operation", "progress")
# What Claude Code writes into the user's stream that the user did not type: a local command's output
# and the caveat before it.
_PLUMBING = ("<local-command-", "Caveat: The messages below")
# A slash command: `<command-name>/x</command-name>`, `<command-message>x is running…</command-message>` and
# `<command-args>the user's words</command-args>`, in either order (1.0.x wrote the message first).
_COMMAND = ("<command-name>", "<command-message>", "<command-args>")
_COMMAND_NAME = re.compile(r"<command-name>\s*(.*?)\s*</command-name>", re.DOTALL)
_COMMAND_MESSAGE = re.compile(r"<command-message>\s*(.*?)(?: is running…)?\s*</command-message>", re.DOTALL)
_COMMAND_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.DOTALL)
# Claude Code's own housekeeping commands: typed without arguments they change a setting or show a
# screen, and say nothing about the work (with arguments, e.g. `/compact keep the API notes`, they do).
_HOUSEKEEPING_NAMES = (
    "add-dir agents bashes bug clear compact config context cost doctor exit export feedback help hooks ide "
    "install-github-app login logout mcp memory migrate-installer model output-style permissions plugin "
    "privacy-settings quit release-notes resume rewind sandbox stats status statusline terminal-setup "
    "theme todos upgrade usage vim"
)
_HOUSEKEEPING = frozenset(_HOUSEKEEPING_NAMES.split())
# The field of a tool's input that says best what it did (else the whole input, shortened).
_KEY_INPUT = ("command", "file_path", "path", "pattern", "url", "query", "description", "prompt")


def looks_like(obj: Any) -> bool:
    """Whether one JSON line is a Claude Code transcript line."""
    if not isinstance(obj, dict):
        return False
    if obj.get("type") == "summary" and "leafUuid" in obj:
        return True
    if obj.get("type") == "file-history-snapshot" and "messageId" in obj:
        return True
    return obj.get("type") in _LINE_TYPES and ("sessionId" in obj or "parentUuid" in obj)


def read(path: Path) -> Iterator[Item]:
    """The session in one transcript file, read whole (read_session reads from an offset)."""
    items, _ = read_session(path)
    yield from items


def read_session(path: Path, start: int = 0) -> tuple[list[Item], int]:
    """The thread (new lines only when `start` > 0) and problems, and the offset to start from next time.

    A read from an offset gives the thread an empty title unless it meets a summary line: the stored
    title stays.
    """
    lines = read_lines(path, start)
    session = session_id_from_name(path)
    out: list[Item] = []
    b = TranscriptBuilder()
    meta: dict[str, Any] = {}
    summary: str | None = None
    for offset, obj in objects(lines, path, session, out, "a Claude Code session transcript"):
        with problem_if_it_fails(out, path, session, offset):
            kind = obj.get("type")
            if kind == "summary":
                if summary is None and isinstance(obj.get("summary"), str) and obj["summary"].strip():
                    summary = obj["summary"]
                continue
            if kind not in ("user", "assistant") or obj.get("isSidechain") is True:
                continue
            if not meta:
                meta = _thread_meta(obj)
            _line(b, obj, f"line@{offset}")
    b.session_model(meta)
    messages = b.messages
    if messages:
        title = summary if summary is not None else ("" if start else None)
        out.insert(
            0,
            ThreadIn(
                source=SOURCE,
                external_id=session,
                title=title_or_fallback(title, messages) if title != "" else "",
                messages=messages,
                created_at=messages[0].created_at,
                updated_at=messages[-1].created_at,
                metadata=meta,
            ),
        )
    return out, lines.end


def _thread_meta(obj: dict[str, Any]) -> dict[str, Any]:
    meta: dict[str, Any] = {"agent": "claude-code"}
    for key, out in (("cwd", "project"), ("gitBranch", "git_branch"), ("version", "agent_version")):
        if isinstance(obj.get(key), str) and obj[key]:
            meta[out] = obj[key]
    return meta


def _line(b: TranscriptBuilder, obj: dict[str, Any], fallback_id: str) -> None:
    msg = obj.get("message")
    if not isinstance(msg, dict) or obj.get("isMeta") is True or obj.get("isCompactSummary") is True:
        return
    ext = str(obj["uuid"]) if isinstance(obj.get("uuid"), str) and obj["uuid"] else fallback_id
    when = parse_ts(obj.get("timestamp"))
    role = "assistant" if obj["type"] == "assistant" else "user"
    content = msg.get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    if not isinstance(blocks, list):
        return
    texts: list[str] = []
    calls: list[tuple[str, dict[str, Any]]] = []
    images = 0
    for block in blocks:
        if not isinstance(block, dict):
            continue
        btype = block.get("type")
        if btype == "text" and isinstance(block.get("text"), str):
            text = block["text"]
            if role == "user" and text.lstrip().startswith(_COMMAND):
                text = _slash_command(text)
            elif role == "user" and text.lstrip().startswith(_PLUMBING):
                continue
            texts.append(text)
        elif btype == "tool_use":
            call: dict[str, Any] = {
                "name": str(block.get("name") or "tool"),
                "input": _input(block.get("input")),
            }
            calls.append((str(block.get("id") or ""), call))
        elif btype == "tool_result":
            b.result(block.get("tool_use_id"), block.get("is_error") is True)
        elif btype in ("image", "document"):
            images += 1
    text = clean_text("\n\n".join(t for t in texts if t.strip()))
    if text or images:
        meta: dict[str, Any] = {}
        if role == "assistant" and isinstance(msg.get("model"), str) and not msg["model"].startswith("<"):
            meta["model"] = msg["model"]  # dropped below when it is the session's model
        if images:
            meta["attachments"] = [f"{images} image{'s' if images > 1 else ''}"]
            text = text or "[image]"
        b.say(role, text, ext, when, meta, calls)
    elif calls:
        b.call(ext, when, calls)


def _slash_command(text: str) -> str:
    """What the person typed for a slash command: `/name the arguments` ("" for housekeeping such as a
    bare `/clear`). The command's prompt that Claude Code expands it into is an `isMeta` line (skipped):
    the person's own words are these arguments, and a session started with a command used to be stored
    with no user message at all ("Untitled")."""
    found = _COMMAND_NAME.search(text) or _COMMAND_MESSAGE.search(text)
    args = _COMMAND_ARGS.search(text)
    name = found.group(1).strip() if found else ""
    words = args.group(1).strip() if args else ""
    if not name or (not words and name.lstrip("/") in _HOUSEKEEPING):
        return ""
    return " ".join(x for x in ("/" + name.lstrip("/"), words) if x)


def _input(value: Any) -> str:
    if isinstance(value, dict):
        for key in _KEY_INPUT:
            if isinstance(value.get(key), str) and value[key].strip():
                return short(value[key])
    return short(value)
