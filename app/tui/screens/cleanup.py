"""Cleanup: memories nobody uses, with the reason each is a candidate; apply (after a confirm) moves them
to the trash in one transaction, and `u` brings the whole batch back. The Trash tab restores a memory,
or purges for good what has been there longer than the retention (pinned memories are never cleaned up
or purged).

The rules and the writes are store.cleanup's (`find_candidates`, `apply_cleanup`, `restore`), the same
as `memapp cleanup` and `memapp trash`: the UI only shows them and asks before acting.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on
from textual.binding import Binding, BindingType
from textual.widget import Widget
from textual.widgets import DataTable, Static, TabbedContent, TabPane

from app.text import cell, literal, number, one_line, plural, when
from app.tui.screens.base import MemappScreen
from app.tui.screens.confirm import ConfirmScreen
from app.tui.widgets.row_table import RowTable
from store import Memory
from store.cleanup import Candidate, Thresholds, apply_cleanup, find_candidates, restore

TRASH_LIMIT = 1000
DAY = 86400.0
CANDIDATE_FIXED = 6 + 10 + 3 + 4 + 16 + 6 * 2 + 2
TRASH_FIXED = 6 + 10 + 16 + 16 + 5 * 2 + 2
TAB_ACTIONS = {
    "apply": "tab-candidates",
    "keep": "tab-candidates",
    "pin": "tab-candidates",
    "thresholds": "tab-candidates",
    "undo": "tab-candidates",
    "restore": "tab-trash",
    "purge_one": "tab-trash",
    "purge_old": "tab-trash",
}


class CleanupScreen(MemappScreen):
    """Candidates and trash, one tab each; the footer shows the keys of the tab in front."""

    NAV = "cleanup"
    TITLE = "Cleanup"
    AUTO_FOCUS = "#candidates-table"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "a",
            "apply",
            "Apply cleanup",
            id="cleanup-apply",
            tooltip="Move every candidate to the trash (asks first)",
        ),
        Binding(
            "u", "undo", "Undo", id="cleanup-undo", tooltip="Restore the memories the last cleanup moved"
        ),
        Binding(
            "r",
            "restore",
            "Restore",
            id="cleanup-restore",
            tooltip="Bring the highlighted memory back from the trash",
        ),
        Binding(
            "x",
            "purge_one",
            "Purge",
            id="cleanup-purge-one",
            tooltip="Delete the highlighted trashed memory for good (asks first)",
        ),
        Binding(
            "X",
            "purge_old",
            "Purge old",
            id="cleanup-purge-old",
            tooltip="Delete for good what has been in the trash longer than the retention (asks first)",
        ),
        Binding(
            "t", "switch_tab", "Candidates/Trash", id="cleanup-tab", tooltip="Switch between the two tabs"
        ),
        Binding(
            "k",
            "keep",
            "Keep",
            id="cleanup-keep",
            tooltip="Keep the highlighted candidate: raise its importance to the threshold (no longer a candidate)",
        ),
        Binding(
            "p",
            "pin",
            "Pin",
            id="cleanup-pin",
            tooltip="Pin the highlighted candidate (pinned memories are never cleaned up)",
        ),
        Binding(
            "T",
            "thresholds",
            "Thresholds",
            id="cleanup-thresholds",
            tooltip="Change what counts as unused (importance, uses, days) for this session",
        ),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.candidates: list[Candidate] = []
        self.trash: list[Memory] = []
        self.last_cleanup: list[int] = []
        self.thresholds: Thresholds | None = None  # None: config.toml's [cleanup]

    def compose_body(self) -> list[Widget]:
        candidates: RowTable = RowTable(id="candidates-table")
        trash: RowTable = RowTable(id="trash-table")
        tabs = TabbedContent(id="cleanup-tabs")
        tabs.compose_add_child(
            TabPane(
                "Candidates",
                Static("", id="candidates-note", classes="cleanup-note", markup=False),
                candidates,
                Static("", id="candidate-detail", classes="cleanup-detail", markup=False),
                id="tab-candidates",
            )
        )
        tabs.compose_add_child(
            TabPane(
                "Trash",
                Static("", id="trash-note", classes="cleanup-note", markup=False),
                trash,
                id="tab-trash",
            )
        )
        return [tabs]

    @property
    def tab(self) -> str:
        return self.query_one("#cleanup-tabs", TabbedContent).active

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        wanted = TAB_ACTIONS.get(action)
        return wanted is None or wanted == self.tab

    @on(TabbedContent.TabActivated, "#cleanup-tabs")
    def _tab_changed(self) -> None:
        self.refresh_bindings()
        table_id = "#candidates-table" if self.tab == "tab-candidates" else "#trash-table"
        self.query_one(table_id, DataTable).focus()

    def action_switch_tab(self) -> None:
        tabs = self.query_one("#cleanup-tabs", TabbedContent)
        tabs.active = "tab-trash" if tabs.active == "tab-candidates" else "tab-candidates"

    # -- loading -------------------------------------------------------------------------------------

    def reload(self) -> None:
        store = self.store

        thresholds = self.active_thresholds()

        def fetch() -> tuple[list[Candidate], list[Memory]]:
            return find_candidates(store, thresholds), store.list_memories(trash=True, limit=TRASH_LIMIT)

        self.in_thread(
            fetch, self._show, group="cleanup-read", exclusive=True, description="finding candidates"
        )

    def _show(self, result: tuple[list[Candidate], list[Memory]]) -> None:
        self.candidates, self.trash = result
        self._show_candidates()
        self._show_trash()

    def active_thresholds(self) -> Thresholds:
        return self.thresholds or Thresholds.from_config(self.store.config.cleanup)

    def _show_candidates(self) -> None:
        t = self.active_thresholds()
        table = self.query_one("#candidates-table", RowTable)
        width = max(20, self.size.width - CANDIDATE_FIXED)
        columns = [
            ("Id", "id", 6),
            ("Category", "category", 10),
            ("Imp", "importance", 3),
            ("Used", "used", 4),
            ("Last activity", "last", 16),
            ("Memory", "content", width),
        ]
        table.refill(
            columns, ((str(c.memory.id), self._candidate_cells(c.memory, width)) for c in self.candidates)
        )
        rule = (
            f"Candidates: not pinned, importance below {t.max_importance}, used fewer than {t.min_access} "
            f"times, untouched for over {t.older_than_days:g} days{'' if self.thresholds is None else ' (set here)'}"
            " (T changes this)."
        )
        self.query_one("#candidates-note", Static).update(
            f"{rule} {len(self.candidates)} now; a moves them to the trash, k keeps one, p pins one."
            if self.candidates
            else f"{rule} Nothing to clean up now."
        )
        self._detail(table.cursor_row)

    @staticmethod
    def _candidate_cells(m: Memory, width: int) -> list[Text]:
        return [
            Text(str(m.id), justify="right"),
            cell(m.category, 10),
            Text(str(m.importance), justify="right"),
            Text(number(m.access_count), justify="right"),
            Text(when(m.last_accessed if m.last_accessed is not None else m.created_at)),
            cell(m.content, width),
        ]

    @staticmethod
    def _trash_cells(m: Memory, width: int, days: float) -> list[Text]:
        purge = "never (pinned)" if m.pinned else when((m.deleted_at or 0) + days * DAY)
        return [
            Text(str(m.id), justify="right"),
            cell(m.category, 10),
            Text(when(m.deleted_at)),
            Text(purge),
            cell(m.content, width),
        ]

    @on(DataTable.RowHighlighted, "#candidates-table")
    def _candidate_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._detail(event.cursor_row)

    def _detail(self, row: int) -> None:
        detail = self.query_one("#candidate-detail", Static)
        detail.display = bool(self.candidates)
        if self.candidates and row < len(self.candidates):
            c = self.candidates[row]
            detail.update(
                Text.assemble(
                    ("Why: ", "bold"), literal(c.reason), "\n", literal(one_line(c.memory.content, 400))
                )
            )

    def _show_trash(self) -> None:
        days = self.store.config.cleanup.trash_retention_days
        table = self.query_one("#trash-table", RowTable)
        width = max(20, self.size.width - TRASH_FIXED)
        columns = [
            ("Id", "id", 6),
            ("Category", "category", 10),
            ("Deleted", "deleted", 16),
            ("Purge after", "purge", 16),
            ("Memory", "content", width),
        ]
        table.refill(columns, ((str(m.id), self._trash_cells(m, width, days)) for m in self.trash))
        more = f" (the newest {TRASH_LIMIT})" if len(self.trash) >= TRASH_LIMIT else ""
        self.query_one("#trash-note", Static).update(
            f"{len(self.trash)} in the trash{more}. r restores; x purges one now; X purges what has been here "
            f"over {days} days."
            if self.trash
            else "The trash is empty."
        )

    # -- candidates ----------------------------------------------------------------------------------

    def action_apply(self) -> None:
        n = len(self.candidates)
        if not n:
            self.notify("Nothing to clean up.", markup=False)
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self._apply(n)

        self.app.push_screen(
            ConfirmScreen(
                "Apply cleanup?",
                f"Move {n} unused memor{'y' if n == 1 else 'ies'} to the trash? Nothing is deleted: "
                "u (or the Trash tab) brings them back.",
                yes="Move to trash",
            ),
            answered,
        )

    def _apply(self, previewed: int) -> None:
        store = self.store

        def done(moved: list[Candidate]) -> None:
            self.last_cleanup = [c.memory.id for c in moved]
            extra = (
                "" if len(moved) == previewed else f" ({previewed} were shown; the list changed meanwhile)"
            )
            self.notify(
                f"Moved {plural(len(moved), 'memory', 'memories')} to the trash{extra}. Press u to undo.",
                title="Cleanup",
                markup=False,
            )
            self.memapp.data_changed()

        thresholds = self.active_thresholds()
        self.in_thread(
            lambda: apply_cleanup(store, thresholds),
            done,
            group="cleanup-write",
            description="applying cleanup",
        )

    def _candidate(self) -> Candidate | None:
        table = self.query_one("#candidates-table", DataTable)
        if not self.candidates or table.cursor_row >= len(self.candidates):
            return None
        return self.candidates[table.cursor_row]

    def action_keep(self) -> None:
        """Keep one candidate: its importance is raised to the threshold (a recorded history event), so
        under these thresholds it is no longer a candidate. Pinning (p) keeps it whatever they are."""
        c = self._candidate()
        if c is None:
            self.notify("No candidate to keep.", markup=False)
            return
        target = self.active_thresholds().max_importance
        if target > 10:
            self.notify(
                "With importance below 11 every memory is a candidate: pin it (p) instead.", markup=False
            )
            return
        store, m = self.store, c.memory

        def done(kept: Memory) -> None:
            self.notify(
                f"Kept memory {kept.id}: importance {m.importance} → {kept.importance}, so it is no longer a "
                "candidate.",
                title="Cleanup",
                markup=False,
            )
            self.memapp.data_changed()

        self.in_thread(
            lambda: store.raise_importance(m.id, target),
            done,
            group="cleanup-write",
            description="keeping the memory",
        )

    def action_pin(self) -> None:
        c = self._candidate()
        if c is None:
            self.notify("No candidate to pin.", markup=False)
            return
        store, mid = self.store, c.memory.id

        def done(m: Memory) -> None:
            self.notify(f"Pinned memory {m.id}: it is never cleaned up.", title="Cleanup", markup=False)
            self.memapp.data_changed()

        self.in_thread(
            lambda: store.pin_memory(mid, True), done, group="cleanup-write", description="pinning"
        )

    def action_thresholds(self) -> None:
        from app.tui.screens.thresholds import ThresholdsScreen

        def chosen(t: Thresholds | None) -> None:
            if t is None:
                return
            self.thresholds = t
            self.notify(
                f"Candidates now: importance below {t.max_importance}, used fewer than {t.min_access} times, "
                f"untouched for over {t.older_than_days:g} days.",
                title="Cleanup",
                markup=False,
            )
            self.reload()

        self.app.push_screen(ThresholdsScreen(self.active_thresholds()), chosen)

    def action_undo(self) -> None:
        ids, self.last_cleanup = self.last_cleanup, []
        if not ids:
            self.notify("No cleanup to undo.", markup=False)
            return
        store = self.store

        def done(result: tuple[list[Memory], list[int]]) -> None:
            self.notify(
                f"Restored {plural(len(result[0]), 'memory', 'memories')}.", title="Undo", markup=False
            )
            self.memapp.data_changed()

        self.in_thread(
            lambda: restore(store, ids), done, group="cleanup-write", description="undoing cleanup"
        )

    # -- trash ---------------------------------------------------------------------------------------

    def _trash_selected(self) -> Memory | None:
        table = self.query_one("#trash-table", DataTable)
        if not self.trash or table.cursor_row >= len(self.trash):
            return None
        return self.trash[table.cursor_row]

    @on(DataTable.RowSelected, "#trash-table")
    def action_restore(self) -> None:
        m = self._trash_selected()
        if m is None:
            return
        store = self.store

        def done(restored: Memory) -> None:
            self.notify(f"Memory {restored.id} restored.", title="Trash", markup=False)
            self.memapp.data_changed()

        self.in_thread(
            lambda: store.restore_memory(m.id),
            done,
            group="cleanup-write",
            description="restoring the memory",
        )

    def action_purge_one(self) -> None:
        m = self._trash_selected()
        if m is None:
            return
        if m.pinned:
            self.notify("A pinned memory is never purged: restore it and unpin it first.", markup=False)
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self._purge(ids=[m.id], older_than_days=0)

        self.app.push_screen(
            ConfirmScreen(
                "Purge for good?",
                f"Memory {m.id} will be deleted for good:\n\n  {one_line(m.content, 300)}",
                yes="Purge",
                danger=True,
            ),
            answered,
        )

    def action_purge_old(self) -> None:
        days = self.store.config.cleanup.trash_retention_days

        def answered(yes: bool | None) -> None:
            if yes:
                self._purge(ids=None, older_than_days=None)

        self.app.push_screen(
            ConfirmScreen(
                "Purge old trash?",
                f"Everything that has been in the trash for more than {days} days will be "
                "deleted for good (pinned memories are kept).",
                yes="Purge",
                danger=True,
            ),
            answered,
        )

    def _purge(self, *, ids: list[int] | None, older_than_days: float | None) -> None:
        store = self.store

        def done(purged: list[int]) -> None:
            self.notify(
                f"Purged {len(purged)} memor{'y' if len(purged) == 1 else 'ies'}.",
                title="Trash",
                markup=False,
            )
            self.memapp.data_changed()

        self.in_thread(
            lambda: store.purge_trash(older_than_days=older_than_days, ids=ids),
            done,
            group="cleanup-write",
            description="purging the trash",
        )
