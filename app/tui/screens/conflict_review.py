"""Review one conflict: two memories side by side, and the four answers (store.truth.conflicts).

Why a modal over the Memories screen and not a screen of its own: a conflict is about two memories the
user is already looking at (the Memories filter "conflicts" lists them); deciding is one key, and the list
behind shows the result at once. Texts are user data: shown with markup off.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from app.text import when

if TYPE_CHECKING:
    from store.truth import Conflict

LABELS = {
    "new": "Newer replaces older (n)",
    "both": "Keep both (b)",
    "merge": "Merge (m)",
    "edit": "Edit… (e)",
    "old": "Older only (o)",
}


class ConflictReviewScreen(ModalScreen[str | None]):
    """Dismisses with "new", "old", "both", "merge", "edit" (the caller opens the editor), or None (later)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "n",
            "keep('new')",
            "Newer replaces older",
            id="conflict-new",
            tooltip="The old memory is superseded",
        ),
        Binding(
            "o", "keep('old')", "Older only", id="conflict-old", tooltip="The new memory goes to the trash"
        ),
        Binding("b", "keep('both')", "Keep both", id="conflict-both", tooltip="Both stay current"),
        Binding(
            "m", "keep('merge')", "Merge", id="conflict-merge", tooltip="One memory, with the new wording"
        ),
        Binding(
            "e", "keep('edit')", "Edit", id="conflict-edit", tooltip="Write the one memory in your own words"
        ),
        Binding("escape", "later", "Later", id="conflict-later", tooltip="Decide later"),
    ]

    def __init__(self, conflict: Conflict) -> None:
        super().__init__()
        self.conflict = conflict

    def compose(self) -> ComposeResult:
        c = self.conflict
        with Vertical(id="conflict-box", classes="dialog"):
            yield Static(f"Conflict {c.id}: two memories to look at", classes="dialog-title", markup=False)
            yield Static(c.explanation, id="conflict-why", markup=False)
            yield Static(
                f"NEW · memory {c.new.id} · {c.new.category} · {when(c.new.created_at)}",
                classes="field-label",
                markup=False,
            )
            yield Static(c.new.content, id="conflict-new-text", markup=False)
            yield Static(
                f"OLD · memory {c.old.id} · {c.old.category} · {when(c.old.created_at)}",
                classes="field-label",
                markup=False,
            )
            yield Static(c.old.content, id="conflict-old-text", markup=False)
            # Two rows of compact buttons: all five fit on an 80-column terminal.
            for row, keeps in (
                ("conflict-buttons", ("new", "both", "merge")),
                ("conflict-buttons-2", ("edit", "old")),
            ):
                with Horizontal(id=row, classes="conflict-buttons"):
                    for keep in keeps:
                        yield Button(
                            LABELS[keep],
                            id=f"keep-{keep}",
                            variant="primary" if keep == c.suggested else "default",
                            compact=True,
                        )
            yield Static("Esc: decide later.", id="conflict-later", markup=False)

    def on_mount(self) -> None:
        self.query_one(f"#keep-{self.conflict.suggested}", Button).focus()

    def action_keep(self, keep: str) -> None:
        self.dismiss(keep)

    def action_later(self) -> None:
        self.dismiss(None)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        bid = event.button.id or ""
        self.dismiss(bid.removeprefix("keep-") if bid.startswith("keep-") else None)
