"""Reading an append-only JSON Lines log from a byte offset, the way coding agents write their sessions.

Why offsets and not "parse the file": Claude Code and Codex append to a session file while the session
runs, one JSON object per line. Re-reading a 15 MB session after every turn would make the hook and
`memapp watch` slow, so a reader starts where the previous import stopped and returns where it stopped
now. That end is always just after a complete line: a last line without its newline is either a line
still being written (left for next time, never an error) or a file that simply ends without one (taken,
when it parses as a whole JSON object).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


@dataclass
class Lines:
    """The complete lines from `start`: (byte offset, parsed object or None, error text)."""

    start: int
    end: int  # just after the last line consumed; the next read starts here
    rows: list[tuple[int, Any, str]] = field(default_factory=list)
    size: int = 0  # the file's size when read


def read_lines(path: Path, start: int = 0) -> Lines:
    """Every complete JSON line of `path` from byte `start` (a line that is not JSON comes back with its
    error, to be reported once: the next read starts after it)."""
    with path.open("rb") as fp:
        fp.seek(start)
        data = fp.read()
    out = Lines(start, start, size=start + len(data))
    pos = 0
    n = len(data)
    while pos < n:
        nl = data.find(b"\n", pos)
        last = nl < 0
        raw = data[pos:] if last else data[pos:nl]
        stripped = raw.strip()
        if not stripped:
            if last:
                break  # trailing blanks without a newline: wait for the rest
            pos = nl + 1
            out.end = start + pos
            continue
        try:
            obj = json.loads(stripped.removeprefix(b"\xef\xbb\xbf"))
            error = ""
        except (ValueError, UnicodeDecodeError) as exc:
            if last:
                break  # half-written: the writer has not finished this line yet
            obj, error = None, f"line is not JSON ({exc})"
        if last and not isinstance(obj, dict):
            break
        out.rows.append((start + pos, obj, error))
        pos = n if last else nl + 1
        out.end = start + pos
    return out


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
