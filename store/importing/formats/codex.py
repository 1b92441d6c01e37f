"""Codex CLI sessions: `~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl`, one thread per session.

Each line is `{"timestamp", "type", "payload"}`: `session_meta` (id, cwd, git, cli version) first, then
`turn_context` (the model of the turn), `response_item`s (what went to and came from the model: a
`message` with input_text/output_text parts, `function_call` / `custom_tool_call` / `local_shell_call`
and their `*_output`, `reasoning`) and `event_msg`s (what the UI showed: they repeat the messages, so
they are skipped). Older rollouts have no envelope: the first line is the session meta itself and the
items follow bare; both shapes are read.

Kept: the person's prompts and the assistant's answers, keyed by the line's byte offset (Codex lines have
no id, and the file is only ever appended to). Tool calls and results are condensed into run messages
(store.importing.formats.agent_session). Skipped: reasoning (encrypted or a summary of scratch work),
developer/system messages, and the context Codex injects as user messages (`<environment_context>`,
`<user_instructions>`, AGENTS.md). The thread id is the uuid in the file name.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from store.importing.formats._common import (
    Item,
    clean_text,
    dict_or_empty,
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

SOURCE = "codex"
_INJECTED = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<permissions")
_CALLS = {"function_call", "custom_tool_call", "local_shell_call", "web_search_call"}
_OUTPUTS = {"function_call_output", "custom_tool_call_output"}
_ITEMS = {"message", "reasoning", *_CALLS, *_OUTPUTS}


def looks_like(obj: Any) -> bool:
    """Whether one JSON line is a Codex rollout line (either shape)."""
    if not isinstance(obj, dict):
        return False
    if obj.get("type") in ("session_meta", "response_item", "turn_context", "event_msg") and "payload" in obj:
        return True
    return "instructions" in obj and "id" in obj and "timestamp" in obj and "type" not in obj


def read(path: Path) -> Iterator[Item]:
    items, _ = read_session(path)
    yield from items


def read_session(path: Path, start: int = 0) -> tuple[list[Item], int]:
    """The thread (new lines only when `start` > 0) and problems, and the offset to read from next time."""
    lines = read_lines(path, start)
    session = session_id_from_name(path)
    out: list[Item] = []
    b = TranscriptBuilder()
    meta: dict[str, Any] = {}
    model: str | None = None
    started: float | None = None
    for offset, obj in objects(lines, path, session, out, "a Codex CLI session"):
        with problem_if_it_fails(out, path, session, offset):
            kind, payload = _unwrap(obj)
            when = parse_ts(obj.get("timestamp"))
            if kind == "session_meta":
                meta = _thread_meta(payload)
                started = parse_ts(payload.get("timestamp")) or when
            elif kind == "turn_context":
                model = payload.get("model") if isinstance(payload.get("model"), str) else model
            elif kind == "response_item":
                _item(b, payload, f"{offset}", when, model)
    b.session_model(meta)
    messages = b.messages
    if messages:
        out.insert(
            0,
            ThreadIn(
                source=SOURCE,
                external_id=session,
                title="" if start else title_or_fallback(None, messages),
                messages=messages,
                created_at=messages[0].created_at or started,
                updated_at=messages[-1].created_at,
                metadata={"agent": "codex", **meta},
            ),
        )
    return out, lines.end


def _unwrap(obj: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(kind, payload) for the envelope shape and the older bare one."""
    payload = obj.get("payload")
    if isinstance(payload, dict):
        return str(obj.get("type")), payload
    if obj.get("type") in _ITEMS:
        return "response_item", obj
    if "instructions" in obj and "id" in obj:
        return "session_meta", obj
    return "other", {}


def _thread_meta(payload: dict[str, Any]) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    if isinstance(payload.get("cwd"), str) and payload["cwd"]:
        meta["project"] = payload["cwd"]
    git = payload.get("git")
    if isinstance(git, dict) and isinstance(git.get("branch"), str) and git["branch"]:
        meta["git_branch"] = git["branch"]
    if isinstance(payload.get("cli_version"), str):
        meta["agent_version"] = payload["cli_version"]
    return meta


def _item(b: TranscriptBuilder, p: dict[str, Any], ext: str, when: float | None, model: str | None) -> None:
    ptype = p.get("type")
    if ptype == "message":
        role = p.get("role")
        if role not in ("user", "assistant"):
            return
        parts = p.get("content")
        texts: list[str] = []
        images = 0
        for part in parts if isinstance(parts, list) else []:
            if not isinstance(part, dict):
                continue
            if isinstance(part.get("text"), str):
                if role == "user" and part["text"].lstrip().startswith(_INJECTED):
                    continue
                texts.append(part["text"])
            elif part.get("type") in ("input_image", "image"):
                images += 1
        text = clean_text("\n\n".join(t for t in texts if t.strip()))
        if not text and not images:
            return
        meta: dict[str, Any] = {}
        if role == "assistant" and model:
            meta["model"] = model
        if images:
            meta["attachments"] = [f"{images} image{'s' if images > 1 else ''}"]
        b.say(role, text or "[image]", ext, when, meta)
    elif ptype in _CALLS:
        b.call(ext, when, [(str(p.get("call_id") or p.get("id") or ""), _call(p))])
    elif ptype in _OUTPUTS:
        b.result(p.get("call_id"), _failed(p.get("output")))


def _call(p: dict[str, Any]) -> dict[str, Any]:
    ptype = p.get("type")
    if ptype == "local_shell_call":
        command = dict_or_empty(p.get("action")).get("command")
        return {
            "name": "shell",
            "input": short(" ".join(str(c) for c in command) if isinstance(command, list) else command),
        }
    if ptype == "web_search_call":
        return {"name": "web_search", "input": short(dict_or_empty(p.get("action")).get("query"))}
    name = str(p.get("name") or "tool")
    raw = p.get("arguments") if ptype == "function_call" else p.get("input")
    args: Any = raw
    if isinstance(raw, str):
        try:
            args = json.loads(raw)
        except (ValueError, RecursionError):  # not JSON, or nested past Python's recursion limit
            args = raw
    if isinstance(args, dict):
        command = args.get("command") or args.get("cmd")
        if isinstance(command, list):
            return {"name": name, "input": short(" ".join(str(c) for c in command))}
        for key in ("command", "cmd", "path", "file_path", "query"):
            if isinstance(args.get(key), str):
                return {"name": name, "input": short(args[key])}
    return {"name": name, "input": short(args)}


def _failed(output: Any) -> bool:
    """A function output is JSON text {"output", "metadata": {"exit_code"}} (or plain text)."""
    if isinstance(output, str):
        try:
            output = json.loads(output)
        except (ValueError, RecursionError):
            return False
    if isinstance(output, dict):
        meta = output.get("metadata")
        code = meta.get("exit_code") if isinstance(meta, dict) else output.get("exit_code")
        return isinstance(code, int) and code != 0
    return False
