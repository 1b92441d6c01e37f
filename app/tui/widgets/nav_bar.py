"""The one-line bar at the top of every main screen: where you are, and the key for each other place.

Why not the footer: the footer belongs to the current screen's own keys (at 80 columns there is no room
for both), so the five screen keys live up here, always visible, and are clickable.

The rule for the place keys: alt+1 … alt+5 work everywhere, also while typing in a box; the bare digits
1 … 5 work whenever no text box has the focus (in a box a digit is text: "kyoto4" must stay "kyoto4").
The bar shows the keys that work right now: the digits, or, while a box has the focus, "alt+1…5" (and
Esc, which leaves the box on every screen).
"""

from __future__ import annotations

from typing import ClassVar

from textual.content import Content
from textual.widget import Widget
from textual.widgets import Static

from app.tui.modes import PLACES


class NavBar(Static):
    """Shows the screens by key, the current one highlighted; a click switches screen."""

    DEFAULT_CSS: ClassVar[str] = """
    NavBar {
        height: 1;
        width: 1fr;
        background: $panel;
        color: $foreground;
    }
    """

    def __init__(self, current: str, *, id: str | None = None) -> None:
        super().__init__(self.content_for(current, typing=False), id=id)
        self.current = current
        self.typing = False

    def on_mount(self) -> None:
        self.watch(self.screen, "focused", self._focus_moved, init=True)

    def _focus_moved(self, focused: Widget | None) -> None:
        typing = is_typing(focused)
        if typing != self.typing:
            self.typing = typing
            self.update(self.content_for(self.current, typing=typing))

    @staticmethod
    def content_for(current: str, *, typing: bool) -> Content:
        """The bar's text: digits when they work, else the labels and how to switch from inside a box."""
        parts: list[Content] = [] if typing else [Content.from_markup("[b] memapp [/b]")]
        for place in PLACES:
            mode, key, label = place.mode, place.key, place.label
            shown = "" if typing else "$key "
            if mode == current:
                parts.append(Content.from_markup(f"[reverse] {shown}$label [/reverse]", key=key, label=label))
            else:
                parts.append(
                    Content.from_markup(
                        f"[@click=app.go('{mode}')] [dim]{shown}[/dim]$label [/]", key=key, label=label
                    )
                )
        if typing:
            parts.append(
                Content.from_markup("  [dim]alt+1…5[/dim] switch · [@click=app.help][dim]F1[/dim] help[/]")
            )
        else:
            parts.append(Content.from_markup("  [@click=app.help][dim]?[/dim] Help[/]"))
        return Content(" ").join(parts)


def is_typing(widget: Widget | None) -> bool:
    """A text box has the focus: printable keys (digits, ?) are text there, not commands."""
    # By class name along the MRO: importing TextArea here would cost the first frame its import time.
    return widget is not None and any(c.__name__ in TEXT_BOXES for c in type(widget).__mro__)


TEXT_BOXES = frozenset({"Input", "TextArea"})
