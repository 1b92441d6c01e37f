"""Threads: every imported conversation, a page at a time from SQL, sortable, filtered by title.

Why pages: a ten-year archive has tens of thousands of threads and a DataTable keeps every row it is
given. The table starts with one page (`PAGE` rows from `store.list_threads(limit, offset)`) and asks
for the next when the cursor comes near the end of what is loaded, so opening the screen costs the
same with 50 threads or 100,000.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import on
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import DataTable, Input, Static

from app.text import cell, number, one_line, when
from app.tui.screens.base import MemappScreen
from app.tui.screens.confirm import ConfirmScreen
from app.tui.screens.prompt import PromptScreen
from app.tui.widgets.row_table import Column, RowTable

if TYPE_CHECKING:
    from store import Thread

PAGE = 200
DEBOUNCE = 0.15  # seconds of typing pause before the filter runs
PREFETCH = 40  # load the next page when the cursor is this close to the last loaded row
SORTS: tuple[tuple[str, str], ...] = (
    ("updated", "last active"),
    ("created", "created"),
    ("title", "title"),
    ("messages", "messages"),
    ("tokens", "tokens"),
    ("source", "source"),
)
SORT_BY_COLUMN = {
    "title": "title",
    "source": "source",
    "messages": "messages",
    "tokens": "tokens",
    "updated": "updated",
}
FIXED_WIDTH = 9 + 6 + 8 + 16 + 5 * 2 + 2  # source, msgs, tokens, last active, cell padding, scrollbar


class ThreadsScreen(MemappScreen):
    """The list of threads; Enter opens one."""

    NAV = "threads"
    TITLE = "Threads"
    AUTO_FOCUS = "#threads-table"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open", "Open", id="threads-open", tooltip="Read the highlighted thread"),
        Binding("slash", "filter", "Filter", id="threads-filter", tooltip="Filter threads by title"),
        Binding(
            "o",
            "sort",
            "Sort",
            id="threads-sort",
            tooltip="Cycle the order: last active, created, title, messages, tokens, source",
        ),
        Binding(
            "escape",
            "clear_filter",
            "Clear filter",
            show=False,
            id="threads-clear",
            tooltip="Clear the filter and go back to the list",
        ),
        Binding("r", "reload", "Reload", show=False, id="threads-reload", tooltip="Read the list again"),
        Binding(
            "e", "rename", "Rename", id="threads-rename", tooltip="Give the highlighted thread a new title"
        ),
        Binding(
            "a",
            "archive",
            "Archive",
            id="threads-archive",
            tooltip="Archive the highlighted thread (hidden from lists and search), or unarchive it",
        ),
        Binding(
            "d,delete",
            "delete",
            "Delete",
            id="threads-delete",
            tooltip="Delete the highlighted thread for good (asks first; archive hides it instead)",
        ),
        Binding(
            "A",
            "show_archived",
            "Archived",
            show=False,
            id="threads-archived",
            tooltip="Show the archived threads instead of the others (A again goes back)",
        ),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.sort = "updated"
        self.archived = False  # True: the list shows the archived threads only
        self.filter_text = ""
        self.loaded = 0
        self.total = 0
        self.exhausted = False
        self.fetching = False
        self.generation = 0
        self.title_width = 30
        self._reselect: int | None = None
        self._reselect_row = 0  # where the cursor was: the row to land on when that thread is gone
        self._filter_timer: Timer | None = None

    def compose_body(self) -> list[Widget]:
        table: RowTable = RowTable(id="threads-table")
        return [
            Horizontal(
                Input(placeholder="Filter by title  (/)", id="threads-filter", compact=True),
                Static("reading…", id="threads-info", markup=False),
                classes="toolbar -compact",
            ),
            table,
            Static("", id="threads-empty", classes="empty-state", markup=False),
        ]

    @property
    def table(self) -> RowTable:
        return self.query_one("#threads-table", RowTable)

    # -- loading -------------------------------------------------------------------------------------

    def reload(self) -> None:
        """Start again from the first page (new filter, sort, width, or changed data)."""
        table = self.table
        if table.row_count and self._reselect is None:
            key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
            self._reselect = int(key) if key is not None else None
            self._reselect_row = table.cursor_row
        self.generation += 1
        self.loaded = 0
        self.exhausted = False
        self.title_width = max(16, self.size.width - FIXED_WIDTH if self.size.width else 30)
        self._load_page(first=True)

    def _load_page(self, *, first: bool = False) -> None:
        self.fetching = True
        generation, offset, text, sort = self.generation, self.loaded, self.filter_text, self.sort
        archived = self.archived
        store = self.store

        def fetch() -> tuple[int, list[Thread], int | None]:
            rows = store.list_threads(
                text=text or None, sort=sort, limit=PAGE, offset=offset, archived=archived
            )
            total = store.count_threads(text=text or None, archived=archived) if first else None
            return generation, rows, total

        self.in_thread(
            fetch, self._show_page, group="threads-page", exclusive=first, description="reading the threads"
        )

    def _show_page(self, result: tuple[int, list[Thread], int | None]) -> None:
        generation, rows, total = result
        if generation != self.generation:
            return
        table = self.table
        estimated = not self.store.tokens.exact
        if total is not None:
            self.total = total
            table.set_columns(self._columns())
        for t in rows:
            table.add_row(
                cell(t.title, self.title_width),
                cell(t.source, 9),
                Text(number(t.message_count), justify="right"),
                Text(number(t.token_count, estimated), justify="right"),
                Text(when(t.updated_at)),
                key=str(t.id),
            )
        self.loaded += len(rows)
        self.exhausted = len(rows) < PAGE
        self.fetching = False
        if total is not None and self._reselect is not None:
            self._move_to(self._reselect)
            self._reselect = None
        self._show_info()

    def _columns(self) -> list[Column]:
        """Every sortable column says so (issue 28.12: only the sorted one had an arrow, so nothing told a
        newcomer a header could be clicked): the sorted one ▲ (title, A→Z) or ▼ (largest/newest first),
        the others a dim ↕."""

        def label(name: str, key: str) -> Text:
            if SORT_BY_COLUMN[key] != self.sort:
                return Text.assemble(name, (" ↕", "dim"))
            return Text(f"{name} {'▲' if key == 'title' else '▼'}")

        return [
            (label("Title", "title"), "title", self.title_width),
            (label("Source", "source"), "source", 9),
            (label("Msgs", "messages"), "messages", 6),
            (label("Tokens", "tokens"), "tokens", 8),
            (label("Last active", "updated"), "updated", 16),
        ]

    def _move_to(self, thread_id: int) -> None:
        """Back on the thread the cursor was on; if it left the list (archived, deleted, filtered out),
        on the row it was at, so the next thread moves up under the cursor instead of the list jumping
        back to the top (issue 28.9)."""
        table = self.table
        try:
            table.move_cursor(row=table.get_row_index(str(thread_id)))
        except Exception:  # not in the first page any more
            table.move_cursor(row=min(self._reselect_row, max(0, table.row_count - 1)))

    def _show_info(self) -> None:
        label = dict(SORTS)[self.sort]
        kind = "archived thread" if self.archived else "thread"
        shown = f"{number(self.total)} {kind}{'s' if self.total != 1 else ''}"
        other = "A: the others" if self.archived else "A: archived"
        self.query_one("#threads-info", Static).update(f"{shown} · by {label} (o) · {other}")
        empty = self.query_one("#threads-empty", Static)
        if self.total:
            empty.display = False
            self.table.display = True
            return
        self.table.display = False
        empty.display = True
        if self.filter_text:
            empty.update(f"No thread title contains “{self.filter_text}”. Esc clears the filter.")
        elif self.archived:
            empty.update("No archived threads. a archives the highlighted thread; A goes back to the list.")
        else:
            empty.update(
                "No threads yet.\n\nPress 5 to import a chat export (ChatGPT, Claude, llm, Open WebUI, "
                "JSON),\nor open the command palette (ctrl+p) and choose “Load the demo data”."
            )

    @on(DataTable.RowHighlighted, "#threads-table")
    def _maybe_next_page(self, event: DataTable.RowHighlighted) -> None:
        if not self.exhausted and not self.fetching and event.cursor_row >= self.loaded - PREFETCH:
            self._load_page()

    def on_resize(self) -> None:
        width = max(16, self.size.width - FIXED_WIDTH)
        if self.loaded and width != self.title_width:
            self.reload()

    # -- actions -------------------------------------------------------------------------------------

    @on(DataTable.RowSelected, "#threads-table")
    async def action_open(self) -> None:
        table = self.table
        if not table.row_count:
            return
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        if key is not None:
            from app.tui.screens.thread_view import (
                ThreadViewScreen,  # Markdown and all: not for the first frame
            )

            await self.memapp.open_screen(ThreadViewScreen(int(key), nav=self.nav))

    def current_thread_id(self) -> int | None:
        table = self.table
        if not table.row_count or not table.display:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return int(key) if key is not None else None

    def action_rename(self) -> None:
        tid = self.current_thread_id()
        if tid is None:
            return
        store = self.store

        def ask(thread: Thread) -> None:
            def answered(title: str | None) -> None:
                if title is None or title.strip() == thread.title:
                    return
                self.in_thread(
                    lambda: store.rename_thread(tid, title),
                    renamed,
                    group="thread-write",
                    description="renaming",
                )

            self.app.push_screen(
                PromptScreen(f"Rename thread {tid}", "New title:", thread.title, ok="Rename"), answered
            )

        def renamed(thread: Thread) -> None:
            self._reselect = thread.id
            self.notify(f"Renamed to “{one_line(thread.title, 60)}”.", title="Threads", markup=False)
            self.memapp.data_changed()

        self.in_thread(lambda: store.get_thread(tid), ask, description="opening the thread")

    def action_archive(self) -> None:
        tid = self.current_thread_id()
        if tid is None:
            return
        store = self.store

        def toggle() -> Thread:
            return store.archive_thread(tid, store.get_thread(tid).archived_at is None)

        def done(thread: Thread) -> None:
            if thread.archived_at is not None:
                text = f"Archived “{one_line(thread.title, 50)}”: hidden from the list and search. A shows archived."
            else:
                text = f"Unarchived “{one_line(thread.title, 50)}”."
            self.notify(text, title="Threads", markup=False)
            self.memapp.data_changed()

        self.in_thread(toggle, done, group="thread-write", description="archiving the thread")

    def action_delete(self) -> None:
        tid = self.current_thread_id()
        if tid is None:
            return
        store = self.store

        def ask(thread: Thread) -> None:
            def answered(yes: bool | None) -> None:
                if yes:
                    self.in_thread(
                        lambda: store.delete_thread(tid),
                        lambda _: deleted(thread),
                        group="thread-write",
                        description="deleting the thread",
                    )

            self.app.push_screen(
                ConfirmScreen(
                    "Delete thread for good?",
                    f"“{one_line(thread.title, 200)}” ({thread.message_count} messages), its summary and its "
                    "search index will be deleted. Only importing its export again brings it back.\n\n"
                    "To hide it instead (undoable), press n and then a to archive it.",
                    yes="Delete",
                    danger=True,
                ),
                answered,
            )

        def deleted(thread: Thread) -> None:
            self.notify(
                f"Deleted “{one_line(thread.title, 60)}” ({thread.message_count} messages).",
                title="Threads",
                markup=False,
            )
            self.memapp.data_changed()

        self.in_thread(lambda: store.get_thread(tid), ask, description="opening the thread")

    def action_show_archived(self) -> None:
        self.archived = not self.archived
        self._reselect = None
        self.reload()

    def action_filter(self) -> None:
        self.query_one("#threads-filter", Input).focus()

    def action_clear_filter(self) -> None:
        filter_input = self.query_one("#threads-filter", Input)
        if filter_input.value:
            filter_input.value = ""
        self.table.focus()

    def action_sort(self) -> None:
        keys = [k for k, _ in SORTS]
        self.sort = keys[(keys.index(self.sort) + 1) % len(keys)]
        self.reload()

    def action_reload(self) -> None:
        self.reload()

    @on(DataTable.HeaderSelected, "#threads-table")
    def _sort_by_header(self, event: DataTable.HeaderSelected) -> None:
        sort = SORT_BY_COLUMN.get(str(event.column_key.value))
        if sort and sort != self.sort:
            self.sort = sort
            self.reload()

    @on(Input.Changed, "#threads-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        text = event.value.strip()
        if text == self.filter_text:
            return
        self.filter_text = text
        self._reselect = None
        if self._filter_timer is not None:
            self._filter_timer.stop()
        self._filter_timer = self.set_timer(DEBOUNCE, self.reload)

    @on(Input.Submitted, "#threads-filter")
    def _filter_done(self) -> None:
        self.table.focus()
