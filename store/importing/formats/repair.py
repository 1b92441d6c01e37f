"""Text SQLite cannot store, repaired in everything an importer yields: a lone UTF-16 surrogate becomes U+FFFD.

    from store.importing.formats.repair import Repairs
    repairs = Repairs()
    items = [repairs.item(i) for i in reader_items]   # ThreadIn / MemoryIn / SuggestionIn, fixed in place
    items += repairs.notes(label)                     # one note per file when anything was replaced

Why: JSON allows the escape `"\\ud83d"` on its own (a tool that cut an emoji in half between its two
UTF-16 halves writes exactly that), Python decodes it into a string with a lone surrogate, and SQLite
cannot store one. The store refuses such text (nothing half-encoded is written), which used to cost the
whole thread: one truncated emoji in one line of a coding session lost the session for good, and during
incremental capture every message after it. The missing half carries no text of its own, so the
character is shown as U+FFFD, as invalid UTF-8 is, and everything else is kept: the message, its thread,
the rest of the file.

Why here, once, and not in each parser: every format reads JSON somewhere (ChatGPT, Claude, Open WebUI,
generic and bundle files, Claude Code and Codex lines, llm's JSON columns), and a parser that forgot would
lose threads again. read_export and the session reader pass every record through `Repairs.item`, so no
parser has to remember. A replaced character is reported once per file as a note (nothing was skipped,
so it does not make the import fail).
"""

from __future__ import annotations

import re
from typing import Any

from store.importing.formats._common import ImportProblem, Item
from store.records import MemoryIn, SuggestionIn, ThreadIn

_SURROGATE = re.compile("[\ud800-\udfff]")
_REPLACEMENT = "\ufffd"


class Repairs:
    """Replaces lone surrogates in records, counting them for one note per file."""

    def __init__(self) -> None:
        self.replaced = 0
        self.first: str | None = None  # the conversation (or memory) of the first replacement

    def text(self, value: str) -> str:
        if value.isascii():  # the common case, at C speed
            return value
        fixed, n = _SURROGATE.subn(_REPLACEMENT, value)
        self.replaced += n
        return fixed

    def value(self, value: Any) -> Any:
        """A JSON-like value with every string (dict keys too) repaired; containers are fixed in place.

        Walked with an explicit stack: metadata can be nested as deep as the JSON parser allows, past
        what a recursive walk would survive."""
        if isinstance(value, str):
            return self.text(value)
        if not isinstance(value, dict | list):
            return value
        stack: list[dict[Any, Any] | list[Any]] = [value]
        while stack:
            node = stack.pop()
            if isinstance(node, list):
                for i, v in enumerate(node):
                    if isinstance(v, str):
                        node[i] = self.text(v)
                    elif isinstance(v, dict | list):
                        stack.append(v)
                continue
            for k in list(node):
                v = node[k]
                if isinstance(v, str):
                    node[k] = self.text(v)
                elif isinstance(v, dict | list):
                    stack.append(v)
                if isinstance(k, str) and not k.isascii():
                    fixed = self.text(k)
                    if fixed != k:
                        node[fixed] = node.pop(k)
        return value

    def item(self, item: Item) -> Item:
        """`item` with its text repaired (the same object, changed in place)."""
        before = self.replaced
        if isinstance(item, ThreadIn):
            item.source = self.text(item.source)
            item.title = self.text(item.title)
            item.external_id = None if item.external_id is None else self.text(item.external_id)
            item.metadata = self.value(item.metadata)
            for m in item.messages:
                m.content = self.text(m.content)
                m.role = self.text(m.role)
                m.external_id = None if m.external_id is None else self.text(m.external_id)
                if m.metadata:
                    m.metadata = self.value(m.metadata)
            where = item.external_id
        elif isinstance(item, MemoryIn):
            item.content = self.text(item.content)
            item.category = self.text(item.category)
            item.origin = self.text(item.origin)
            item.thread_source = None if item.thread_source is None else self.text(item.thread_source)
            if item.thread_external_id is not None:
                item.thread_external_id = self.text(item.thread_external_id)
            item.message_external_ids = tuple(self.text(x) for x in item.message_external_ids)
            where = "memory"
        elif isinstance(item, SuggestionIn):
            item.content = self.text(item.content)
            item.category = self.text(item.category)
            item.origin = self.text(item.origin)
            where = "suggestion"
        else:
            return item
        if self.replaced > before and self.first is None:
            self.first = where
        return item

    def notes(self, label: str) -> list[ImportProblem]:
        """One note for what was replaced in the file `label` (none when nothing was)."""
        if not self.replaced:
            return []
        n = self.replaced
        return [
            ImportProblem(
                label,
                self.first,
                f"{n} lone UTF-16 surrogate{'s' if n > 1 else ''} (half of a character, e.g. an emoji cut "
                f"in two) shown as U+FFFD; everything else was imported",
                note=True,
            )
        ]
