"""Search: one box, results as you type, over memories, messages and summaries together.

How it stays fast and honest:
- Typing restarts a 200 ms timer; when it fires, an exclusive thread worker in the "search" group runs
  the query, so a newer keystroke cancels the stale search and a late result for an old query is
  dropped (it is checked against the box before it is shown).
- While the embedding model is still loading, searches are keyword-only (they never wait for the
  model) and the notice line says semantic search is warming up; once the model is ready the current
  query runs again, hybrid.
- Access counts mean use (cleanup runs on them): a memory counts once when it is opened from the results,
  and the memories among the top `TOP_ROWS` rows count when the user settles on a query by pressing
  Enter in the box. Results that merely appeared while typing, however long they stay, never count.
- Weak results (below the answer floor, store.search.answer) are listed after the results, marked "weak"
  and dimmed, and never counted by settling on the query (opening one is use, and counts).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import on, work
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.message import Message
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import DataTable, Input, Select, Static
from textual.worker import get_current_worker

from app.cli.common import UsageError
from app.cli.search import parse_date
from app.text import cell, literal
from app.tui.screens.base import MemappScreen
from app.tui.screens.memory_edit import open_memory_editor
from app.tui.screens.thread_view import ThreadViewScreen
from app.tui.widgets.result_cells import highlighted, match_cell, result_kind, snippet_cell
from app.tui.widgets.row_table import RowTable
from app.tui.widgets.status_line import AppStatus
from store import CATEGORIES, ROLES, StoreError
from store.search import SCOPES, Filters, SearchResponse, SearchResult

if TYPE_CHECKING:
    from store import Memory
    from store.truth import Source

DEBOUNCE = 0.2
TOP_ROWS = 3  # rows that count as used when the user settles on a query (Enter)
RESULTS = 50
FIXED_WIDTH = 9 + 5 + 7 + 18 + 5 * 2 + 2  # kind, score, match, where, cell padding, scrollbar
ANY = "any"


@dataclass(frozen=True)
class Found:
    """A finished search."""

    query: str
    scope: str
    response: SearchResponse
    keyword_only: bool
    filters: Filters = Filters()


class SearchScreen(MemappScreen):
    """Type to search; Enter on a result opens the thread at that message, or the memory editor."""

    NAV = "search"
    TITLE = "Search"
    AUTO_FOCUS = "#search-input"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "enter",
            "open",
            "Open",
            id="search-open",
            tooltip="Open the highlighted result (the thread at that message, or the memory)",
        ),
        Binding("slash", "focus_input", "Search box", id="search-box", tooltip="Back to the search box"),
        Binding(
            "escape",
            "leave_box",
            "Leave box",
            id="search-toggle",
            tooltip="Leave the text box for the results (/ goes back to the box)",
        ),
        Binding(
            "ctrl+o",
            "scope",
            "Scope",
            id="search-scope",
            tooltip="Cycle what is searched: everything, memories, messages, summaries",
        ),
        Binding(
            "ctrl+l",
            "filters",
            "Filters",
            id="search-filters",
            tooltip="Show the filters (role, category, source, from/to date) and go to them; again hides them",
        ),
        Binding(
            "y",
            "copy",
            "Copy",
            show=False,
            id="search-copy",
            tooltip="Copy the highlighted result's full text to the clipboard",
        ),
    ]

    class Finished(Message):
        """A search worker finished (posted from its thread; shown only if the box still matches)."""

        def __init__(self, found: Found) -> None:
            super().__init__()
            self.found = found

    def __init__(self) -> None:
        super().__init__()
        self.results: list[SearchResult] = []
        self.shown_query = ""
        self.shown_keyword_only = False
        self.where_width = 18
        self._found: Found | None = None
        self._timer: Timer | None = None
        self._touched_keys: set[tuple[str, int]] = set()
        self._submit_pending = False
        self._open_pending = False
        self._typing = False

    def compose_body(self) -> list[Widget]:
        table: RowTable = RowTable(id="search-results")
        return [
            Horizontal(
                Input(placeholder="Search memories, messages and summaries…", id="search-input"),
                Select([(s, s) for s in SCOPES], value="all", allow_blank=False, id="search-scope"),
                classes="toolbar",
            ),
            Horizontal(
                Select(
                    [("any role", ANY), *[(r, r) for r in ROLES]],
                    value=ANY,
                    allow_blank=False,
                    id="search-role",
                    compact=True,
                ),
                Select(
                    [("any category", ANY), *[(c, c) for c in CATEGORIES]],
                    value=ANY,
                    allow_blank=False,
                    id="search-category",
                    compact=True,
                ),
                Select([("any source", ANY)], value=ANY, allow_blank=False, id="search-source", compact=True),
                Input(
                    placeholder="from date",
                    id="search-since",
                    compact=True,
                    max_length=25,
                    tooltip="YYYY-MM-DD or an ISO date-time (UTC): created on or after",
                ),
                Input(
                    placeholder="to date",
                    id="search-until",
                    compact=True,
                    max_length=25,
                    tooltip="YYYY-MM-DD (that day included) or an ISO date-time (UTC)",
                ),
                id="search-filter-bar",
                classes="toolbar -compact",
            ),
            Static(
                "Type to search. Keyword and meaning (semantic) matches are combined.",
                id="search-notice",
                markup=False,
            ),
            table,
            Static("", id="search-preview", markup=False),
        ]

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one("#search-filter-bar").display = False
        self.watch(self.app, "status", self._status_changed, init=False)

    @property
    def query_text(self) -> str:
        return self.query_one("#search-input", Input).value.strip()

    @property
    def scope(self) -> str:
        return str(self.query_one("#search-scope", Select).value)

    def filters(self) -> Filters:
        """The filter bar as search Filters; a date that does not parse raises UsageError (shown)."""
        role = str(self.query_one("#search-role", Select).value)
        category = str(self.query_one("#search-category", Select).value)
        source = str(self.query_one("#search-source", Select).value)
        since = self.query_one("#search-since", Input).value.strip()
        until = self.query_one("#search-until", Input).value.strip()
        return Filters(
            role=None if role == ANY else role,
            category=None if category == ANY else category,
            source=None if source == ANY else source,
            since=parse_date(since) if since else None,
            until=parse_date(until, end=True) if until else None,
        )

    # -- running searches ----------------------------------------------------------------------------

    def reload(self) -> None:
        if self.query_text:
            self.start_search()

    @on(Input.Changed, "#search-input")
    def _typed(self) -> None:
        self._typing = True
        self._open_pending = False  # typed on after Enter Enter: that search is not the one to open
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_timer(DEBOUNCE, self.start_search)

    @on(Select.Changed, "#search-scope")
    @on(Select.Changed, "#search-role")
    @on(Select.Changed, "#search-category")
    @on(Select.Changed, "#search-source")
    @on(Input.Submitted, "#search-since")
    @on(Input.Submitted, "#search-until")
    def _scope_changed(self) -> None:
        self.start_search()

    def _status_changed(self, status: AppStatus) -> None:
        if status.semantic != "loading" and self.results and self.shown_keyword_only:
            self.start_search()  # the model is in: the same query again, now hybrid

    def start_search(self) -> None:
        self._typing = False
        if self._timer is not None:
            self._timer.stop()
        query = self.query_text
        try:
            filters = self.filters()
            filters.kinds(self.scope)  # filters no result kind can match together: say so
        except StoreError as exc:
            self.query_one("#search-notice", Static).update(literal(str(exc)))
            return
        except UsageError as exc:
            self.query_one("#search-notice", Static).update(literal(f"{exc}"))
            return
        if not query:
            self.workers.cancel_group(self, "search")
            self._show(Found("", self.scope, SearchResponse("", "keyword", []), False, filters))
            return
        self.run_search(query, self.scope, filters, self.memapp.status.semantic == "loading")

    @work(thread=True, exclusive=True, group="search", exit_on_error=False, description="searching")
    def run_search(self, query: str, scope: str, filters: Filters, keyword_only: bool) -> None:
        """The search itself, off the UI thread; access counting is left to the screen (touch=False).
        Results carry their thread's title (joined in the search), so nothing is looked up per row."""
        response = self.store.search(
            query,
            scope=scope,
            k=RESULTS,
            filters=filters,
            keyword_only=keyword_only,
            touch=False,
            prefix=True,
            weak=True,
        )
        if not get_current_worker().is_cancelled:
            self.post_message(self.Finished(Found(query, scope, response, keyword_only, filters)))

    def on_search_screen_finished(self, message: SearchScreen.Finished) -> None:
        found = message.found
        try:
            filters = self.filters()
        except UsageError:
            return
        if found.query != self.query_text or found.scope != self.scope or found.filters != filters:
            return  # typed on since: a newer search is coming
        self._show(found)

    # -- showing results ---------------------------------------------------------------------------------

    def on_resize(self) -> None:
        if self._found is not None and self._found.query:
            self._show(self._found)  # the snippet column follows the width

    def _show(self, found: Found) -> None:
        self._found = found
        same = found.query == self.shown_query and found.scope == self.scope and bool(self.results)
        keep = self._row_to_keep(found) if same else 0
        self.results = found.response.results + found.response.weak  # weak rows last, marked (match_cell)
        self.shown_query = found.query
        self.shown_keyword_only = found.keyword_only
        self.where_width = 18
        snippet_width = max(20, self.size.width - FIXED_WIDTH)
        table = self.table
        table.clear(columns=True)
        table.add_column("Kind", key="kind", width=9)
        table.add_column("Score", key="score", width=5)
        table.add_column("Match", key="match", width=7)
        table.add_column("Where", key="where", width=self.where_width)
        table.add_column("Snippet", key="snippet", width=snippet_width)
        for i, r in enumerate(self.results):
            table.add_row(
                cell(result_kind(r), 9),
                Text(f"{r.score:.2f}", justify="right"),
                match_cell(r),
                cell(self._where(r), self.where_width),
                highlighted(snippet_cell(r, snippet_width), found.query),
                key=str(i),
            )
        if self.results:
            table.move_cursor(row=min(keep, len(self.results) - 1))
        self._show_notice(found)
        self._preview(table.cursor_row)
        if self._submit_pending and found.query:
            self._submit_pending = False
            self._count_access()
            if self.results:
                table.focus()
                if self._open_pending:
                    self.call_later(self.action_open)
        self._open_pending = False

    def _row_to_keep(self, found: Found) -> int:
        """The row of the result the cursor is on, in `found` (the same query again: the model came in,
        or the data changed). By identity, not by row number: the hybrid search orders differently from
        the keyword-only one it replaces, and Enter must open the hit the user highlighted, not what
        moved into its row (issue 28.6: a thread summary there opened the thread at the top)."""
        row = self.table.cursor_row
        if not 0 <= row < len(self.results):
            return 0
        current = self.results[row]
        new = found.response.results + found.response.weak
        return next((i for i, r in enumerate(new) if (r.kind, r.id) == (current.kind, current.id)), row)

    @property
    def table(self) -> DataTable[Text]:
        return self.query_one("#search-results", DataTable)

    def _where(self, r: SearchResult) -> str:
        if r.kind == "memory":
            return r.category or ""
        return r.thread_title or ""

    def _show_notice(self, found: Found) -> None:
        notice = self.query_one("#search-notice", Static)
        if not found.query:
            notice.update("Type to search. Keyword and meaning (semantic) matches are combined.")
            return
        n, weak = len(found.response.results), len(found.response.weak)
        head = f"{n} result{'s' if n != 1 else ''}" if n else "Nothing found"
        if weak and not n:
            head = f"{weak} weak result{'s' if weak != 1 else ''}"
        if found.keyword_only:
            text = f"{head} · semantic search is warming up: keyword results for now"
        elif found.response.notice:
            text = f"{head} · {found.response.notice}"
        else:
            text = f"{head} · {found.response.mode}"
        notice.update(literal(text))

    @on(DataTable.RowHighlighted, "#search-results")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._preview(event.cursor_row)

    def _preview(self, row: int) -> None:
        preview = self.query_one("#search-preview", Static)
        if not self.results or row >= len(self.results):
            preview.update("")
            preview.display = False
            return
        r = self.results[row]
        preview.display = True
        why = "weak (below the floor)" if r.weak else "+".join(r.matched)
        head = Text(
            f"{result_kind(r)} · {literal(self._where(r))} · {why} {r.score:.2f}",
            style="bold",
            no_wrap=True,
            overflow="ellipsis",
        )
        preview.update(Text.assemble(head, "\n", highlighted(Text(literal(r.content)), self.shown_query)))

    def _count_access(self, ids: list[int] | None = None) -> None:
        """Count one access (once per memory per query) for `ids`, by default the memories among the top
        `TOP_ROWS` rows: the ones a user who settled on this query has in front of them."""
        if ids is None:
            ids = [r.id for r in self.results[:TOP_ROWS] if r.kind == "memory" and not r.weak]
        new = [i for i in ids if (self.shown_query, i) not in self._touched_keys]
        if not new:
            return
        self._touched_keys.update((self.shown_query, i) for i in new)
        store = self.store
        self.in_thread(lambda: store.touch_memories(new), group="touch", description="counting memory use")

    # -- actions -------------------------------------------------------------------------------------

    @on(Input.Submitted, "#search-input")
    def _submitted(self) -> None:
        """Enter in the box: search now (no debounce wait), count the top rows' memories, go to the results."""
        if self.shown_query == self.query_text and not self._typing:
            self._count_access()
            if self.results:
                self.table.focus()
            return
        if self._submit_pending:  # Enter again before the results came: open the first one then
            self._open_pending = True
            return
        self._submit_pending = True
        self.start_search()

    @on(DataTable.RowSelected, "#search-results")
    async def action_open(self) -> None:
        table = self.table
        if not self.results or table.cursor_row >= len(self.results):
            return
        r = self.results[table.cursor_row]
        if r.kind == "memory":
            self._count_access([r.id])
            store = self.store

            def fetch() -> tuple[Memory, Source, Memory | None]:
                m = store.get_memory(r.id)
                successor = store.get_memory(m.superseded_by) if m.superseded_by is not None else None
                return m, store.memory_source(m), successor

            self.in_thread(
                fetch,
                lambda found: open_memory_editor(self.app, found[0], source=found[1], successor=found[2]),
                description="opening the memory",
            )
        elif r.thread_id is not None:
            message_id = r.id if r.kind == "message" else None
            await self.memapp.open_screen(ThreadViewScreen(r.thread_id, message_id=message_id, nav=self.nav))

    def action_filters(self) -> None:
        bar = self.query_one("#search-filter-bar")
        if bar.display and any(w.has_focus for w in bar.query("*")):
            bar.display = False
            self.query_one("#search-input", Input).focus()
            return
        bar.display = True
        store = self.store
        self.in_thread(store.thread_sources, self._set_sources, description="reading the sources")
        self.query_one("#search-role", Select).focus()

    def _set_sources(self, sources: list[str]) -> None:
        select = self.query_one("#search-source", Select)
        current = select.value
        select.set_options([("any source", ANY), *[(s, s) for s in sources]])
        select.value = current if current in sources else ANY

    def action_copy(self) -> None:
        table = self.table
        if not self.results or table.cursor_row >= len(self.results):
            self.notify("No result to copy.", markup=False)
            return
        r = self.results[table.cursor_row]
        self.app.copy_to_clipboard(r.content)
        self.notify(f"Copied the {result_kind(r)} to the clipboard.", title="Copy", markup=False)

    def action_focus_input(self) -> None:
        self.query_one("#search-input", Input).focus()

    def action_leave_box(self) -> None:
        """Out of the box (or a filter): to the results, or with none, away from it so the digits switch
        screen.

        Only out, never back in (issue 28.8): it used to toggle, so a second Esc put the focus back in
        the search box and the next digit was typed into the query. `/` goes back to the box."""
        if self.focused is None or self.focused is self.table:
            return
        if self.results:
            self.table.focus()
        else:
            self.set_focus(None)

    def action_scope(self) -> None:
        select = self.query_one("#search-scope", Select)
        select.value = SCOPES[(SCOPES.index(self.scope) + 1) % len(SCOPES)]
