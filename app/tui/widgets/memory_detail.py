"""The detail pane under the Memories table: the highlighted memory's full text, its facts, where it came
from and its history, so a memory cut to 40 characters in an 80-column table can be read without opening
the editor.

Why a separate widget: the table's row is a summary, the pane is the record; the screen only tells the
pane which memory to show, and the pane reads it (memory, history, source thread title) in one worker.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from app.text import literal, number, one_line, when
from app.tui.work import run_in_thread

if TYPE_CHECKING:
    from store import HistoryEvent, Memory, Store

HISTORY_SHOWN = 8


@dataclass(frozen=True)
class MemoryFacts:
    """Everything the pane shows about one memory."""

    memory: Memory
    history: list[HistoryEvent]
    source_title: str | None


def read_facts(store: Store, memory_id: int) -> MemoryFacts:
    m = store.get_memory(memory_id)
    title = None
    if m.source_thread_id is not None:
        try:
            title = store.get_thread(m.source_thread_id).title
        except Exception:  # the thread was deleted meanwhile: the pane says so
            title = None
    return MemoryFacts(m, store.memory_history(m.id), title)


def _event_line(e: HistoryEvent) -> str:
    """One history event in words: what changed, from what to what where it is short."""
    old, new = e.old or {}, e.new or {}
    if e.event == "add":
        return f"{when(e.at)}  added ({new.get('origin', 'manual')})"
    changes = []
    for key in sorted(set(old) | set(new)):
        if key == "content_hash" or old.get(key) == new.get(key):
            continue
        if key == "content":
            changes.append("text edited")
        elif key in old and key in new:
            changes.append(f"{key} {old[key]} → {new[key]}")
        elif key in new and not isinstance(new[key], dict | list):
            changes.append(f"{key} {new[key]}")
    what = ", ".join(changes)
    return one_line(f"{when(e.at)}  {e.event}{f': {what}' if what else ''}", 200)


def render_facts(facts: MemoryFacts) -> Text:
    m = facts.memory
    text = Text()
    head = (
        f"Memory {m.id} · {m.category} · importance {m.importance}"
        f"{' · pinned' if m.pinned else ''} · used {number(m.access_count)}× · last {when(m.last_accessed)}"
    )
    text.append(head + "\n", style="bold")
    text.append(literal(m.content) + "\n")
    source = f"{m.origin}{', edited by hand' if m.user_edited else ''} · created {when(m.created_at)}"
    if m.source_thread_id is not None:
        title = one_line(literal(facts.source_title), 50) if facts.source_title else "(deleted)"
        at = f", message {m.source_message_id}" if m.source_message_id is not None else ""
        source += f" · from thread {m.source_thread_id} “{title}”{at} (t opens it)"
    elif m.source_note:
        source += f" · from {one_line(literal(m.source_note), 60)}"
    text.append("Source: ", style="bold")
    text.append(source + "\n", style="dim")
    if m.valid_until is not None:  # store.truth: kept, but a newer memory replaced it
        by = f" by memory {m.superseded_by}" if m.superseded_by is not None else ""
        text.append(f"Superseded {when(m.valid_until)}{by}: no longer current\n", style="bold")
    if facts.history:
        shown = facts.history[-HISTORY_SHOWN:]
        more = len(facts.history) - len(shown)
        text.append("History", style="bold")
        text.append(f" (newest first{f', {more} earlier not shown' if more else ''}):\n", style="dim")
        for e in reversed(shown):
            text.append(f"  {_event_line(e)}\n", style="dim")
    return text


class MemoryDetail(VerticalScroll):
    """Shows one memory's record; `show(id)` reads it in a worker, `show(None)` clears the pane."""

    DEFAULT_CSS: ClassVar[str] = """
    MemoryDetail {
        height: 50%;
        min-height: 5;
        border-top: solid $panel-lighten-2;
        padding: 0 1;
        & > Static { height: auto; }
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, can_focus=False)
        self.facts: MemoryFacts | None = None
        self.wanted: int | None = None

    def compose(self):  # type: ignore[no-untyped-def]
        yield Static("", id="memory-detail-text", markup=False)

    def show(self, store: Store, memory_id: int | None) -> None:
        self.wanted = memory_id
        if memory_id is None:
            self.facts = None
            self.query_one("#memory-detail-text", Static).update("")
            return
        run_in_thread(
            self,
            lambda: read_facts(store, memory_id),
            self._shown,
            group="memory-detail",
            exclusive=True,
            description="reading the memory",
        )

    def _shown(self, facts: MemoryFacts) -> None:
        if facts.memory.id != self.wanted:
            return  # the cursor moved on meanwhile
        self.facts = facts
        self.query_one("#memory-detail-text", Static).update(render_facts(facts))
        self.scroll_home(animate=False)
