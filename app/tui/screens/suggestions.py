"""Memories suggested from one thread ("I prefer…", "I'm working on…", stated facts): accept, edit then
accept, or reject each. Nothing becomes a memory without the user's say-so.

The scan and the decisions are store.extract.suggestions' (`extract_suggestions`, `accept_suggestion`,
`reject_suggestion`), as in `memapp extract`. Accepting goes through `Store.add_memory`, so a suggestion
that nearly duplicates a pinned or hand-edited memory is refused the same way, and the user is asked.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from app.text import cell, literal, one_line
from app.tui.host import Host, host
from app.tui.screens.confirm import ConfirmScreen
from app.tui.screens.memory_edit import MemoryDraft, MemoryEditScreen
from app.tui.widgets.row_table import RowTable
from app.tui.work import run_in_thread
from store import DuplicateMemoryError
from store.extract import (
    AcceptResult,
    Suggestion,
    accept_suggestion,
    extract_suggestions,
    imported_suggestions,
    reject_suggestion,
)

FIXED = 10 + 3 + 12 + 4 * 2 + 2 + 8  # category, importance, action, padding, scrollbar, dialog border/padding


class SuggestionsScreen(ModalScreen[None]):
    """Pending suggestions of one thread; a accepts, e edits first, r rejects."""

    TITLE = "Suggested memories"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "accept", "Accept", id="suggest-accept", tooltip="Make the suggestion a memory"),
        Binding(
            "e",
            "edit",
            "Edit & accept",
            id="suggest-edit",
            tooltip="Change the text or category, then accept",
        ),
        Binding("r", "reject", "Reject", id="suggest-reject", tooltip="Never suggest this again"),
        Binding("escape", "close", "Close", id="suggest-close"),
    ]

    def __init__(self, thread_id: int | None, title: str) -> None:
        """`thread_id` None: the suggestions an import of a text list made (they belong to no thread)."""
        super().__init__()
        self.thread_id = thread_id
        self.thread_title = title
        self.pending: list[Suggestion] = []

    @property
    def memapp(self) -> Host:
        return host(self.app)

    def compose(self) -> ComposeResult:
        with Vertical(id="suggest-box", classes="dialog"):
            yield Static(
                Text(f"Suggested memories · {one_line(self.thread_title, 60)}"), classes="dialog-title"
            )
            yield Static(
                "Looking for preferences, projects, skills and facts…", id="suggest-note", markup=False
            )
            yield RowTable(id="suggest-table")
            yield Static("", id="suggest-detail", markup=False)

    def on_mount(self) -> None:
        self.reload()

    def reload(self) -> None:
        store, thread_id = self.memapp.store, self.thread_id
        run_in_thread(
            self,
            lambda: (
                imported_suggestions(store)
                if thread_id is None
                else extract_suggestions(store, thread_id).pending
            ),
            self._show,
            group="suggest-read",
            exclusive=True,
            description="finding suggested memories",
        )

    def _show(self, pending: list[Suggestion]) -> None:
        self.pending = pending
        table = self.query_one("#suggest-table", RowTable)
        width = max(20, self.size.width * 9 // 10 - FIXED)
        columns = [
            ("Category", "category", 10),
            ("Imp", "importance", 3),
            ("Suggestion", "content", width),
            ("On accept", "action", 12),
        ]
        rows = (
            (
                str(s.id),
                [
                    cell(s.category, 10),
                    Text(str(s.importance), justify="right"),
                    cell(s.content, width),
                    cell(f"merge into {s.merge_with}" if s.merge_with is not None else "add", 12),
                ],
            )
            for s in pending
        )
        table.refill(columns, rows)
        if pending:
            table.focus()
        self.query_one("#suggest-note", Static).update(
            f"{len(pending)} pending. a accepts, e edits first, r rejects (never suggested again)."
            if pending
            else "No pending suggestions in this thread."
            if self.thread_id is not None
            else "No pending suggestions from imported lists (memapp import LIST --format text)."
        )
        self._detail(table.cursor_row)

    def on_data_table_row_highlighted(self, event: RowTable.RowHighlighted) -> None:
        self._detail(event.cursor_row)

    def _detail(self, row: int) -> None:
        detail = self.query_one("#suggest-detail", Static)
        detail.display = bool(self.pending)
        if self.pending and row < len(self.pending):
            s = self.pending[row]
            merge = (
                f"\nAccepting merges it into memory {s.merge_with} (similarity {s.similarity or 0:.2f})."
                if s.merge_with is not None
                else ""
            )
            detail.update(Text(literal(s.content) + merge))

    def _selected(self) -> Suggestion | None:
        table = self.query_one("#suggest-table", RowTable)
        if not self.pending or table.cursor_row >= len(self.pending):
            return None
        return self.pending[table.cursor_row]

    # -- decisions -----------------------------------------------------------------------------------

    def action_accept(self) -> None:
        s = self._selected()
        if s is not None:
            self._accept(s, None, force=False)

    def action_edit(self) -> None:
        s = self._selected()
        if s is None:
            return

        def edited(draft: MemoryDraft | None) -> None:
            if draft is not None:
                self._accept(s, draft, force=False)

        self.app.push_screen(
            MemoryEditScreen(None, MemoryDraft(s.content, s.category, s.importance, False)), edited
        )

    def _accept(self, s: Suggestion, draft: MemoryDraft | None, *, force: bool) -> None:
        store = self.memapp.store

        def work() -> AcceptResult | DuplicateMemoryError:
            try:
                if draft is None:
                    return accept_suggestion(store, s.id, force=force)
                res = accept_suggestion(
                    store,
                    s.id,
                    content=draft.content,
                    category=draft.category,
                    importance=draft.importance,
                    force=force,
                )
                if draft.pinned:
                    store.pin_memory(res.memory.id)
                return res
            except DuplicateMemoryError as exc:
                return exc

        def done(result: AcceptResult | DuplicateMemoryError) -> None:
            if isinstance(result, DuplicateMemoryError):
                self._ask(s, draft, result)
                return
            verb = {"added": "added as", "merged": "merged into", "exists": "already stored as"}[
                result.action
            ]
            self.notify(f"Suggestion {verb} memory {result.memory.id}.", title="Memories", markup=False)
            self.memapp.data_changed()
            self.reload()

        run_in_thread(self, work, done, group="suggest-write", description="accepting the suggestion")

    def _ask(self, s: Suggestion, draft: MemoryDraft | None, exc: DuplicateMemoryError) -> None:
        def answered(yes: bool | None) -> None:
            if yes:
                self._accept(s, draft, force=True)

        self.app.push_screen(
            ConfirmScreen(
                "Merge refused: near-duplicate",
                f"This nearly duplicates memory {exc.existing_id} (similarity {exc.similarity:.2f}), which is pinned or "
                "was edited by hand, so it is never merged automatically.\n\nAdd the suggestion as a separate memory "
                "anyway?",
                yes="Add anyway",
                no="Leave it pending",
            ),
            answered,
        )

    def action_reject(self) -> None:
        s = self._selected()
        if s is None:
            return
        store = self.memapp.store

        def done(_rejected: Suggestion) -> None:
            self.notify("Rejected; it will not be suggested again.", title="Suggestions", markup=False)
            self.reload()

        run_in_thread(
            self,
            lambda: reject_suggestion(store, s.id),
            done,
            group="suggest-write",
            description="rejecting the suggestion",
        )

    def action_close(self) -> None:
        self.dismiss(None)
