"""A yes/no question in a modal: dismisses with True or False.

The message may quote user text (a memory that would be deleted), so it is rendered literally.
"""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from app.text import literal


class ConfirmScreen(ModalScreen[bool]):
    """Ask before something that changes the database in bulk (apply cleanup, purge, add anyway)."""

    TITLE = "Questions (yes/no)"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes", id="confirm-yes"),
        Binding("n,escape", "answer(False)", "No", id="confirm-no"),
    ]

    def __init__(
        self, title: str, message: str, *, yes: str = "Yes", no: str = "Cancel", danger: bool = False
    ) -> None:
        super().__init__()
        self.question_title = title
        self.message = message
        self.yes_label = yes
        self.no_label = no
        self.danger = danger

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-box", classes="dialog"):
            yield Static(
                literal(self.question_title), id="confirm-title", classes="dialog-title", markup=False
            )
            yield Static(literal(self.message), id="confirm-message", markup=False)
            with Horizontal(classes="dialog-buttons"):
                yield Button(f"{self.yes_label} (y)", id="yes", variant="error" if self.danger else "primary")
                yield Button(f"{self.no_label} (n)", id="no")

    def on_mount(self) -> None:
        self.query_one("#no" if self.danger else "#yes", Button).focus()

    @on(Button.Pressed, "#yes")
    def _yes(self) -> None:
        self.dismiss(True)

    @on(Button.Pressed, "#no")
    def _no(self) -> None:
        self.dismiss(False)

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
