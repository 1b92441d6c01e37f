"""The status line: which database, how much is in it, and whether token counts and semantic search are
exact and ready. It watches the app's `status` reactive, so every screen's copy stays current.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Static

from app.text import plural
from app.tui.widgets.sync_status import SyncStatus


@dataclass(frozen=True)
class AppStatus:
    """What the status line shows. `semantic` is 'loading', 'ready', or 'unavailable: why'."""

    database: str = ""
    threads: int | None = None
    messages: int | None = None
    memories: int | None = None
    tokens_exact: bool = True
    semantic: str = "loading"


class StatusLine(Horizontal):
    """Database path on the left (cut first when narrow), counts and states on the right."""

    DEFAULT_CSS: ClassVar[str] = """
    StatusLine {
        height: 1;
        background: $panel;
        color: $text-muted;
        & > #status-db { width: 1fr; padding: 0 1; }
        & > #status-facts { width: auto; padding: 0 1 0 0; }
    }
    """

    def compose(self) -> ComposeResult:
        yield Static(id="status-db", markup=False)
        yield SyncStatus(markup=False)  # hidden unless this chat.db syncs (memapp sync init)
        yield Static(id="status-facts", markup=False)

    def on_mount(self) -> None:
        self.watch(self.app, "status", self._show, init=True)

    def _show(self, status: AppStatus) -> None:
        self.query_one("#status-db", Static).update(Text(status.database, no_wrap=True, overflow="ellipsis"))
        facts = Text(no_wrap=True, overflow="ellipsis")
        if status.threads is None:
            facts.append("counting…", style="dim")
        else:
            facts.append(
                f"{plural(status.threads, 'thread')} · {plural(status.messages or 0, 'msg')} · "
                f"{plural(status.memories or 0, 'memory', 'memories')}"
            )
        facts.append(" │ tokens ")
        facts.append(
            "exact" if status.tokens_exact else "estimated", style="" if status.tokens_exact else "bold"
        )
        facts.append(" │ semantic ")
        state = status.semantic
        if state == "ready":
            facts.append("ready", style="bold")
        elif state == "loading":
            facts.append("warming up…", style="italic")
        else:
            facts.append("off", style="bold reverse")
            why = state.removeprefix("unavailable:").strip().removeprefix("semantic search is ").strip()
            facts.append(f": {why}")
        facts_widget = self.query_one("#status-facts", Static)
        facts_widget.update(facts)
        facts_widget.tooltip = Text(f"semantic search: {state}")
