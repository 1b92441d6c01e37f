"""Memories: the curated long-term memories, pinned first, filterable by category and text, editable.

Keeping memories true (store.truth): a memory a newer one superseded is shown dimmed and struck through
(the editor names its successor); a memory in an open conflict is marked "!" in the pin column. The
"show" filter (f) narrows the list to current, superseded or conflicting memories; r reviews a conflict
(the highlighted memory's, or the oldest open one) with keep new / keep old / both true / merge.

Every change goes through the same Store methods the CLI uses (history rows, re-embedding, FTS), in a
worker. Delete moves to the trash and offers undo (the `u` key, and the notification says so): undo is
`restore_memory`, which brings back the same row with its counts and vector.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import on
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import DataTable, Input, Select, Static

from app.text import cell, number, when
from app.tui.screens.base import MemappScreen
from app.tui.screens.conflict_review import ConflictReviewScreen
from app.tui.screens.memory_edit import open_memory_editor
from app.tui.widgets.memory_detail import MemoryDetail
from app.tui.widgets.row_table import RowTable
from store import CATEGORIES, Memory

if TYPE_CHECKING:
    from store.truth.conflicts import Conflict
    from store.truth.timeline import Source

PAGE = 200
PREFETCH = 40
DEBOUNCE = 0.15
FIXED_WIDTH = 3 + 10 + 3 + 5 + 16 + 6 * 2 + 2  # pin, category, importance, used, last accessed, padding, bar
NARROW = 100  # below this width the "Last accessed" column is left to the detail pane
NARROW_FIXED = FIXED_WIDTH - 16 - 2
ALL = "all"
STATES = [
    ("All memories", ALL),
    ("Current", "current"),
    ("Superseded", "superseded"),
    ("To review", "conflicts"),
]


class MemoriesScreen(MemappScreen):
    """The memory table; n new, e/Enter edit, p pin, +/- importance, d delete (u undoes)."""

    NAV = "memories"
    TITLE = "Memories"
    AUTO_FOCUS = "#memories-table"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("n", "new", "New", id="memories-new", tooltip="Add a memory"),
        Binding("e", "edit", "Edit", id="memories-edit", tooltip="Edit the highlighted memory (also Enter)"),
        Binding(
            "p",
            "pin",
            "Pin",
            id="memories-pin",
            tooltip="Pin or unpin (pinned memories are never cleaned up)",
        ),
        Binding(
            "plus,equals_sign",
            "importance(1)",
            "Importance",
            key_display="+/-",
            id="memories-more",
            tooltip="Raise importance by one (- lowers it)",
        ),
        Binding(
            "minus",
            "importance(-1)",
            "Less important",
            show=False,
            id="memories-less",
            tooltip="Lower importance by one",
        ),
        Binding("d,delete", "delete", "Delete", id="memories-delete", tooltip="Move to the trash (u undoes)"),
        Binding("u", "undo", "Undo", id="memories-undo", tooltip="Bring back the memory you deleted last"),
        Binding(
            "slash", "filter", "Filter", show=False, id="memories-filter", tooltip="Filter memories by text"
        ),
        Binding(
            "c",
            "category",
            "Category",
            id="memories-category",
            tooltip="Cycle the category shown: all, preference, project, skill, fact",
        ),
        Binding(
            "f",
            "state",
            "Show",
            id="memories-state",
            tooltip="Cycle what is shown: all, current, superseded, conflicts to review",
        ),
        Binding(
            "r", "review", "Review", id="memories-review", tooltip="Review a conflict between two memories"
        ),
        Binding(
            "escape",
            "clear_filter",
            "Clear filter",
            show=False,
            id="memories-clear",
            tooltip="Clear the text filter",
        ),
        Binding(
            "y",
            "copy",
            "Copy",
            show=False,
            id="memories-copy",
            tooltip="Copy the highlighted memory's text to the clipboard",
        ),
        Binding(
            "t",
            "source",
            "Source thread",
            show=False,
            id="memories-source",
            tooltip="Open the thread the highlighted memory came from",
        ),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.category: str = ALL
        self.state: str = ALL
        self.conflicted: dict[int, int] = {}  # memory id -> an open conflict it is in
        self.filter_text = ""
        self.loaded = 0
        self.exhausted = False
        self.fetching = False
        self.generation = 0
        self.content_width = 40
        self.deleted: list[int] = []
        self._reselect: int | None = None
        self._reselect_row = 0
        self._filter_timer: Timer | None = None

    def compose_body(self) -> list[Widget]:
        options = [("All categories", ALL)] + [(c, c) for c in CATEGORIES]
        table: RowTable = RowTable(id="memories-table")
        return [
            Horizontal(
                Select(options, value=ALL, allow_blank=False, id="memories-category", compact=True),
                Select(STATES, value=ALL, allow_blank=False, id="memories-state", compact=True),
                Input(placeholder="Filter by text  (/)", id="memories-filter", compact=True),
                Static("", id="memories-info", markup=False),
                classes="toolbar -compact",
            ),
            table,
            Static("", id="memories-empty", classes="empty-state", markup=False),
            MemoryDetail(id="memories-detail"),
        ]

    @property
    def table(self) -> DataTable[Text]:
        return self.query_one("#memories-table", DataTable)

    def current_id(self) -> int | None:
        table = self.table
        if not table.row_count:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return int(key) if key is not None else None

    # -- loading -------------------------------------------------------------------------------------

    def on_screen_resume(self) -> None:
        """Always read the first page again when shown: access counts change without a data_changed
        (a search that shows a memory counts one use), and the page is one cheap query."""
        self._seen_version = self.memapp.data_version
        self.reload()

    def reload(self) -> None:
        if self._reselect is None:
            self._reselect = self.current_id()
            self._reselect_row = self.table.cursor_row
        self.generation += 1
        self.loaded = 0
        self.exhausted = False
        self.content_width = self._content_width()
        self._load_page(first=True)

    def _load_page(self, *, first: bool = False) -> None:
        self.fetching = True
        generation, offset = self.generation, self.loaded
        category = None if self.category == ALL else self.category
        state = None if self.state == ALL else self.state
        text = self.filter_text or None
        store = self.store

        def fetch() -> tuple[int, list[Memory], bool, dict[int, int] | None]:
            from store.truth.conflicts import open_conflict_ids  # loaded on first use, not at start-up

            return (
                generation,
                store.list_memories(category=category, text=text, state=state, limit=PAGE, offset=offset),
                first,
                open_conflict_ids(store) if first else None,
            )

        self.in_thread(
            fetch, self._show_page, group="memories-page", exclusive=first, description="reading the memories"
        )

    def _show_page(self, result: tuple[int, list[Memory], bool, dict[int, int] | None]) -> None:
        generation, rows, first, conflicted = result
        if generation != self.generation:
            return
        if conflicted is not None:
            self.conflicted = conflicted
        table = self.table
        if first:
            table.clear(columns=True)
            table.add_column("Pin", key="pin", width=3)
            table.add_column("Category", key="category", width=10)
            table.add_column("Imp", key="importance", width=3)
            table.add_column("Memory", key="content", width=self.content_width)
            table.add_column("Used", key="used", width=5)
            if not self.narrow:
                table.add_column("Last accessed", key="last", width=16)
        for m in rows:
            table.add_row(*self._cells(m), key=str(m.id))
        self.loaded += len(rows)
        self.exhausted = len(rows) < PAGE
        self.fetching = False
        if first:
            self._restore_cursor()
        self._show_info()

    @property
    def narrow(self) -> bool:
        return 0 < self.size.width < NARROW

    def _content_width(self) -> int:
        if not self.size.width:
            return 40
        return max(20, self.size.width - (NARROW_FIXED if self.narrow else FIXED_WIDTH))

    def _cells(self, m: Memory) -> list[Text]:
        content = cell(m.content, self.content_width)
        if m.valid_until is not None:  # superseded: still here, visibly not current
            content.stylize("dim strike")
        mark = ("●" if m.pinned else "") + ("!" if m.id in self.conflicted else "")
        cells = [
            Text(mark, style="bold"),
            cell(m.category, 10),
            Text(str(m.importance), justify="right"),
            content,
            Text(number(m.access_count), justify="right"),
        ]
        return cells if self.narrow else [*cells, Text(when(m.last_accessed))]

    def _restore_cursor(self) -> None:
        table = self.table
        target, row = self._reselect, self._reselect_row
        self._reselect = None
        if not table.row_count:
            return
        if target is not None:
            try:
                table.move_cursor(row=table.get_row_index(str(target)))
                return
            except Exception:  # gone (deleted) or beyond the first page: keep the row position
                pass
        table.move_cursor(row=min(row, table.row_count - 1))

    def _show_info(self) -> None:
        unfiltered = self.category == ALL and not self.filter_text
        if self.exhausted:
            count = number(self.loaded)
        elif unfiltered and self.memapp.status.memories is not None:
            count = number(self.memapp.status.memories)
        else:
            count = f"{number(self.loaded)}+"
        where = "" if self.category == ALL else f" · {self.category}"
        where += "" if self.state == ALL else f" · {self.state}"
        review = len(set(self.conflicted.values()))
        tail = f"{review} to review (r)" if review else "pinned first · y copies"
        self.query_one("#memories-info", Static).update(
            f"{count} memor{'y' if count == '1' else 'ies'}{where} · {tail}"
        )
        empty = self.query_one("#memories-empty", Static)
        has_rows = self.loaded > 0
        self.table.display = has_rows
        empty.display = not has_rows
        detail = self.query_one(MemoryDetail)
        detail.display = has_rows
        if not has_rows:
            detail.show(self.store, None)
        if not has_rows:
            if self.state == "conflicts" and not self.filter_text and self.category == ALL:
                empty.update("No conflicts to review. f shows the other memories.")
            elif self.filter_text or self.category != ALL or self.state != ALL:
                empty.update(
                    "No memory matches. Esc clears the text filter, c changes the category, f what is shown."
                )
            else:
                empty.update(
                    "No memories yet.\n\nPress n to write one: a preference, a project, a skill or a "
                    "fact you want every AI to know."
                )

    @on(DataTable.RowHighlighted, "#memories-table")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        key = event.row_key.value
        self.query_one(MemoryDetail).show(self.store, int(key) if key is not None else None)

    @on(DataTable.RowHighlighted, "#memories-table")
    def _maybe_next_page(self, event: DataTable.RowHighlighted) -> None:
        if not self.exhausted and not self.fetching and event.cursor_row >= self.loaded - PREFETCH:
            self._load_page()

    def on_resize(self) -> None:
        if self.loaded and self._content_width() != self.content_width:
            self.reload()

    # -- edits ---------------------------------------------------------------------------------------

    def _saved(self, memory: Memory) -> None:
        self._reselect = memory.id

    def action_new(self) -> None:
        open_memory_editor(self.memapp, None, on_saved=self._saved)

    @on(DataTable.RowSelected, "#memories-table")
    def action_edit(self) -> None:
        mid = self.current_id()
        if mid is None:
            return
        store = self.store

        def fetch() -> tuple[Memory, Source, Memory | None]:
            m = store.get_memory(mid)
            successor = store.get_memory(m.superseded_by) if m.superseded_by is not None else None
            return m, store.memory_source(m), successor

        def show(found: tuple[Memory, Source, Memory | None]) -> None:
            m, source, successor = found
            open_memory_editor(self.memapp, m, on_saved=self._saved, source=source, successor=successor)

        self.in_thread(fetch, show, description="opening the memory")

    # -- conflicts -----------------------------------------------------------------------------------

    def action_review(self) -> None:
        """Review the highlighted memory's conflict, or else the oldest open one."""
        mid = self.current_id()
        store = self.store

        def find() -> Conflict | None:
            from store.truth.conflicts import get_conflict, list_conflicts, open_conflict_ids

            ids = open_conflict_ids(store)
            if mid is not None and mid in ids:
                return get_conflict(store, ids[mid])
            waiting = list_conflicts(store, limit=10_000)
            return waiting[-1] if waiting else None

        def show(conflict: Conflict | None) -> None:
            if conflict is None:
                self.notify("No conflicts to review.", markup=False)
                return
            self.app.push_screen(ConflictReviewScreen(conflict), lambda keep: self._resolve(conflict, keep))

        self.in_thread(find, show, description="finding a conflict")

    def _resolve(self, conflict: Conflict, keep: str | None) -> None:
        if keep is None:
            return
        store = self.store
        from store.truth.conflicts import resolve_conflict

        def done(c: Conflict) -> None:
            self._reselect = c.new_id if keep in ("new", "both") else c.old_id
            self.notify(f"Conflict {c.id} resolved: kept {keep}.", title="Conflicts", markup=False)
            self.memapp.data_changed()

        self.in_thread(
            lambda: resolve_conflict(store, conflict.id, keep),
            done,
            group="memory-write",
            description="resolving the conflict",
        )

    def _write(self, change: Callable[[int], Memory]) -> None:
        mid = self.current_id()
        if mid is None:
            return

        def done(m: Memory) -> None:
            self._reselect = m.id
            self.memapp.data_changed()

        self.in_thread(lambda: change(mid), done, group="memory-write", description="saving the memory")

    def action_pin(self) -> None:
        mid = self.current_id()
        if mid is None:
            return
        store = self.store

        def toggle(memory_id: int) -> Memory:
            return store.pin_memory(memory_id, not store.get_memory(memory_id).pinned)

        self._write(toggle)

    def action_importance(self, delta: int) -> None:
        store = self.store
        self._write(lambda memory_id: store.change_importance(memory_id, delta))

    def action_delete(self) -> None:
        mid = self.current_id()
        if mid is None:
            return
        store = self.store
        self._reselect_row = self.table.cursor_row

        def done(m: Memory) -> None:
            self.deleted.append(m.id)
            self.notify(f"Memory {m.id} moved to the trash. Press u to undo.", title="Deleted", markup=False)
            self.memapp.data_changed()

        self.in_thread(
            lambda: store.delete_memory(mid), done, group="memory-write", description="deleting the memory"
        )

    def action_undo(self) -> None:
        if not self.deleted:
            self.notify("Nothing to undo.", markup=False)
            return
        mid = self.deleted.pop()
        store = self.store

        def done(m: Memory) -> None:
            self._reselect = m.id
            self.notify(f"Memory {m.id} restored.", title="Undo", markup=False)
            self.memapp.data_changed()

        self.in_thread(
            lambda: store.restore_memory(mid), done, group="memory-write", description="restoring the memory"
        )

    def action_copy(self) -> None:
        facts = self.query_one(MemoryDetail).facts
        if facts is None or facts.memory.id != self.current_id():
            self.notify("No memory to copy.", markup=False)
            return
        self.app.copy_to_clipboard(facts.memory.content)
        self.notify(f"Copied memory {facts.memory.id} to the clipboard.", title="Copy", markup=False)

    def action_source(self) -> None:
        facts = self.query_one(MemoryDetail).facts
        if facts is None or facts.memory.source_thread_id is None:
            self.notify("This memory was not taken from a thread.", markup=False)
            return
        if facts.source_title is None:
            self.notify("The thread it came from has been deleted.", markup=False)
            return
        from app.tui.screens.thread_view import ThreadViewScreen

        m = facts.memory  # at the message it came from, when known (store.truth provenance)
        self.app.push_screen(
            ThreadViewScreen(facts.memory.source_thread_id, message_id=m.source_message_id, nav=self.nav)
        )

    # -- filters -------------------------------------------------------------------------------------

    def action_filter(self) -> None:
        self.query_one("#memories-filter", Input).focus()

    def action_clear_filter(self) -> None:
        self.query_one("#memories-filter", Input).value = ""
        self.table.focus()

    def action_category(self) -> None:
        values = [ALL, *CATEGORIES]
        nxt = values[(values.index(self.category) + 1) % len(values)]
        self.query_one("#memories-category", Select).value = nxt

    def action_state(self) -> None:
        values = [v for _, v in STATES]
        nxt = values[(values.index(self.state) + 1) % len(values)]
        self.query_one("#memories-state", Select).value = nxt

    @on(Select.Changed, "#memories-state")
    def _state_changed(self, event: Select.Changed) -> None:
        value = str(event.value)
        if value != self.state:
            self.state = value
            self._reselect_row = 0
            self.reload()

    @on(Select.Changed, "#memories-category")
    def _category_changed(self, event: Select.Changed) -> None:
        value = str(event.value)
        if value != self.category:
            self.category = value
            self._reselect_row = 0
            self.reload()

    @on(Input.Changed, "#memories-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        text = event.value.strip()
        if text == self.filter_text:
            return
        self.filter_text = text
        self._reselect_row = 0
        if self._filter_timer is not None:
            self._filter_timer.stop()
        self._filter_timer = self.set_timer(DEBOUNCE, self.reload)

    @on(Input.Submitted, "#memories-filter")
    def _filter_done(self) -> None:
        self.table.focus()
