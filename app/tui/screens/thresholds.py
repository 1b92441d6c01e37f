"""The cleanup thresholds as a small form: which memories count as unused (importance below, used fewer
times than, untouched for more days than). The Cleanup screen lists and applies with what is chosen here
for the rest of the session; config.toml's [cleanup] stays the default (and `memapp cleanup` uses it)."""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static

from store.cleanup import Thresholds

FIELDS = (
    ("max_importance", "Importance below", "0-11: memories with a lower importance are candidates"),
    ("min_access", "Used fewer times than", "0 or more"),
    ("older_than_days", "Untouched for more days than", "0 or more (days since last use, or since added)"),
)


class ThresholdsScreen(ModalScreen[Thresholds | None]):
    """Three numbers; Enter or ctrl+s applies, Esc cancels. Invalid input is explained, not saved."""

    TITLE = "Cleanup thresholds"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "apply", "Apply", id="thresholds-apply", tooltip="Use these thresholds"),
        Binding("escape", "cancel", "Cancel", id="thresholds-cancel", tooltip="Keep the current thresholds"),
    ]

    def __init__(self, current: Thresholds) -> None:
        super().__init__()
        self.current = current

    def compose(self) -> ComposeResult:
        values = self.current.to_json()
        with Vertical(id="thresholds-box", classes="dialog"):
            yield Static("Cleanup thresholds (this session)", classes="dialog-title", markup=False)
            for key, label, tip in FIELDS:
                with Horizontal(classes="threshold-row"):
                    yield Label(label, classes="field-label")
                    yield Input(f"{values[key]:g}", id=f"threshold-{key}", restrict=r"[0-9.]*", tooltip=tip)
            yield Static("", id="thresholds-errors", markup=False)
            with Horizontal(classes="dialog-buttons"):
                yield Button("Apply (Enter)", id="apply", variant="primary")
                yield Button("Cancel (Esc)", id="cancel")

    def on_mount(self) -> None:
        self.query_one(f"#threshold-{FIELDS[0][0]}", Input).focus()

    def read(self) -> Thresholds:
        """The form as Thresholds (ValueError / InvalidInputError with the reason when it is not valid)."""
        raw = {key: self.query_one(f"#threshold-{key}", Input).value.strip() for key, _, _ in FIELDS}
        t = Thresholds(
            min_access=int(raw["min_access"]),
            max_importance=int(raw["max_importance"]),
            older_than_days=float(raw["older_than_days"]),
        )
        t.validate()
        return t

    @on(Input.Submitted)
    @on(Button.Pressed, "#apply")
    def action_apply(self) -> None:
        try:
            t = self.read()
        except Exception as exc:  # noqa: BLE001 - shown to the person: a blank or malformed number
            self.query_one("#thresholds-errors", Static).update(
                f"Not applied: {exc}. Importance and uses are whole numbers, days may have decimals."
            )
            return
        self.dismiss(t)

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
