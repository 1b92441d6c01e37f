"""The one-line bar at the top of every main screen: where you are, and the key for each other place.

Why not the footer: the footer belongs to the current screen's own keys (at 80 columns there is no room
for both), so the five screen keys live up here, always visible, and are clickable.
"""

from __future__ import annotations

from typing import ClassVar

from textual.content import Content
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
        super().__init__(self._content(current), id=id)
        self.current = current

    @staticmethod
    def _content(current: str) -> Content:
        parts: list[Content] = [Content.from_markup("[b] memapp [/b]")]
        for place in PLACES:
            mode, key, label = place.mode, place.key, place.label
            if mode == current:
                parts.append(Content.from_markup("[reverse] $key $label [/reverse]", key=key, label=label))
            else:
                parts.append(
                    Content.from_markup(
                        f"[@click=app.go('{mode}')] [dim]$key[/dim] $label [/]", key=key, label=label
                    )
                )
        parts.append(Content.from_markup("  [@click=app.help][dim]?[/dim] Help[/]"))
        return Content(" ").join(parts)
