"""The list half of the Memories screen: a paged, filtered table of memories with the detail pane.

Why pages: a memory table fed from SQL a page at a time (`PAGE` rows from `store.list_memories(limit,
offset)`, the next page when the cursor comes near the end) costs the same to open with 50 memories or
50,000. Why a base class of its own: what is shown (columns that fit the width, superseded rows struck
through, "!" for a memory in an open conflict, the count and empty-state lines, the cursor kept on the
same memory across reloads) changes for other reasons than what the keys do to a memory, which is
MemoriesScreen's part (app/tui/screens/memories.py). This class is never shown on its own.

The filters (category, current/superseded/conflicts, text) each start again from the first page; typing
in the text filter waits `DEBOUNCE` seconds of pause before it reads.
"""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.containers import Horizontal
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import DataTable, Input, Select, Static

from app.text import cell, number, when
from app.tui.screens.base import MemappScreen
from app.tui.widgets.memory_detail import MemoryDetail
from app.tui.widgets.row_table import RowTable
from store import CATEGORIES, Memory

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


class MemoryListScreen(MemappScreen):
    """The paged memory table, its filters and the detail of the highlighted memory."""

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
                Input(placeholder="Filter  (/)", id="memories-filter", compact=True),  # fits at 80 columns
                Static("", id="memories-info", markup=False),
                classes="toolbar -compact",
            ),
            table,
            Static("", id="memories-empty", classes="empty-state", markup=False),
            MemoryDetail(id="memories-detail"),
        ]

    @property
    def table(self) -> RowTable:
        return self.query_one("#memories-table", RowTable)

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
            from store.truth import open_conflict_ids  # loaded on first use, not at start-up

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
            columns = [
                ("Pin", "pin", 3),
                ("Category", "category", 10),
                ("Imp", "importance", 3),
                ("Memory", "content", self.content_width),
                ("Used", "used", 5),
            ]
            table.set_columns(columns if self.narrow else [*columns, ("Last accessed", "last", 16)])
        # A write between two pages (a pin, an add from MCP) shifts the order: the next page can start
        # with a memory already shown. It stays where it is; the offset still counts it.
        shown = set() if first else {str(k.value) for k in table.rows}
        for m in rows:
            if str(m.id) not in shown:
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

    # -- filters -------------------------------------------------------------------------------------

    def action_filter(self) -> None:
        self.query_one("#memories-filter", Input).focus()

    def action_clear_filter(self) -> None:
        self.query_one("#memories-filter", Input).value = ""
        self.table.focus()

    def action_category(self) -> None:
        self._next_choice("#memories-category", [ALL, *CATEGORIES], self.category)

    def action_state(self) -> None:
        self._next_choice("#memories-state", [v for _, v in STATES], self.state)

    def _next_choice(self, select: str, values: list[str], current: str) -> None:
        """Move a choice box on to its next value (the last wraps to the first); its Changed reloads."""
        self.query_one(select, Select).value = values[(values.index(current) + 1) % len(values)]

    @on(Select.Changed, "#memories-category")
    @on(Select.Changed, "#memories-state")
    def _choice_changed(self, event: Select.Changed) -> None:
        """The category or the "show" choice changed (by key or by mouse): read again from the top."""
        value = str(event.value)
        if event.select.id == "memories-category":
            changed, self.category = value != self.category, value
        else:
            changed, self.state = value != self.state, value
        if changed:
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
