"""The sync part of the status line: when this device last synced and what waits (store.sync.status).

Self-contained: it reads its phrase in a thread worker every few seconds (file names and two small JSON
files, never a changeset), and stays hidden for a chat.db that does not sync.
"""

from __future__ import annotations

import time
from typing import ClassVar

from rich.text import Text
from textual.widgets import Static

from app.tui.work import run_in_thread

EVERY = 5.0  # seconds between looks


class SyncStatus(Static):
    DEFAULT_CSS: ClassVar[str] = """
    SyncStatus { width: auto; padding: 0 1 0 0; display: none; }
    """

    def on_mount(self) -> None:
        self._look()
        self.set_interval(EVERY, self._look)

    def _look(self) -> None:
        if not getattr(self.app, "store_ready", False):
            return
        store = self.app.store  # type: ignore[attr-defined]

        def read() -> str | None:
            from store.sync import brief  # in the worker: the TUI's first frame does not import sync

            return brief(store, time.time())

        run_in_thread(self, read, self._show, group="sync-status", exclusive=True)

    def _show(self, phrase: str | None) -> None:
        self.styles.display = "none" if phrase is None else "block"
        if phrase is not None:
            self.update(Text(f"⇅ {phrase} │", no_wrap=True))
