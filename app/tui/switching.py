"""Keys typed while a screen is switching go where the user meant, or nowhere (issue 28.7).

Why: a switch is work on the UI thread (the first time a place is shown its module is imported, its
widgets' CSS parsed and applied, its widgets composed), and under load it took 1.2 s. Keys typed meanwhile
waited in the app's queue and then reached the arriving screen before it had drawn itself or set its
focus, so they acted as that screen's shortcuts: typing "/Berlin" just after `2` opened Edit (`e`),
Conflicts (`r`) and New memory (`n`) on Memories, and a `d` would have deleted a memory.

So from the moment a switch starts until the arriving screen has been drawn once with its focus, keys are
held. Then, in the order typed, each held key is
- passed on if a text box has the focus (the search box: "3restic" searches for "restic"),
- passed on if it is one of the app's own keys (switching place, help, quit): those belong to no screen,
- dropped otherwise (the user could not see what the key would do).
ctrl+q is never held.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any

from textual import events
from textual.widgets import Input, TextArea

if TYPE_CHECKING:
    from textual.app import App

NEVER_HELD = frozenset({"ctrl+q"})


class KeysDuringSwitch:
    """The hold for one app: `during(change)` runs a screen change; `take(key)` holds a key if one runs."""

    def __init__(
        self,
        app: App[Any],
        app_keys: Iterable[str],
        dispatch: Callable[[events.Key], Awaitable[None]],
    ) -> None:
        self._app = app
        self._app_keys = frozenset(app_keys)
        self._dispatch = dispatch
        self._held: list[events.Key] | None = None

    @property
    def holding(self) -> bool:
        return self._held is not None

    def take(self, event: events.Key) -> bool:
        """Hold `event` if a switch is under way (the caller then does nothing more with it)."""
        if self._held is None or event.key in NEVER_HELD:
            return False
        self._held.append(event)
        return True

    async def during(self, change: Awaitable[object]) -> None:
        """Run a screen change (a mode switch, a pushed screen), holding the keys typed until the arriving
        screen has been drawn once; then pass them on or drop them (see the module docstring)."""
        if self._held is None:
            self._held = []
        try:
            await change
        finally:
            self._app.call_after_refresh(self._release)

    async def _release(self) -> None:
        held, self._held = self._held or [], None
        for key in held:
            if self._held is not None:  # a replayed key started another switch: it holds the rest
                self._held.append(key)
            elif self.typing_in_a_box() or key.key in self._app_keys:
                # A new event: the held one may have bubbled up from the old screen's widgets already
                # (Textual then only checks the app's bindings, never types it into the box).
                await self._dispatch(events.Key(key.key, key.character))

    def typing_in_a_box(self) -> bool:
        return isinstance(self._app.focused, Input | TextArea)
