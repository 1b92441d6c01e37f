"""The documented generic format (JSON or JSONL), which is also what `memapp export` writes.

A thread is `{"id", "title", "created_at", "updated_at"?, "source"?, "metadata"?, "messages": [{"id",
"role", "content", "created_at", "name"?, "metadata"?}]}`; a message's `name` is who said it (also read from
`author`, `speaker` or `sender`) and is kept in its metadata. A file is one of:

- JSONL (`.jsonl`/`.ndjson`): one thread per line; a bad line is reported by line number, the rest imports;
- a JSON list of threads;
- a JSON object `{"source"?, "threads": [...], "memories": [{"category", "content", "importance"?,
  "pinned"?, "origin"?, "created_at"?}]}` (the bundled demo data uses this form);
- a single thread object.

Message `id`s are kept as external ids because scripts rely on them; a message without one gets
"idx:<n>" (its position), a thread without one gets a hash of its messages, so re-importing the same
file is a no-op either way. Content is kept exactly as written (no clean-up): an export must round-trip.
Times are ISO-8601 strings or epoch numbers (seconds, or milliseconds by magnitude).

Also read, because they are one step away: OpenAI fine-tuning JSONL (`{"messages": [...]}` without ids,
content as a string or a list of parts) and ShareGPT (`{"conversations": [{"from", "value"}]}`).
"""

from __future__ import annotations

import hashlib
import json
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
    describe,
    ident,
    parse_ts,
    skipped_problem,
    stream_error,
    title_or_fallback,
)
from store.importing.formats.limits import too_big
from store.importing.formats.lines import json_lines
from store.records import CATEGORIES, MemoryIn, MessageIn, ThreadIn

JSONL_SUFFIXES = (".jsonl", ".ndjson")
_ROLES = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "gpt": "assistant",
    "ai": "assistant",
    "bot": "assistant",
    "model": "assistant",
    "tool": "tool",
    "function": "tool",
    "ipython": "tool",
}


def read(path: Path) -> Iterator[Item]:
    """Every thread, memory and problem in a generic JSON or JSONL file."""
    if path.suffix.lower() in JSONL_SUFFIXES or _looks_like_jsonl(path):
        yield from _read_jsonl(path, "jsonl")
    else:
        yield from _read_json(path)


def _looks_like_jsonl(path: Path) -> bool:
    """JSON Lines under another name: the first line is a whole object and another line follows."""
    try:
        with path.open("rb") as fp:
            first = fp.readline(64 * 1024**2).decode("utf-8-sig").strip()
            following = fp.read(4096).lstrip()
        if not (first.startswith("{") and following.startswith(b"{")):
            return False
        if too_big(first) is not None:  # not parsed just to look: a whole object by its ends
            return first.endswith("}")
        return isinstance(json.loads(first), dict)
    except (OSError, ValueError, RecursionError):
        return False


def _read_jsonl(path: Path, source: str) -> Iterator[Item]:
    label = str(path)
    repeats = _Repeats(label)
    bad_utf8: list[int] = []  # line numbers with invalid UTF-8 (shown as U+FFFD, the line kept)
    try:
        with path.open("rb") as fp:
            for lineno, line in enumerate(json_lines(fp), 1):
                if line.bad_utf8:
                    bad_utf8.append(lineno)
                if line.blank:
                    continue
                if line.error and not line.complete:
                    # A last line without its newline that is not whole JSON: the file is still being
                    # written (a log another tool appends to), as the session readers assume. Nothing is
                    # lost: the next import reads the whole file again.
                    yield ImportProblem(
                        label,
                        f"line {lineno}",
                        "the last line is not complete (the file may still be being written); it was "
                        "left out: import the file again once it is",
                        note=True,
                    )
                    continue
                if line.error:
                    reason = line.error.removeprefix("not JSON (").removesuffix(")")
                    text = f"invalid JSON: {reason}" if line.error.startswith("not JSON") else line.error
                    yield ImportProblem(label, f"line {lineno}", text)
                    continue
                yield from _thread_item(line.obj, label, f"line {lineno}", source, repeats)
    except OSError as exc:
        yield ImportProblem(label, None, describe(exc))
    if bad_utf8:
        shown = ", ".join(map(str, bad_utf8[:5])) + (" …" if len(bad_utf8) > 5 else "")
        yield ImportProblem(
            label,
            None,
            f"invalid UTF-8 in line {shown} shown as U+FFFD; those lines were imported",
            note=True,
        )


def _read_json(path: Path) -> Iterator[Item]:
    label = str(path)
    repeats = _Repeats(label)
    stream: JsonStream | None = None
    first: str | None = None
    try:
        with path.open("rb") as fp:
            stream = JsonStream(fp)
            first = stream.peek()
            if first == "[":
                for n, obj in enumerate(stream.iter_array(recover=True)):
                    yield from _list_item(obj, label, n, "generic", repeats)
                yield from bad_utf8_problems(stream, label)
                return
            root = stream.value()
            stream.expect_end()
    except (JsonError, OSError) as exc:
        if first == "{" and isinstance(exc, JsonError):
            # A bundle with a syntax error inside, cut short, or too big to hold: read it member by member,
            # passing over what cannot be read (the whole-file parse above is the common, faster case).
            yield from _stream_bundle(path, label, exc, repeats)
        else:
            yield ImportProblem(label, None, stream_error(exc, stream))
        return
    yield from bad_utf8_problems(stream, label)
    if not isinstance(root, dict):
        yield ImportProblem(label, None, f"expected a JSON object or list, found {type(root).__name__}")
        return
    if "threads" not in root and "memories" not in root:
        yield from _thread_item(root, label, "thread 0", "generic")
        return
    source = root["source"] if isinstance(root.get("source"), str) and root["source"].strip() else "generic"
    for key in ("threads", "memories"):
        value = root.get(key, [])
        if not isinstance(value, list):
            yield ImportProblem(label, None, f'"{key}" is {type(value).__name__}, expected a list')
            continue
        for n, obj in enumerate(value):
            yield from _list_item(obj, label, n, source, repeats, memory=key == "memories")


def _list_item(
    obj: Any, label: str, n: int, source: str, repeats: _Repeats, *, memory: bool = False
) -> Iterator[Item]:
    """One element of a list of threads (or of memories): its record, or the problem with it."""
    what = "memory" if memory else "thread"
    if isinstance(obj, Skipped):
        yield skipped_problem(obj, label, what)
    elif memory:
        try:
            yield parse_memory(obj)
        except Exception as exc:  # one bad memory must not stop the others
            yield ImportProblem(label, f"memory {n}", describe(exc))
    else:
        yield from _thread_item(obj, label, f"thread {n}", source, repeats)


def _stream_bundle(path: Path, label: str, error: JsonError, repeats: _Repeats) -> Iterator[Item]:
    """A `{"source", "threads", "memories"}` file that could not be parsed whole, read member by member."""
    source, lists_seen = "generic", False
    stream: JsonStream | None = None
    try:
        with path.open("rb") as fp:
            stream = JsonStream(fp)
            for key, value in stream.members(("threads", "memories")):
                if key == "source" and isinstance(value, str) and value.strip():
                    if lists_seen:
                        yield ImportProblem(
                            label,
                            None,
                            '"source" comes after "threads": the threads were imported as "generic"',
                        )
                    else:
                        source = value
                elif isinstance(value, Iterator):
                    lists_seen = True
                    for n, obj in enumerate(value):
                        yield from _list_item(obj, label, n, source, repeats, memory=key == "memories")
            stream.expect_end()
    except (JsonError, OSError) as exc:
        yield ImportProblem(label, None, stream_error(exc if lists_seen else error, stream))
        return
    if not lists_seen:  # one thread object after all: it is the thread that could not be read
        yield ImportProblem(label, None, stream_error(error, stream))
    yield from bad_utf8_problems(stream, label)


class _Repeats:
    """Thread ids already met in one file, and what a repeat means (issue 31.13: two threads with one id
    were merged without a word). A repeat whose messages are all in the first copy adds nothing; one that
    holds all of the first copy's messages and more is a later copy (a log that wrote the thread again as
    it grew): its new messages are added, as a newer export's would be; anything else is another thread
    that was given the same id, imported as a thread of its own, `ID#2`. Each repeat gets a note."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.seen: dict[tuple[str, str], tuple[str, set[int]]] = {}  # key -> (where first, messages)

    def check(self, thread: ThreadIn, where: str) -> Iterator[Item]:
        key = (thread.source, thread.external_id or "")
        mine = {hash((m.external_id, m.role, m.content)) for m in thread.messages}
        if key not in self.seen:
            self.seen[key] = (where, mine)
            yield thread
            return
        first, theirs = self.seen[key]
        said = f"thread {key[1]!r} appears again ({where}; first at {first})"
        if mine <= theirs:
            yield ImportProblem(self.label, key[1], f"{said} with no message the first copy lacks", note=True)
            return
        if theirs <= mine:
            yield thread
            note = f"{said} with {len(mine - theirs)} more message(s): read as a later copy, they were added"
            theirs |= mine
            yield ImportProblem(self.label, key[1], note, note=True)
            return
        n = 2
        while (key[0], f"{key[1]}#{n}") in self.seen:
            n += 1
        thread.external_id = f"{key[1]}#{n}"
        self.seen[(key[0], thread.external_id)] = (where, mine)
        yield thread
        yield ImportProblem(
            self.label,
            key[1],
            f"{said} with other messages: imported as a thread of its own, {thread.external_id!r}",
            note=True,
        )


def _thread_item(
    obj: Any, label: str, where: str, source: str, repeats: _Repeats | None = None
) -> Iterator[Item]:
    try:
        thread = parse_thread(obj, source)
    except Exception as exc:  # one malformed thread must not stop the rest of the file
        name = ident(obj.get("id")) if isinstance(obj, dict) else None
        yield ImportProblem(label, name or where, describe(exc))
        return
    renamed = _number_repeated_ids(thread.messages)
    if repeats is None:
        yield thread
    else:
        yield from repeats.check(thread, where)
    if renamed:
        shown = ", ".join(f"{old!r} -> {new!r}" for old, new in renamed[:5]) + (
            " …" if len(renamed) > 5 else ""
        )
        yield ImportProblem(
            label,
            thread.external_id,
            f"{len(renamed)} message id(s) were used twice in this thread; the repeats were kept as {shown}",
            note=True,
        )


def _number_repeated_ids(messages: list[MessageIn]) -> list[tuple[str, str]]:
    """Give a message whose id already appeared in its thread the id `ID#2` (`#3`, …), in place.

    Messages are matched by id on re-import, so a repeated id used to make the second message look
    already stored: it was dropped without a word. Numbering is by position, so a re-import of the same
    file gives the same ids (and writes nothing)."""
    seen: dict[str, int] = {}
    renamed: list[tuple[str, str]] = []
    for m in messages:
        mid = m.external_id or ""
        if mid in seen:
            seen[mid] += 1
            new = f"{mid}#{seen[mid]}"
            renamed.append((mid, new))
            m.external_id = new
        else:
            seen[mid] = 1
    return renamed


def parse_thread(obj: Any, default_source: str = "generic") -> ThreadIn:
    obj = as_dict(obj, "thread")
    if "messages" in obj:
        raw = as_list(obj["messages"], "messages")
    elif "conversations" in obj:  # ShareGPT
        raw = as_list(obj["conversations"], "conversations")
    else:
        raise BadRecord('thread has no "messages" list')
    messages = [_message(m, i) for i, m in enumerate(raw)]
    external_id = ident(obj.get("id")) or ident(obj.get("external_id")) or _content_id(messages)
    source = obj["source"] if isinstance(obj.get("source"), str) and obj["source"].strip() else default_source
    metadata = dict(obj["metadata"]) if isinstance(obj.get("metadata"), dict) else {}
    times = [m.created_at for m in messages if m.created_at is not None]
    return ThreadIn(
        source=source,
        external_id=external_id,
        title=title_or_fallback(obj.get("title"), messages),
        messages=messages,
        created_at=parse_ts(obj.get("created_at")) or (min(times) if times else None),
        updated_at=parse_ts(obj.get("updated_at")) or (max(times) if times else None),
        metadata=metadata,
    )


def _message(obj: Any, index: int) -> MessageIn:
    obj = as_dict(obj, f"message {index}")
    raw_role = obj.get("role", obj.get("from"))
    role = _ROLES.get(raw_role.lower()) if isinstance(raw_role, str) else None
    if role is None:
        raise BadRecord(f"message {ident(obj.get('id')) or index} has unknown role {raw_role!r}")
    metadata = dict(obj["metadata"]) if isinstance(obj.get("metadata"), dict) else {}
    raw = obj.get("content", obj.get("value"))
    if isinstance(raw, list):
        content = _parts_text(raw, metadata)
    elif raw is None or isinstance(raw, str):
        content = raw or ""
    else:
        raise BadRecord(f"message {ident(obj.get('id')) or index} content is {type(raw).__name__}")
    for key in ("name", "tool_calls", "tool_call_id", "function_call"):
        if obj.get(key) is not None:
            metadata[key] = obj[key]
    # Who said it, in a chat between people: "name" (OpenAI's field), or "author"/"speaker"/"sender" as
    # chat exports call it. Search prefers a named speaker's own turns (docs/guide/search.md).
    for key in ("author", "speaker", "sender"):
        if "name" not in metadata and isinstance(obj.get(key), str) and obj[key].strip():
            metadata["name"] = obj[key].strip()
    return MessageIn(
        role=role,
        content=content,
        external_id=ident(obj.get("id")) or f"idx:{index}",
        created_at=parse_ts(obj.get("created_at", obj.get("timestamp"))),
        metadata=metadata,
    )


def _parts_text(parts: list[Any], metadata: dict[str, Any]) -> str:
    """OpenAI content parts: text joined; images and files noted in metadata."""
    texts = []
    for part in parts:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict):
            if isinstance(part.get("text"), str):
                texts.append(part["text"])
            elif part.get("type"):
                metadata.setdefault("parts", []).append(str(part["type"]))
    return "\n".join(texts)


def _content_id(messages: list[MessageIn]) -> str:
    """A stable id for a thread that has none: the hash of its roles and texts."""
    canon = json.dumps([[m.role, m.content] for m in messages], ensure_ascii=False, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(canon.encode("utf-8")).hexdigest()[:32]


def parse_memory(obj: Any) -> MemoryIn:
    obj = as_dict(obj, "memory")
    category = obj.get("category")
    if category not in CATEGORIES:
        raise BadRecord(f"memory has unknown category {category!r} (expected one of {', '.join(CATEGORIES)})")
    content = obj.get("content")
    if not isinstance(content, str) or not content.strip():
        raise BadRecord("memory has no content")
    importance = obj.get("importance", 5)
    if isinstance(importance, bool) or not isinstance(importance, int) or not 1 <= importance <= 10:
        raise BadRecord(f"memory importance must be an integer 1-10, got {importance!r}")
    origin = obj["origin"] if isinstance(obj.get("origin"), str) and obj["origin"].strip() else "import"
    return MemoryIn(
        category=category,
        content=content,
        importance=importance,
        origin=origin,
        created_at=parse_ts(obj.get("created_at")),
        pinned=obj.get("pinned") is True,
    )
