"""The places of the TUI, in one table: each mode's key, label, tooltip and base screen.

Why one table: the app's "1"-"5" (and alt+1-5) bindings, the nav bar, the command palette and the help screen all list
the places; generated from here they cannot disagree, and adding a place is one row. The screen is named
as (module, class) and imported only when the mode is first shown (start-up time is tested), so this
module imports nothing of Textual's but the Binding record.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from textual.binding import Binding

if TYPE_CHECKING:
    from textual.screen import Screen


# What Textual's parser makes of ESC + digit (a terminal's alt+digit): the macOS Option+digit characters.
# Found in tmux, where alt+2 typed "™" into the search box instead of opening Memories.
ALT_DIGIT_AS_KEY = {
    "inverted_exclamation_mark": "1",
    "trade_mark_sign": "2",
    "pound_sign": "3",
    "cent_sign": "4",
    "infinity": "5",
}


@dataclass(frozen=True)
class Place:
    mode: str
    key: str
    label: str
    tooltip: str
    module: str  # the base screen, imported on first use
    cls: str

    def binding(self) -> Binding:
        """The digit, when no text box has the focus (in a box a digit is text), and alt+digit.

        A priority binding, so the app sees it first and starts the switch (holding the keys typed after
        it, app.tui.switching) before those keys reach the old screen; in a text box the action declines
        (SkipAction) and the digit is typed."""
        return Binding(
            f"{self.key},alt+{self.key}",
            f"place('{self.mode}')",
            self.label,
            show=False,
            priority=True,
            id=f"go-{self.mode}",
            tooltip=f"{self.tooltip} (alt+{self.key} also works while typing in a box)",
        )

    def anywhere_binding(self) -> Binding:
        """alt+digit with priority: it reaches the app even from inside a text box (hidden from help: the
        row above lists it).

        A terminal sends alt+2 as ESC 2, which Textual's parser reports as the character macOS types for
        Option+2 (`trade_mark_sign`, "™"), not as alt+2, and a binding on that name never fires: MemApp
        catches those keys itself (`MemApp.on_event`, ALT_DIGIT_AS_KEY)."""
        return Binding(
            f"alt+{self.key}", f"go('{self.mode}')", self.label, show=False, priority=True, system=True
        )

    def screen_class(self) -> type[Screen[Any]]:
        return cast("type[Screen[Any]]", getattr(importlib.import_module(self.module), self.cls))


PLACES: tuple[Place, ...] = (
    Place(
        "threads", "1", "Threads", "Browse imported conversations", "app.tui.screens.threads", "ThreadsScreen"
    ),
    Place(
        "memories",
        "2",
        "Memories",
        "See, edit, pin and delete long-term memories",
        "app.tui.screens.memories",
        "MemoriesScreen",
    ),
    Place(
        "search",
        "3",
        "Search",
        "Search memories, messages and summaries",
        "app.tui.screens.search",
        "SearchScreen",
    ),
    Place(
        "cleanup",
        "4",
        "Cleanup",
        "Review unused memories, apply cleanup, restore from the trash",
        "app.tui.screens.cleanup",
        "CleanupScreen",
    ),
    Place(
        "import",
        "5",
        "Import",
        "Import a chat export (ChatGPT, Claude, llm, Open WebUI, JSON)",
        "app.tui.screens.import_screen",
        "ImportScreen",
    ),
)
BY_MODE: dict[str, Place] = {p.mode: p for p in PLACES}
FIRST_MODE = "threads"


def mode_screen_class(mode: str) -> type[Screen[Any]]:
    """The base screen class of `mode` (importing its module on first use)."""
    return BY_MODE[mode].screen_class()


def import_all_screens() -> None:
    """Import every place's screen module (and the thread view), for a background thread once the app is
    up: the first switch to a place then no longer imports it on the UI thread (the search screen's
    imports alone took 0.9 s at load ~9, issue 28.7). Safe beside the UI thread importing one of them at
    the same moment: the screen modules import each other only in one direction at module level (a
    cycle would let one thread see the other's half-initialised module)."""
    for place in PLACES:
        place.screen_class()
    importlib.import_module("app.tui.screens.thread_view")
