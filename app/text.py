"""Turning stored values into display text that can never be read as markup or terminal control codes.

Why a module of its own: user text (memories, messages, titles, paths) reaches the screen through
DataTable cells, Static widgets and notifications, and every one of those parses Rich/Textual markup
from plain `str` by default. These helpers return `rich.text.Text` objects (never parsed) and replace
control characters, so an ANSI escape in a pasted log shows up as a visible `␛[31m` instead of
recolouring the terminal.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

from rich.cells import cell_len, set_cell_size
from rich.text import Text

# C0 controls except tab and newline, DEL, and the C1 range: shown as Unicode "control pictures".
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\x80-\x9f]")
_SPACES = re.compile(r"\s+")


def _picture(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)
    if code == 0x7F:
        return "\u2421"
    return "\ufffd"


def literal(text: str) -> str:
    """`text` with control characters made visible; newlines and tabs kept."""
    return _CONTROL.sub(_picture, text)


def one_line(text: str, width: int) -> str:
    """The text on one line (whitespace collapsed), cut to `width` terminal cells with an ellipsis.

    Cells, not characters: a CJK character takes two, and a cut by characters would overflow the column.
    """
    flat = _SPACES.sub(" ", literal(text)).strip()
    if cell_len(flat) <= width:
        return flat
    if width <= 1:
        return set_cell_size(flat, max(0, width))
    return set_cell_size(flat, width - 1).rstrip() + "…"


def fit(text: str, width: int) -> str:
    """`one_line` padded with spaces to exactly `width` cells: a column of a plain-text table (the CLI's
    lists), which `f"{s:<50}"` would pad by characters and misalign for CJK titles (issue 28.10)."""
    flat = one_line(text, width)
    return flat + " " * max(0, width - cell_len(flat))


def tail(text: str, width: int) -> str:
    """The end of `text` in at most `width` cells, "…" in front when cut: for paths, whose file name is
    the part worth keeping."""
    if cell_len(text) <= width:
        return text
    if width <= 1:
        return "…"[: max(0, width)]
    kept = ""
    for ch in reversed(text):
        if cell_len(ch + kept) > width - 1:
            break
        kept = ch + kept
    return "…" + kept


def cell(text: str, width: int | None = None, style: str = "") -> Text:
    """A DataTable cell: one line, literal, never parsed as markup."""
    value = one_line(text, width) if width is not None else _SPACES.sub(" ", literal(text)).strip()
    return Text(value, style=style, no_wrap=True, overflow="ellipsis")


def plural(n: int, one: str, many: str | None = None) -> str:
    """ "1 memory", "2 memories", "0 threads": the count and the word that goes with it."""
    return f"{number(n)} {one if n == 1 else (many or one + 's')}"


def number(value: int, estimated: bool = False) -> str:
    """1234567 -> '1,234,567'; estimated token counts get a leading '~'."""
    return ("~" if estimated else "") + f"{value:,}"


def when(ts: float | None, never: str = "never") -> str:
    """Absolute local date and time, 'YYYY-MM-DD HH:MM' (no 'n days ago': stable on screen and in tests)."""
    if ts is None:
        return never
    return dt.datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M")


def short_path(path: Path) -> str:
    """A database path as the user would type it: the home directory shown as ~."""
    text = str(path)
    home = str(Path.home())
    if home not in ("", "/") and (text == home or text.startswith(home + "/")):
        text = "~" + text[len(home) :]
    return literal(text)
