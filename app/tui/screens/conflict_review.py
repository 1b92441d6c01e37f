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
    from store.truth.conflicts import Conflict

LABELS = {
    "new": "Keep new (n)",
    "old": "Keep old (o)",
    "both": "Both true (b)",
    "merge": "Merge (m)",
}
EXPLAIN = {
    "reversal": "The new memory seems to reverse the old one.",
    "update": "The new memory seems to update a value in the old one.",
    "paraphrase": "The two seem to say the same thing.",
    "unsure": "These two are close, and something differs between them.",
}


class ConflictReviewScreen(ModalScreen[str | None]):
    """Dismisses with "new", "old", "both", "merge", or None (decide later)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("n", "keep('new')", "Keep new", id="conflict-new", tooltip="The old memory is superseded"),
        Binding(
            "o", "keep('old')", "Keep old", id="conflict-old", tooltip="The new memory goes to the trash"
        ),
        Binding("b", "keep('both')", "Both true", id="conflict-both", tooltip="Both stay current"),
        Binding(
            "m", "keep('merge')", "Merge", id="conflict-merge", tooltip="One memory, with the new wording"
        ),
        Binding("escape", "later", "Later", id="conflict-later", tooltip="Decide later"),
    ]

    def __init__(self, conflict: Conflict) -> None:
        super().__init__()
        self.conflict = conflict

    def compose(self) -> ComposeResult:
        c = self.conflict
        reasons = ", ".join(c.reasons) or "close in meaning"
        sim = "" if c.similarity is None else f" · similarity {c.similarity:.2f}"
        with Vertical(id="conflict-box", classes="dialog"):
            yield Static(f"Conflict {c.id}: {c.relation}", classes="dialog-title", markup=False)
            yield Static(f"{EXPLAIN.get(c.relation, '')} ({reasons}{sim})", id="conflict-why", markup=False)
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
            with Horizontal(id="conflict-buttons"):
                for keep, label in LABELS.items():
                    yield Button(
                        label, id=f"keep-{keep}", variant="primary" if keep == c.suggested else "default"
                    )
            yield Static("Esc: decide later (nothing changes).", id="conflict-later", markup=False)

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
