"""Reading JSON Lines one line at a time, from a byte offset, with bounded memory.

Why offsets: Claude Code and Codex append to a session file while the session runs, one JSON object per
line. Re-reading a 15 MB session after every turn would make the hook and `memapp watch` slow, so a
reader starts where the previous import stopped and returns where it stopped now. That end is always
just after a complete line: a last line without its newline is either a line still being written (left
for next time, never an error) or a file that simply ends without one (taken, when it parses as a whole
JSON object).

Why one line at a time: a session can be gigabytes (tool output), and a single line hundreds of
megabytes; holding the file, or every parsed line, used gigabytes. A line is read in pieces; one whose
text or parsed shape would not fit the memory budget (store.importing.formats.limits) is passed over
without being held, and reported. Invalid UTF-8 in a line is shown as U+FFFD and counted (the line is
kept), as in every other importer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from store.importing.formats.limits import memory_budget, too_big

UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
PIECE = 1 << 20  # a line is read this many bytes at a time
_FFFD = "\ufffd".encode()


@dataclass
class Line:
    """One line: where it is, and its value or why it has none."""

    offset: int  # of its first byte
    length: int  # bytes, its newline included
    complete: bool  # it ends with a newline
    obj: Any = None
    error: str = ""  # why it was not read, after "line is" ("" when `obj` is its value or the line is blank)
    blank: bool = False
    bad_utf8: int = 0  # invalid UTF-8 bytes shown as U+FFFD


def json_lines(fp: IO[bytes], start: int = 0) -> Iterator[Line]:
    """Every line from `fp`'s position (`start`, its byte offset), parsed as JSON one at a time."""
    pos = start
    hold = 0
    while True:
        raw = fp.readline(PIECE)
        if not raw:
            return
        length = len(raw)
        complete = raw.endswith(b"\n")
        too_long = False
        if not complete and length == PIECE:  # a long line: read on, holding it only while it may fit
            hold = hold or memory_budget() // 2
            parts = [raw]
            while True:
                more = fp.readline(PIECE)
                length += len(more)
                complete = more.endswith(b"\n")
                if not too_long and length > hold:
                    too_long, parts = True, []
                elif not too_long:
                    parts.append(more)
                if complete or len(more) < PIECE:
                    break
            raw = b"".join(parts)
        line = Line(pos, length, complete)
        if too_long:
            line.error = (
                f"{length / 1024**2:.0f} MB long, more than this import can hold with the memory it has "
                f"here ({hold / 1024**2:.0f} MB); skipped"
            )
        else:
            _parse(raw, line)
        yield line
        pos += length


def _parse(raw: bytes, line: Line) -> None:
    stripped = raw.strip()
    if not stripped:
        line.blank = True
        return
    why = too_big(stripped)
    if why is not None:
        line.error = why
        return
    try:
        text = stripped.decode("utf-8")
    except UnicodeDecodeError:
        text = stripped.decode("utf-8", errors="replace")
        line.bad_utf8 = max(1, text.count("\ufffd") - stripped.count(_FFFD))
    try:
        line.obj = json.loads(text.removeprefix("\ufeff"))
    except RecursionError:  # nested deeper than Python recurses
        line.error = "not JSON (nested too deeply)"
    except ValueError as exc:
        line.error = f"not JSON ({exc})"


@dataclass
class Lines:
    """A session file's lines from `start`, read as they are iterated (each a (byte offset, parsed object
    or None, error text) row); `end` is just after the last line consumed, where the next read starts."""

    path: Path
    start: int
    end: int = 0
    bad_utf8: int = 0  # invalid UTF-8 bytes shown as U+FFFD in the lines read
    first_bad_utf8: int | None = None  # byte offset of the line with the first of them

    def __post_init__(self) -> None:
        self.end = self.start

    def __iter__(self) -> Iterator[tuple[int, Any, str]]:
        """Every complete line (a last line without its newline only when it is a whole JSON object:
        otherwise it is still being written, and the next read starts at it)."""
        with self.path.open("rb") as fp:
            fp.seek(self.start)
            for line in json_lines(fp, self.start):
                if not line.complete and (line.blank or line.error or not isinstance(line.obj, dict)):
                    return
                self.end = line.offset + line.length
                if line.blank:
                    continue
                if line.bad_utf8:
                    self.bad_utf8 += line.bad_utf8
                    if self.first_bad_utf8 is None:
                        self.first_bad_utf8 = line.offset
                yield line.offset, line.obj, line.error


def read_lines(path: Path, start: int = 0) -> Lines:
    """The lines of `path` from byte `start`, read as they are iterated (the file is opened then)."""
    return Lines(path, start)


def session_id_from_name(path: Path) -> str:
    """The session id in a file name (Claude Code: `<uuid>.jsonl`; Codex: `rollout-<time>-<uuid>.jsonl`),
    else the name without its suffix: the thread's id must not depend on which lines a read saw."""
    found = UUID.findall(path.name)
    return found[-1].lower() if found else path.stem


def short(value: Any, limit: int = 120) -> str:
    """One line of at most `limit` characters for a tool's input or output (whitespace folded)."""
    if value is None:
        return ""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
