"""Reading other tools' chat exports into ThreadIn / MemoryIn records (no database access here).

    from store.importing.formats import read_export
    for item in read_export("chatgpt-export.zip"):      # fmt="auto" detects the format
        ...  # ThreadIn, MemoryIn, or ImportProblem (a skipped file or conversation)

Why items and not exceptions: one malformed conversation in a 10-year archive must not stop the other
9,999, and the person needs to see which file and conversation were skipped. Only a file we cannot
recognise at all raises (UnknownFormatError, naming the formats we read); everything else wrong with
the input is an ImportProblem in the stream, so the caller decides the exit code.

Formats: chatgpt (zip, folder, conversations*.json), claude (zip, folder, conversations.json,
memories.json), llm (simonw/llm logs.db), openwebui (chat export JSON), generic (JSON/JSONL, see
store/importing/formats/generic.py), claude-code and codex (coding-agent session logs, .jsonl, or a folder
of them such as ~/.claude/projects; store/importing/sessions.py imports them incrementally), text (a list
of memories, one per line or bulleted: suggestions, not memories).
"""

from __future__ import annotations

import json
import os
import re
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from store.importing.formats import (
    chatgpt,
    claude,
    claude_code,
    codex,
    generic,
    llm_logs,
    openwebui,
    text_list,
)
from store.importing.formats._common import (
    FORMATS,
    FORMATS_HINT,
    SESSION_FORMATS,
    Bundle,
    ImportFormatError,
    ImportProblem,
    Item,
    JsonError,
    JsonStream,
    UnknownFormatError,
    describe,
)
from store.importing.formats.repair import Repairs

__all__ = [
    "FORMATS",
    "SESSION_FORMATS",
    "ImportFormatError",
    "ImportProblem",
    "Item",
    "UnknownFormatError",
    "detect_format",
    "read_export",
    "session_files",
    "sniff_session",
]

_READERS: dict[str, Callable[[Path], Iterator[Item]]] = {
    "chatgpt": chatgpt.read,
    "claude": claude.read,
    "llm": llm_logs.read,
    "openwebui": openwebui.read,
    "generic": generic.read,
    "claude-code": claude_code.read,
    "codex": codex.read,
    "text": text_list.read,
}
_CLAUDE_MARKERS = {"memories.json", "users.json", "projects.json"}
_CHATGPT_MARKERS = {
    "chat.html",
    "message_feedback.json",
    "export_manifest.json",
    "user.json",
    "shared_conversations.json",
    "model_comparisons.json",
}
_HEAD = 64 * 1024


def read_export(path: str | os.PathLike[str], fmt: str = "auto") -> Iterator[Item]:
    """The threads, memories and problems in one export file, folder or archive, as they are read.

    Raises ImportFormatError (UnknownFormatError when fmt="auto" recognises nothing) before the first
    item; after that every problem is yielded as an ImportProblem, never raised.
    """
    p = Path(path)
    if fmt != "auto" and fmt not in FORMATS:
        raise ImportFormatError(f"unknown format {fmt!r}: choose auto, {', '.join(FORMATS)}")
    if not p.exists():
        raise ImportFormatError(f"{p}: no such file or directory")
    kind = detect_format(p) if fmt == "auto" else fmt
    return _guarded(_READERS[kind](p), p)


def _guarded(items: Iterator[Item], path: Path) -> Iterator[Item]:
    """Every record repaired (store.importing.formats.repair), and the last line of defence: an
    unexpected error ends this file with a problem, not a traceback."""
    repairs = Repairs()
    try:
        for item in items:
            yield repairs.item(item)
    except Exception as exc:
        yield ImportProblem(str(path), None, f"import of this file stopped: {describe(exc)}")
    yield from repairs.notes(str(path))


def detect_format(path: str | os.PathLike[str]) -> str:
    """One of FORMATS for a file, folder or archive, from its content (names only break ties)."""
    p = Path(path)
    if not p.exists():
        raise ImportFormatError(f"{p}: no such file or directory")
    if p.is_dir():
        try:
            return _detect_bundle(p)
        except UnknownFormatError:
            kind = _detect_session_folder(p)
            if kind is None:
                raise
            return kind
    try:
        with p.open("rb") as fp:
            head = fp.read(_HEAD)
    except OSError as exc:
        raise ImportFormatError(f"{p}: cannot be read ({describe(exc)})") from None
    if head.startswith(b"SQLite format 3\x00"):
        if llm_logs.is_llm_db(p):
            return "llm"
        raise UnknownFormatError(f"{p} is an SQLite database but not an llm logs.db. {FORMATS_HINT}.")
    if head.startswith(b"PK") and zipfile.is_zipfile(p):
        return _detect_bundle(p)
    if p.suffix.lower() in generic.JSONL_SUFFIXES:
        return sniff_session(p) or "generic"
    return _detect_json(p, head)


def sniff_session(path: Path) -> str | None:
    """ "claude-code" or "codex" when the file's first JSON lines are a coding-agent session, else None.

    A first line longer than the bytes looked at, or still being written (a session that just started),
    is recognised by the keys it begins with: the session reader then waits for the rest of it."""
    try:
        with path.open("rb") as fp:
            head = fp.read(_HEAD)
    except OSError:
        return None
    *complete, partial = head.split(b"\n")
    for raw in complete[:8]:
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except (ValueError, RecursionError):  # RecursionError: a line nested deeper than Python recurses
            return None  # not JSON Lines
        if claude_code.looks_like(obj):
            return "claude-code"
        if codex.looks_like(obj):
            return "codex"
    if any(raw.strip() for raw in complete):
        return None
    return _sniff_partial(partial.decode("utf-8", errors="replace"))


_CLAUDE_START = re.compile(
    r'"type"\s*:\s*"(user|assistant|summary|system|file-history-snapshot|queue-operation|progress)"'
)
_CLAUDE_KEYS = re.compile(r'"(sessionId|parentUuid|leafUuid|messageId)"\s*:')
_CODEX_START = re.compile(
    r'"type"\s*:\s*"(session_meta|response_item|turn_context|event_msg)"\s*,\s*"payload"'
)


def _sniff_partial(text: str) -> str | None:
    """The agent a first line that is not complete (yet) belongs to, from the keys it begins with."""
    text = text.lstrip("\ufeff \t\r")
    if not text.startswith("{"):
        return None
    if _CODEX_START.search(text):
        return "codex"
    if _CLAUDE_START.search(text) and _CLAUDE_KEYS.search(text):
        return "claude-code"
    return None


def session_files(folder: Path) -> list[Path]:
    """The .jsonl files under a folder (Claude Code: <project>/<session>.jsonl; Codex: YYYY/MM/DD/...)."""
    return sorted(p for p in folder.rglob("*.jsonl") if p.is_file() and not p.is_symlink())


def _detect_session_folder(p: Path) -> str | None:
    for n, f in enumerate(session_files(p)):
        kind = sniff_session(f)
        if kind is not None or n >= 50:
            return kind
    return None


def _detect_bundle(p: Path) -> str:
    with Bundle(p) as bundle:
        bases = {n.rsplit("/", 1)[-1] for n in bundle.names}
        conversations = bundle.matching(chatgpt.CONVERSATION_FILE)
        if conversations:
            try:
                with bundle.open(conversations[0]) as fp:
                    kind = _classify_stream(JsonStream(fp))
            except (JsonError, OSError, zipfile.BadZipFile):
                kind = None
            if kind in ("chatgpt", "claude"):
                return kind
        if bases & _CLAUDE_MARKERS:
            return "claude"
        if conversations or bases & _CHATGPT_MARKERS:
            return "chatgpt"
    what = "archive" if zipfile.is_zipfile(p) else "folder"
    raise UnknownFormatError(
        f"{p}: this {what} has no conversations.json, conversations-NNN.json or memories.json. {FORMATS_HINT}."
    )


def _detect_json(p: Path, head: bytes) -> str:
    if b"\x00" in head[:4096]:
        raise UnknownFormatError(f"{p} holds binary data, not a chat export. {FORMATS_HINT}.")
    try:
        with p.open("rb") as fp:
            kind = _classify_stream(JsonStream(fp))
        error = ""
    except JsonError as exc:
        kind, error = _classify_text(head.decode("utf-8", errors="replace")), str(exc)
    if kind is None and error and not head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith((b"{", b"[")):
        if _CONTEXT_TEXT.match(head.decode("utf-8", errors="replace").lstrip("\ufeff")):
            kind = "memapp-context"
        else:
            return "text"  # a pasted list of memories (Markdown bullets, numbered lines, one per line)
    if kind is None and not error:
        name = p.name.lower()
        kind = "claude" if name == "memories.json" else None
    if kind == "memapp-export":
        raise UnknownFormatError(
            f"{p} is a memapp export (a backup of chat.db), not another tool's chat export; "
            "`memapp import` restores it into an empty database."
        )
    if kind == "memapp-context":
        raise UnknownFormatError(
            f"{p} is a context memapp built for a chat model (`memapp context`, or saved from the TUI's "
            "context preview), not a chat export: its messages and memories come from chat.db already, so "
            "it is not imported again. Import the export the conversation came from instead."
        )
    if kind is None:
        reason = f"not valid JSON ({error})" if error else "JSON of a shape we do not know"
        raise UnknownFormatError(f"{p}: {reason}. {FORMATS_HINT}.")
    return kind


_EMPTY = object()
# A context saved as text: the TUI's preview (`## role` then a blank line, per message) or the printout of
# `memapp context THREAD` ("thread 3: 812 of 2000 tokens (...").
_CONTEXT_TEXT = re.compile(r"(## (system|user|assistant|tool)\r?\n\r?\n|thread \d+: \d+ of \d+ tokens \()")


def _classify_stream(stream: JsonStream) -> str | None:
    """Look at the first conversation only (a ChatGPT file can be 200 MB on one line)."""
    first = stream.peek()
    if first == "[":
        item = next(iter(stream.iter_array()), _EMPTY)
        return "generic" if item is _EMPTY else _classify(item)
    if first != "{":
        raise JsonError("the file does not start with a JSON object or list")
    root = stream.value()
    if stream.peek() is not None:  # several values: JSON Lines without the .jsonl name
        return "generic" if _classify(root) == "generic" else None
    return _classify(root)


def _classify(obj: Any) -> str | None:
    if not isinstance(obj, dict):
        return None
    if obj.get("format") == "memapp-export":
        return "memapp-export"
    if "messages" in obj and isinstance(obj.get("token_stats"), dict) and "budget" in obj["token_stats"]:
        return "memapp-context"  # `memapp context --json`, or the TUI's context preview saved as .json
    if "mapping" in obj:
        return "chatgpt"
    if "chat_messages" in obj or "conversations_memory" in obj or "project_memories" in obj:
        return "claude"
    if isinstance(obj.get("chat"), dict) or isinstance(obj.get("history"), dict):
        return "openwebui"
    if "threads" in obj or "memories" in obj or "messages" in obj:
        return "generic"
    convs = obj.get("conversations")
    if isinstance(convs, list) and convs:
        first = convs[0]
        if isinstance(first, dict) and "from" in first and "value" in first:
            return "generic"  # ShareGPT
        return _classify(first)
    return None


def _classify_text(head: str) -> str | None:
    """For a file that is not valid JSON (truncated, bad bytes): guess from the keys near its start, so
    the matching reader can report what is wrong with it."""
    for needle, kind in (
        ('"mapping"', "chatgpt"),
        ('"chat_messages"', "claude"),
        ('"currentId"', "openwebui"),
        ('"history"', "openwebui"),
        ('"threads"', "generic"),
        ('"messages"', "generic"),
    ):
        if needle in head:
            return kind
    return None
