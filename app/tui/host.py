"""What the screens, widgets and the command palette use of the running app, beyond Textual's `App`.

Why a Protocol: app/tui/app.py (MemApp) imports the screens to build its modes, and the screens used to
import `MemApp` back to type `self.app`: a circle of ten modules through app.py (type-only, but every
screen then depended on the whole app). They type against `Host` instead, which MemApp implements
(tests/app/tui/test_host.py checks it, for mypy and at run time); app.py is imported by nobody in app/tui.
Textual's own members (notify, push_screen, suspend...) are reached through `self.app` as usual.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, cast

if TYPE_CHECKING:
    from textual.app import App
    from textual.screen import Screen

    from app.tui.widgets.status_line import AppStatus
    from store import Store


class Host(Protocol):
    """The app's own members (MemApp) that screens call."""

    @property
    def store(self) -> Store:
        """The Store; waits for the opening worker when it has not finished."""
        ...

    @property
    def store_ready(self) -> bool: ...

    @property
    def status(self) -> AppStatus: ...

    @property
    def data_version(self) -> int: ...

    def data_changed(self) -> None:
        """Call after any write: screens reload what they show, the status line recounts."""

    def show_error(self, error: BaseException, doing: str = "") -> None: ...

    async def open_screen(self, screen: Screen[Any]) -> None: ...

    async def open_thread(
        self, thread_id: int, *, message_id: int | None = None, nav: str = "threads"
    ) -> None:
        """Open a thread's view (scrolled to `message_id`), for screens the thread view itself imports."""

    async def action_go(self, mode: str) -> None: ...

    def action_help(self) -> None: ...

    def action_imported_suggestions(self) -> None: ...

    def action_new_memory(self) -> None: ...

    async def action_load_demo(self) -> None: ...


def host(app: App[Any]) -> Host:
    """The running app as a Host (MemApp is the only app these screens run in)."""
    return cast("Host", app)
