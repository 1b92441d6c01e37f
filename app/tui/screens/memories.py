"""Memories: the curated long-term memories, pinned first, filterable by category and text, editable.

This module is what the keys do (new, edit, pin, importance, delete and undo, copy, source thread,
review a conflict); the paged, filtered table they act on is MemoryListScreen (memory_list.py), the
base class, so the two halves change apart and each reads in a page.

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

from textual import on
from textual.binding import Binding, BindingType
from textual.widgets import DataTable

from app.tui.screens.conflict_review import ConflictReviewScreen
from app.tui.screens.memory_edit import open_memory_editor
from app.tui.screens.memory_list import MemoryListScreen
from app.tui.widgets.memory_detail import MemoryDetail

if TYPE_CHECKING:
    from store import Memory
    from store.truth import Conflict, Source


IMPORTANCE = Binding.Group("Importance")


class MemoriesScreen(MemoryListScreen):
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
        # One footer entry ("+/- Importance": the minus key is not shown on its own) and, by the group,
        # one row in the help for both keys.
        Binding(
            "plus,equals_sign",
            "importance(1)",
            "Importance",
            key_display="+/-",
            id="memories-more",
            tooltip="Raise (+) or lower (-) the importance by one",
            group=IMPORTANCE,
        ),
        Binding(
            "minus",
            "importance(-1)",
            "Less important",
            show=False,
            id="memories-less",
            tooltip="Raise (+) or lower (-) the importance by one",
            group=IMPORTANCE,
        ),
        Binding("d,delete", "delete", "Delete", id="memories-delete", tooltip="Move to the trash (u undoes)"),
        Binding("u", "undo", "Undo", id="memories-undo", tooltip="Bring back the memory you deleted last"),
        Binding(
            "slash", "filter", "Filter", show=False, id="memories-filter", tooltip="Filter memories by text"
        ),
        Binding(  # the footer leaves it out at 80 columns: the toolbar's selector shows the category
            "c",
            "category",
            "Category",
            show=False,
            id="memories-category",
            tooltip="Cycle the category shown: all, preference, project, skill, fact",
        ),
        Binding(  # ... and this one's selector what is shown
            "f",
            "state",
            "Show",
            show=False,
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
        self.deleted: list[int] = []  # memories deleted here, newest last: what u brings back

    # -- edits ---------------------------------------------------------------------------------------

    def _saved(self, memory: Memory) -> None:
        self._reselect = memory.id

    def action_new(self) -> None:
        open_memory_editor(self.app, None, on_saved=self._saved)

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
            open_memory_editor(self.app, m, on_saved=self._saved, source=source, successor=successor)

        self.in_thread(fetch, show, description="opening the memory")

    # -- conflicts -----------------------------------------------------------------------------------

    def action_review(self) -> None:
        """Review the highlighted memory's conflict, or else the oldest open one."""
        mid = self.current_id()
        store = self.store

        def find() -> Conflict | None:
            from store.truth import get_conflict, list_conflicts, open_conflict_ids

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

    def _resolve(self, conflict: Conflict, keep: str | None, content: str | None = None) -> None:
        if keep is None:
            return
        if keep == "edit":  # the one memory, in the user's words: a merge with the edited text
            from app.tui.screens.memory_edit import MemoryDraft, MemoryEditScreen

            n, o = conflict.new, conflict.old
            draft = MemoryDraft(n.content, o.category, max(n.importance, o.importance), n.pinned or o.pinned)

            def edited(d: MemoryDraft | None) -> None:
                if d is not None:
                    self._resolve(conflict, "merge", d.content)

            title = f"Merge memories {o.id} and {n.id} in your own words"
            self.app.push_screen(MemoryEditScreen(None, draft, title=title), edited)
            return
        store = self.store
        from store.truth import OPTION_WORDS, resolve_conflict

        def done(c: Conflict) -> None:
            self._reselect = c.new_id if keep in ("new", "both") else c.old_id
            self.notify(f"Conflict {c.id}: {OPTION_WORDS[keep]}.", title="Conflicts", markup=False)
            self.memapp.data_changed()

        self.in_thread(
            lambda: resolve_conflict(store, conflict.id, keep, content=content),
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
        self._write(self.store.toggle_pin)

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
            # Ten seconds, not Textual's five: it says what to press, and the reader may be slower than that.
            self.notify(
                f"Memory {m.id} moved to the trash. Press u to undo.",
                title="Deleted",
                markup=False,
                timeout=10,
            )
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

    async def action_source(self) -> None:
        facts = self.query_one(MemoryDetail).facts
        if facts is None or facts.memory.source_thread_id is None:
            self.notify("This memory was not taken from a thread.", markup=False)
            return
        if facts.source_title is None:
            self.notify("The thread it came from has been deleted.", markup=False)
            return
        from app.tui.screens.thread_view import ThreadViewScreen

        m = facts.memory  # at the message it came from, when known (store.truth provenance)
        await self.memapp.open_screen(
            ThreadViewScreen(facts.memory.source_thread_id, message_id=m.source_message_id, nav=self.nav)
        )
