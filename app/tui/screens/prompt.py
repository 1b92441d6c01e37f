"""A one-line question in a modal (rename a thread, a file name to save to): dismisses with the text, or
None when cancelled. Enter answers, Esc cancels; the current value is shown ready to edit."""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from app.text import literal


class PromptScreen(ModalScreen[str | None]):
    """Ask for one line of text."""

    TITLE = "Questions (one line: rename, file name)"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="prompt-cancel", tooltip="Close without changing anything"),
    ]

    def __init__(self, title: str, label: str, value: str = "", *, ok: str = "OK") -> None:
        super().__init__()
        self.question_title = title
        self.label = label
        self.value = value
        self.ok_label = ok

    def compose(self) -> ComposeResult:
        with Vertical(id="prompt-box", classes="dialog"):
            yield Static(literal(self.question_title), classes="dialog-title", markup=False)
            yield Static(literal(self.label), id="prompt-label", markup=False)
            yield Input(self.value, id="prompt-input")
            with Horizontal(classes="dialog-buttons"):
                yield Button(f"{self.ok_label} (Enter)", id="ok", variant="primary")
                yield Button("Cancel (Esc)", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#prompt-input", Input).focus()

    @on(Input.Submitted, "#prompt-input")
    @on(Button.Pressed, "#ok")
    def _ok(self) -> None:
        self.dismiss(self.query_one("#prompt-input", Input).value)

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
