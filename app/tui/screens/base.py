"""What every main screen shares: the nav bar, status line and footer around its body, the store, thread
workers that hand their result back on the UI thread, and reloading when the data changed elsewhere.

Why `data_version`: a write on one screen (an import, a cleanup, an edited memory) makes the lists on
the others stale. The app bumps one counter; the visible screen reloads at once, the others the next
time they are shown, so hidden screens never query the database for nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, ClassVar, TypeVar

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer
from textual.worker import Worker, WorkerState

from app.tui.host import Host, host
from app.tui.widgets.nav_bar import NavBar
from app.tui.widgets.status_line import StatusLine
from app.tui.work import run_in_thread

if TYPE_CHECKING:
    from store import Store

T = TypeVar("T")


class MemappScreen(Screen[None]):
    """A main screen (one per mode): subclasses set NAV and compose their body."""

    NAV: ClassVar[str] = ""
    """The mode this screen is the base of, highlighted in the nav bar."""

    def __init__(self, nav: str | None = None) -> None:
        super().__init__()
        self.nav = nav or self.NAV
        self._seen_version = -1

    @property
    def memapp(self) -> Host:
        return host(self.app)

    @property
    def store(self) -> Store:
        return self.memapp.store

    def compose(self) -> ComposeResult:
        yield NavBar(self.nav)
        yield Vertical(*self.compose_body(), id="body")
        yield StatusLine()
        yield Footer(compact=True)

    def compose_body(self) -> Iterable[Widget]:
        return ()

    def on_mount(self) -> None:
        self.watch(self.app, "data_version", self._data_changed, init=False)

    def on_screen_resume(self) -> None:
        self._sync()

    def _data_changed(self, _version: int) -> None:
        if self.is_current:
            self._sync()

    def _sync(self) -> None:
        if not self.memapp.store_ready:
            return  # the app bumps data_version once the store is open, and the screen reads then
        if self._seen_version != self.memapp.data_version:
            self._seen_version = self.memapp.data_version
            self.reload()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """Workers started with @work (not run_in_thread) report failures here; same notification."""
        if event.state == WorkerState.ERROR and event.worker.error is not None:
            self.memapp.show_error(event.worker.error, event.worker.description)

    def reload(self) -> None:
        """Fetch what the screen shows (in a worker). Called when shown first and after data changes."""

    def in_thread(
        self,
        fn: Callable[[], T],
        then: Callable[[T], object] | None = None,
        *,
        group: str = "db",
        exclusive: bool = False,
        description: str = "",
        on_error: Callable[[BaseException], object] | None = None,
    ) -> Worker[None]:
        return run_in_thread(
            self, fn, then, group=group, exclusive=exclusive, description=description, on_error=on_error
        )
