"""A Switch with the word for its state beside it ("on" / "off", or what that means), kept in step as it
flips.

Why: a Textual Switch shows its state only by the knob's side and colour, which a new user (and every
monochrome or NO_COLOR terminal) cannot read: the Import screen's "Embed now" switch said nothing about
whether it was on (issue 28.12).
"""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Static, Switch


class OnOffSwitch(Horizontal):
    """`Switch(value, id=switch_id)` and its state in words; query the Switch by its id as before."""

    DEFAULT_CSS: ClassVar[str] = """
    OnOffSwitch {
        width: auto;
        height: auto;
        & > .switch-state { width: auto; padding: 1 1 0 1; }
    }
    """

    def __init__(
        self, value: bool, *, switch_id: str, on: str = "on", off: str = "off", tooltip: str | None = None
    ) -> None:
        super().__init__()
        self._initial = value
        self._switch_id = switch_id
        self._words = {True: on, False: off}
        self._switch_tooltip = tooltip

    def compose(self) -> ComposeResult:
        yield Switch(self._initial, id=self._switch_id, tooltip=self._switch_tooltip)
        yield Static(self._words[self._initial], classes="switch-state", markup=False)

    @on(Switch.Changed)
    def _flipped(self, event: Switch.Changed) -> None:
        self.query_one(".switch-state", Static).update(self._words[event.value])
