"""The memory editor (a modal) and the save flow every screen uses to add or change a memory.

Why the flow lives here and not in each screen: Memories, Search, the Welcome screen and the command
palette all open the same editor, and all must save the same way, through the store functions the CLI
uses (add_memory with its near-duplicate merge, edit_memory with its history and re-embedding), in a
worker (embedding can take a moment). A near-duplicate of a pinned or hand-edited memory is never
merged automatically: the user is asked whether to add theirs anyway, or goes back to editing with the
text they wrote still there.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from textual import on
from textual.app import App, ComposeResult, SuspendNotSupported
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.validation import Number
from textual.widgets import Button, Input, Label, Select, Static, Switch, TextArea

from app.text import one_line, when
from app.tui.host import host
from app.tui.screens.confirm import ConfirmScreen
from app.tui.widgets.on_off import OnOffSwitch
from app.tui.work import run_in_thread
from store import CATEGORIES, DuplicateMemoryError, Memory
from store.scratch import scratch_dir, write_private

if TYPE_CHECKING:
    from store import AddResult
    from store.truth import Source


@dataclass(frozen=True)
class MemoryDraft:
    """What the editor returns: the fields as the user left them (already validated)."""

    content: str
    category: str
    importance: int
    pinned: bool


class MemoryEditScreen(ModalScreen[MemoryDraft | None]):
    """Text area, category, importance 1-10 and pinned; Save checks the fields and says what is wrong."""

    TITLE = "Memory editor"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "save", "Save", id="memory-save", tooltip="Check the fields and save"),
        Binding("escape", "cancel", "Cancel", id="memory-cancel", tooltip="Close without saving"),
        Binding(
            "ctrl+o",
            "external_editor",
            "$EDITOR",
            id="memory-external",
            tooltip="Edit the text in your $EDITOR (or $VISUAL, else nano/vi); saving and quitting it brings "
            "the text back here",
        ),
        Binding(
            "ctrl+g",
            "open_source",
            "Go to source",
            id="memory-open-source",
            tooltip="Close the editor and open the message this memory came from",
        ),
    ]

    def __init__(
        self,
        memory: Memory | None = None,
        draft: MemoryDraft | None = None,
        *,
        source: Source | None = None,
        successor: Memory | None = None,
        title: str | None = None,
    ) -> None:
        super().__init__()
        self.title_text = title  # what the dialog is for, when it is not a plain new or edited memory
        self.memory = memory
        self.source = source
        self.successor = successor
        self.draft = draft or (
            MemoryDraft(memory.content, memory.category, memory.importance, memory.pinned)
            if memory
            else MemoryDraft("", "fact", 5, False)
        )

    def compose(self) -> ComposeResult:
        m = self.memory
        title = self.title_text or ("New memory" if m is None else f"Edit memory {m.id}")
        with Vertical(id="memory-box", classes="dialog"):
            yield Static(title, classes="dialog-title", markup=False)
            if m is not None:
                info = (
                    f"{m.origin}{', edited by hand' if m.user_edited else ''} · created {when(m.created_at)}"
                    f" · used {m.access_count}× · last {when(m.last_accessed)}"
                )
                yield Static(info, id="memory-info", markup=False)
                if self.source is not None:
                    hint = "  (ctrl+g opens it)" if self.source.thread_id is not None else ""
                    yield Static(f"Source: {self.source.describe()}{hint}", id="memory-source", markup=False)
                if m.valid_until is not None:
                    by = self.successor
                    text = (
                        f"memory {by.id}: {one_line(by.content, 80)}" if by is not None else "a newer memory"
                    )
                    yield Static(
                        f"Superseded {when(m.valid_until)} by {text}", id="memory-superseded", markup=False
                    )
            yield TextArea(self.draft.content, id="memory-text", soft_wrap=True, show_line_numbers=False)
            with Horizontal(id="memory-fields"):
                yield Label("Category", classes="field-label")
                yield Select(
                    [(c, c) for c in CATEGORIES],
                    value=self.draft.category,
                    allow_blank=False,
                    id="memory-category",
                )
                yield Label("Importance 1-10", classes="field-label")
                yield Input(
                    str(self.draft.importance),
                    id="memory-importance",
                    type="integer",
                    max_length=2,
                    validators=[Number(minimum=1, maximum=10, failure_description="must be 1-10")],
                )
            yield Static("", id="memory-errors", markup=False)
            with Horizontal(id="memory-bottom"):
                yield Label("Pinned", classes="field-label")
                yield OnOffSwitch(self.draft.pinned, switch_id="memory-pinned", on="yes", off="no")
                yield Static("", classes="spacer")
                # Short labels: the three fit beside the switch in an 80-column terminal (footer and help
                # spell the keys out).
                yield Button("Editor ^o", id="external", tooltip="Edit the text in $VISUAL / $EDITOR")
                yield Button("Save ^s", id="save", variant="primary")
                yield Button("Cancel esc", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#memory-text", TextArea).focus()

    def problems(self) -> list[str]:
        """What keeps the fields from being saved, in words for the person typing."""
        out = []
        if not self.query_one("#memory-text", TextArea).text.strip():
            out.append("Write the memory first: the text is empty.")
        importance = self.query_one("#memory-importance", Input)
        result = importance.validate(importance.value)
        if result is not None and not result.is_valid:
            out.append(f"Importance {', '.join(result.failure_descriptions)} (a whole number).")
        return out

    @on(Button.Pressed, "#save")
    def action_save(self) -> None:
        problems = self.problems()
        errors = self.query_one("#memory-errors", Static)
        errors.update("\n".join(problems))
        errors.set_class(bool(problems), "-visible")
        if problems:
            return
        category = self.query_one("#memory-category", Select).value
        self.dismiss(
            MemoryDraft(
                content=self.query_one("#memory-text", TextArea).text.strip(),
                category=str(category) if category in CATEGORIES else "fact",
                importance=int(self.query_one("#memory-importance", Input).value),
                pinned=self.query_one("#memory-pinned", Switch).value,
            )
        )

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)

    @on(Button.Pressed, "#external")
    def action_external_editor(self) -> None:
        """Suspend the app, edit the text in a temp file with $VISUAL/$EDITOR, put the result back."""
        area = self.query_one("#memory-text", TextArea)
        try:
            edited = edit_externally(self.app, area.text)
        except OSError as exc:
            self.notify(f"Could not run the editor: {exc}", title="$EDITOR", severity="error", markup=False)
            return
        if edited is None:
            self.notify("The editor exited with an error: the text was left as it was.", markup=False)
            return
        area.text = edited.rstrip("\n")
        area.focus()

    async def action_open_source(self) -> None:
        """Leave the editor (nothing saved) for the thread, scrolled to the source message."""
        src = self.source
        if src is None or src.thread_id is None:
            self.notify("This memory has no source thread.", markup=False)
            return
        app = host(self.app)  # the app opens the thread view (which imports editors itself: no circle)
        self.dismiss(None)
        await app.open_thread(src.thread_id, message_id=src.message_id, nav="memories")


def editor_command() -> list[str]:
    """$VISUAL, else $EDITOR (either may carry arguments, e.g. "code -w"), else nano or vi."""
    for name in ("VISUAL", "EDITOR"):
        value = os.environ.get(name, "").strip()
        if value:
            return shlex.split(value)
    return [shutil.which("nano") or "vi"]


def edit_externally(app: App[object], text: str) -> str | None:
    """Run the editor on a temp file holding `text`; the file's text afterwards, None if the editor failed.

    The app is suspended (the terminal handed to the editor) where the driver can do that; under a test
    driver, which cannot, the editor simply runs."""
    with scratch_dir("memapp-memory-") as folder:  # private, in memory where possible (store.scratch)
        path = folder / "memory.md"
        write_private(path, text.encode("utf-8"))
        command = [*editor_command(), str(path)]
        try:
            with app.suspend():
                code = subprocess.call(command)
        except SuspendNotSupported:
            code = subprocess.call(command, stdin=subprocess.DEVNULL)
        if code != 0:
            return None
        return path.read_text(encoding="utf-8")


def open_memory_editor(
    app: App[Any],
    memory: Memory | None,
    *,
    draft: MemoryDraft | None = None,
    on_saved: Callable[[Memory], None] | None = None,
    source: Source | None = None,
    successor: Memory | None = None,
) -> None:
    """Edit `memory` (or write a new one when None), then save it in a worker and tell the user."""

    def after(result: MemoryDraft | None) -> None:
        if result is None:
            return
        if memory is None:
            _add(app, result, force=False, on_saved=on_saved)
        else:
            _edit(app, memory, result, on_saved)

    app.push_screen(MemoryEditScreen(memory, draft, source=source, successor=successor), after)


def _add(
    app: App[Any], draft: MemoryDraft, *, force: bool, on_saved: Callable[[Memory], None] | None
) -> None:
    store = host(app).store

    def work() -> AddResult | DuplicateMemoryError:
        try:
            return store.add_memory(
                draft.content, draft.category, importance=draft.importance, pinned=draft.pinned, force=force
            )
        except DuplicateMemoryError as exc:
            return exc

    def done(result: AddResult | DuplicateMemoryError) -> None:
        if isinstance(result, DuplicateMemoryError):
            _ask_about_duplicate(app, draft, result, on_saved)
            return
        m = result.memory
        text = {
            "added": f"Memory {m.id} added.",
            "merged": f"Merged into memory {m.id} (nearly the same wording, similarity "
            f"{result.similarity or 0:.2f}); the newer wording is kept.",
            "exists": f"Already remembered as memory {m.id}.",
        }[result.action]
        if result.superseded:
            ids = ", ".join(str(i) for i in result.superseded)
            text += f" It supersedes memory {ids} (kept, shown struck through)."
        if result.conflicts:
            text += " It may contradict another memory: press r in Memories to review."
        app.notify(text, title="Memories", markup=False)
        host(app).data_changed()
        if on_saved is not None:
            on_saved(m)

    run_in_thread(app, work, done, group="memory-write", description="saving the memory")


def _ask_about_duplicate(
    app: App[Any], draft: MemoryDraft, exc: DuplicateMemoryError, on_saved: Callable[[Memory], None] | None
) -> None:
    try:
        existing = host(app).store.get_memory(exc.existing_id)
        quoted = one_line(existing.content, 300)
        why = "pinned" if existing.pinned else "edited by hand"
    except Exception:  # it was deleted meanwhile: the question still stands
        quoted, why = "(no longer available)", "protected"
    message = (
        f"This is nearly the same as memory {exc.existing_id} ({why}, similarity {exc.similarity:.2f}):\n\n"
        f"  {quoted}\n\nA {why} memory is never merged automatically. Add yours as a separate "
        "memory anyway, or go back and edit it?"
    )

    def answered(add_anyway: bool | None) -> None:
        if add_anyway:
            _add(app, draft, force=True, on_saved=on_saved)
        else:
            open_memory_editor(app, None, draft=draft, on_saved=on_saved)

    app.push_screen(
        ConfirmScreen("Merge refused: near-duplicate", message, yes="Add anyway", no="Back to editing"),
        answered,
    )


def _edit(
    app: App[Any], memory: Memory, draft: MemoryDraft, on_saved: Callable[[Memory], None] | None
) -> None:
    store = host(app).store

    def work() -> Memory:
        # Only what was changed in the editor: a field another process changed while it was open (a CLI
        # edit, an MCP update) keeps that change instead of being written back with its old value.
        return store.edit_memory(
            memory.id,
            content=draft.content if draft.content != memory.content else None,
            category=draft.category if draft.category != memory.category else None,
            importance=draft.importance if draft.importance != memory.importance else None,
            pinned=draft.pinned if draft.pinned != memory.pinned else None,
        )

    def done(m: Memory) -> None:
        app.notify(f"Memory {m.id} saved.", title="Memories", markup=False)
        host(app).data_changed()
        if on_saved is not None:
            on_saved(m)

    run_in_thread(app, work, done, group="memory-write", description="saving the memory")


__all__ = ["MemoryDraft", "MemoryEditScreen", "open_memory_editor"]
