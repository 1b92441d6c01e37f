"""The empty-database greeting: what memapp is for and the three ways to start.

Shown once at start when chat.db has no threads and no memories, over the Threads screen. Any of the
three choices (or Escape) takes it away; it never comes back by itself in this session.
"""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Center, Vertical
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Button, Footer, Static

from app.tui.host import host
from app.tui.widgets.status_line import StatusLine


class WelcomeScreen(Screen[None]):
    """Import a file, add a memory, or load the demo data."""

    TITLE = "Welcome"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "i",
            "import_file",
            "Import a file",
            id="welcome-import",
            tooltip="Open the Import screen to read a chat export",
        ),
        Binding(
            "n",
            "new_memory",
            "Add a memory",
            id="welcome-memory",
            tooltip="Write down something you want remembered",
        ),
        Binding(
            "d",
            "demo",
            "Load demo data",
            id="welcome-demo",
            tooltip="A handful of realistic threads and memories to try things on",
        ),
        Binding("escape", "dismiss", "Look around", id="welcome-close", tooltip="Close this greeting"),
    ]

    def compose(self) -> ComposeResult:
        app = host(self.app)
        with Center(id="welcome-center"), Vertical(id="welcome-box"):
            yield Static(Content.from_markup("[b]Welcome to memapp[/b]"), id="welcome-title")
            yield Static(
                Content.from_markup(
                    "Your AI conversations, and what is worth remembering from them, in one file on this "
                    "computer: [b]$path[/b]\nIt is empty. Where would you like to start?",
                    path=app.status.database,
                ),
                id="welcome-text",
            )
            yield Button("Import a chat export  (i)", id="welcome-import", variant="primary", compact=True)
            yield Static(
                "ChatGPT or Claude exports, simonw/llm logs.db, Open WebUI, or JSON.",
                classes="welcome-hint",
                markup=False,
            )
            yield Button("Add a memory  (n)", id="welcome-memory", compact=True)
            yield Static(
                "A preference, project, skill or fact you want every AI to know.",
                classes="welcome-hint",
                markup=False,
            )
            yield Button("Load the demo data  (d)", id="welcome-demo", compact=True)
            yield Static(
                "A few realistic conversations and memories to try things on.",
                classes="welcome-hint",
                markup=False,
            )
        yield StatusLine()
        yield Footer()

    @on(Button.Pressed, "#welcome-import")
    async def action_import_file(self) -> None:
        self.dismiss()
        await host(self.app).action_go("import")

    @on(Button.Pressed, "#welcome-memory")
    def action_new_memory(self) -> None:
        self.dismiss()
        host(self.app).action_new_memory()

    @on(Button.Pressed, "#welcome-demo")
    def action_demo(self) -> None:
        self.app.call_later(host(self.app).action_load_demo)
