"""The command palette (ctrl+p): every action by name, the global ones and the current screen's.

Why generated from the binding tables: the footer, the help screen and the palette then always agree;
adding a key with a description to a screen's BINDINGS is all it takes to make it a palette command.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider

from app.tui.host import host
from app.tui.modes import PLACES

Command = tuple[str, str, Callable[[], Any]]


class MemappCommands(Provider):
    """Go to a screen, add a memory, load the demo, open help, and the current screen's own actions."""

    def _commands(self) -> Iterator[Command]:
        app = host(self.app)
        for place in PLACES:
            label = place.label
            yield f"Go to {label}", f"Switch to the {label} screen", partial(app.action_go, place.mode)
        yield (
            "New memory",
            "Write a long-term memory (preference, project, skill or fact)",
            app.action_new_memory,
        )
        yield "Load the demo data", "Import a few realistic threads and memories", app.action_load_demo
        yield (
            "Review imported memory suggestions",
            "Accept, edit or reject the memories an imported text list proposed",
            app.action_imported_suggestions,
        )
        yield "Help: all keys", "Every key on every screen", app.action_help
        screen = self.screen
        title = screen.TITLE or type(screen).__name__
        seen: set[str] = set()
        for binding in Binding.make_bindings(type(screen).BINDINGS):
            if not binding.description or binding.action in seen:
                continue
            seen.add(binding.action)
            yield (
                f"{title}: {binding.description}",
                binding.tooltip or binding.description,
                partial(self._run, screen, binding.action),
            )

    @staticmethod
    async def _run(screen: Any, action: str) -> None:
        await screen.run_action(action)

    async def discover(self) -> Hits:
        for name, help_text, callback in self._commands():
            yield DiscoveryHit(name, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_text, callback in self._commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), callback, help=help_text)
