"""`--format text`: a list of memories as people paste it -> memory suggestions (never memories).

What it reads: what ChatGPT's "Manage memories" page, Claude's memory view or another assistant prints
when asked "list what you remember about me": bullets (`-`, `*`, `•`, `+`, `–`), numbered lines (`1.`,
`2)`, `(3)`), Markdown checkboxes, or simply one memory per line. Headings (`# ...`, `Saved memories:`),
UI words copied along with the list ("Delete", "Manage memories") and blank lines are dropped; in a
bulleted or numbered list an indented line without a marker continues the item above it.

Why suggestions: a pasted list is someone else's wording of what they believed about the person, and it
arrives in bulk. Each line becomes a pending suggestion with a guessed category and importance, reviewed
like the ones found in threads (`memapp extract list` / `accept` / `reject`), so nothing lands in
memory without a decision.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from store.extract.patterns import candidate_from_sentence
from store.importing.formats._common import ImportProblem, Item, clean_text, describe, guess_category
from store.records import SuggestionIn

MAX_BYTES = 4 * 1024**2  # a list of memories is kilobytes; a bigger file is not one
_MARKER = re.compile(
    r"^\s*(?:[-*•·+–—▪◦●]\s+|\(?\d{1,3}[.)]\s+|\(?[a-zA-Z][.)]\s+(?=\S{2}))(?:\[[ xX]\]\s*)?"
)
_HEADING = re.compile(r"^\s*(?:#{1,6}\s|={3,}|-{3,}\s*$|\*{3,}\s*$|```)")
_UI_WORDS = {
    "delete",
    "manage memories",
    "manage",
    "memory",
    "memories",
    "saved memories",
    "clear chatgpt's memory",
    "memory full",
    "edit",
    "remove",
}
_STRONG = re.compile(r"\b(always|never|must|important|allerg\w*|critical|do not|don't ever)\b", re.IGNORECASE)
_IDENTITY = re.compile(
    r"\b(name is|named|lives in|based in|works (as|at|for)|is an? |born|years old)\b", re.IGNORECASE
)
_USER_PREFIX = re.compile(r"^(?:the )?user(?:'s)?\s+", re.IGNORECASE)


def read(path: Path) -> Iterator[Item]:
    """Suggestions from a text file (`-` reads standard input; the CLI passes it as a file)."""
    try:
        with path.open("rb") as fp:
            raw = fp.read(MAX_BYTES + 1)
    except OSError as exc:
        yield ImportProblem(str(path), None, describe(exc))
        return
    if b"\x00" in raw[:4096]:
        yield ImportProblem(str(path), None, "binary data, not a text list of memories")
        return
    if len(raw) > MAX_BYTES:
        yield ImportProblem(str(path), None, "more than 4 MB of text: not a list of memories")
        return
    yield from parse_text(raw.decode("utf-8-sig", errors="replace"))


def parse_text(text: str) -> Iterator[SuggestionIn]:
    """One suggestion per item of the list, first mention first, duplicates (case-folded) once."""
    seen: set[str] = set()
    for item in split_items(text):
        key = " ".join(item.casefold().split()).rstrip(".")
        if key in seen:
            continue
        seen.add(key)
        category, importance = guess(item)
        yield SuggestionIn(category, item, importance)


def split_items(text: str) -> list[str]:
    """The list's items: marker lines (with their indented continuations) or, without markers, lines."""
    lines = clean_text(text).split("\n")
    marked = sum(1 for line in lines if _MARKER.match(line))
    listed = marked >= max(1, sum(1 for line in lines if line.strip()) // 2)
    items: list[str] = []
    for line in lines:
        if not line.strip() or _HEADING.match(line):
            continue
        m = _MARKER.match(line)
        body = line[m.end() :] if m else line
        body = body.strip().strip("*_").strip()
        if not body or body.casefold().rstrip(":") in _UI_WORDS:
            continue
        if body.endswith(":") and not m and len(body) < 60:
            continue  # "Saved memories:", "About you:": a heading written as a line
        if listed and not m and items and line[:1] in (" ", "\t"):
            items[-1] = f"{items[-1]} {body}"
            continue
        items.append(body)
    return [i for i in (" ".join(i.split()) for i in items) if len(i) >= 3]


def guess(item: str) -> tuple[str, int]:
    """(category, importance 1-10) for one memory: the phrasing rules the thread extractor uses when the
    line is said in the first person, else keywords ("prefers", "working on", ...)."""
    c = candidate_from_sentence(item)
    if c is not None:
        return c.category, c.importance
    body = _USER_PREFIX.sub("", item)
    category = guess_category(body)
    importance = 6 if category in ("preference", "project") else 5
    if _IDENTITY.search(body) and category == "fact":
        importance += 1
    if _STRONG.search(body):
        importance += 2
    return category, max(1, min(10, importance))
