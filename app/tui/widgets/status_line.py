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

from app.text import number, plural, tail
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


MIN_PATH = 16  # cells of the database path kept before the facts are shortened


def facts_text(status: AppStatus, form: int) -> Text:
    """The right-hand side in one of three forms, longest first: 0 everything; 1 without "tokens exact"
    (an estimate is still said) and the reason semantic search is off (its tooltip keeps it); 2 also
    with short counts. At 80 columns the full form left the path a few cells (issue 28.10)."""
    facts = Text(no_wrap=True, overflow="ellipsis")
    if status.threads is None:
        facts.append("counting…", style="dim")
    elif form < 2:
        facts.append(
            f"{plural(status.threads, 'thread')} · {plural(status.messages or 0, 'msg')} · "
            f"{plural(status.memories or 0, 'memory', 'memories')}"
        )
    else:
        facts.append(
            f"{number(status.threads)} thr · {number(status.messages or 0)} msg · "
            f"{number(status.memories or 0)} mem"
        )
    if form == 0 or not status.tokens_exact:
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
        if form == 0:
            why = state.removeprefix("unavailable:").strip().removeprefix("semantic search is ").strip()
            facts.append(f": {why}")
    return facts


class StatusLine(Horizontal):
    """Database path on the left (its start cut first when narrow, so the file name stays), counts and
    states on the right (shortened when the path would get fewer than MIN_PATH cells)."""

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

    def on_resize(self) -> None:
        self._show(self.app_status)

    @property
    def app_status(self) -> AppStatus:
        status: AppStatus = getattr(self.app, "status", AppStatus())
        return status

    def _show(self, status: AppStatus) -> None:
        width = self.size.width or 120
        forms = [facts_text(status, form) for form in range(3)]
        facts = next((f for f in forms if width - f.cell_len - 3 >= MIN_PATH), forms[-1])
        room = max(1, width - facts.cell_len - 3)
        self.query_one("#status-db", Static).update(Text(tail(status.database, room), no_wrap=True))
        facts_widget = self.query_one("#status-facts", Static)
        facts_widget.update(facts)
        facts_widget.tooltip = Text(f"semantic search: {status.semantic}")
