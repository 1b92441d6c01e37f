"""What a chat model would receive to continue this thread, for a budget the user picks.

The numbers and the messages are store.context's (`build_context`, as `memapp context`), built with
touch=False: previewing is not using, so no memory's access count moves. Each message is listed with its
tier and token cost, so the user sees where the budget went.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, cast

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from app.text import literal, number, one_line
from app.tui.work import run_in_thread
from store.context.builder import ContextResult, build_context

if TYPE_CHECKING:
    from app.tui.app import MemApp

DEFAULT_BUDGET = 4000
TIERS = (
    ("system", "System prompt"),
    ("memories", "Tier 1 · memories"),
    ("summary", "Tier 1 · summary + topics"),
    ("condensed", "Tier 2 · older, condensed"),
    ("recent", "Tier 3 · recent, verbatim"),
)


def stats_table(result: ContextResult) -> Table:
    stats = result.token_stats.to_json()
    table = Table(box=None, show_header=True, header_style="bold", pad_edge=False)
    table.add_column("Part")
    table.add_column("Tokens", justify="right")
    for key, label in TIERS:
        table.add_row(label, number(stats[key]))
    table.add_row(
        Text("Total", style="bold"),
        Text(f"{number(stats['total'])} / {number(stats['budget'])}", style="bold"),
    )
    return table


def message_lines(result: ContextResult, count: Callable[[str, str], int]) -> list[Text]:
    """One line per message sent: role, token cost, the start of its text (always literal)."""
    lines = []
    for m in result.messages:
        role, content = m["role"], m["content"]
        cost = count(role, content)
        line = Text(f"{role:<9} {cost:>6} tok  ", style="bold" if role == "system" else "")
        line.append(literal(one_line(content, 200)))
        lines.append(line)
    return lines


class ContextPreviewScreen(ModalScreen[None]):
    """Budget in, tiers and messages out; Enter in either box rebuilds."""

    TITLE = "Context preview"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close", id="context-close", tooltip="Back to the thread"),
        Binding(
            "ctrl+y",
            "copy",
            "Copy",
            id="context-copy",
            tooltip="Copy the built context to the clipboard (role headings, then each message's text)",
        ),
        Binding(
            "ctrl+s",
            "save",
            "Save to file",
            id="context-save",
            tooltip="Write the built context to a file: .json gets the messages as JSON, any other name text",
        ),
    ]

    def __init__(self, thread_id: int, title: str) -> None:
        super().__init__()
        self.thread_id = thread_id
        self.thread_title = title
        self.result: ContextResult | None = None

    @property
    def memapp(self) -> MemApp:
        return cast("MemApp", self.app)

    def compose(self) -> ComposeResult:
        with Vertical(id="context-box", classes="dialog"):
            yield Static(Text(f"Context preview · {one_line(self.thread_title, 60)}"), classes="dialog-title")
            with Horizontal(id="context-inputs"):
                yield Input(
                    str(DEFAULT_BUDGET),
                    placeholder="budget (tokens)",
                    id="context-budget",
                    restrict=r"[0-9]*",
                    max_length=7,
                )
                yield Input(
                    "",
                    placeholder="query for memories (optional: else the last user message)",
                    id="context-query",
                )
            yield Static("", id="context-note", markup=False)
            yield Static("", id="context-stats")
            with VerticalScroll(id="context-messages"):
                yield Static("", id="context-list")

    def on_mount(self) -> None:
        self.query_one("#context-budget", Input).focus()
        self.rebuild()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.rebuild()

    def rebuild(self) -> None:
        raw = self.query_one("#context-budget", Input).value.strip()
        note = self.query_one("#context-note", Static)
        budget = int(raw) if raw.isdigit() else 0
        if budget < 64:
            note.update("Give a budget of at least 64 tokens.")
            return
        query = self.query_one("#context-query", Input).value.strip() or None
        note.update(f"Building a {number(budget)}-token context…")
        store, thread_id = self.memapp.store, self.thread_id
        run_in_thread(
            self,
            lambda: build_context(store, thread_id, budget, query=query, touch=False),
            self._show,
            group="context-preview",
            exclusive=True,
            description="building the context preview",
        )

    def _show(self, result: ContextResult) -> None:
        self.result = result
        meta = result.metadata
        self.query_one("#context-note", Static).update(
            f"{meta.included_messages} messages included, {meta.summarized_messages} left to the summary"
            f"{' (used)' if meta.used_summary else ''}; {meta.pinned_memories} pinned and "
            f"{meta.retrieved_memories} retrieved memories."
        )
        self.query_one("#context-stats", Static).update(stats_table(result))
        count = self.memapp.store.tokens.count_message
        self.query_one("#context-list", Static).update(Text("\n").join(message_lines(result, count)))

    def action_close(self) -> None:
        self.dismiss(None)

    def action_copy(self) -> None:
        if self.result is None:
            self.notify("The context is still being built.", markup=False)
            return
        text = context_text(self.result)
        self.app.copy_to_clipboard(text)
        self.notify(
            f"Copied the context ({len(self.result.messages)} messages, {len(text):,} characters).",
            title="Copy",
            markup=False,
        )

    def action_save(self) -> None:
        from app.tui.screens.prompt import PromptScreen

        result = self.result
        if result is None:
            self.notify("The context is still being built.", markup=False)
            return

        def chosen(name: str | None) -> None:
            if not name or not name.strip():
                return
            path = Path(name.strip()).expanduser()
            try:
                if path.exists():
                    raise FileExistsError(f"{path} already exists: choose a new name")
                body = (
                    json.dumps(result.to_json(), ensure_ascii=False, indent=2)
                    if path.suffix.lower() == ".json"
                    else context_text(result)
                )
                path.write_text(body + "\n", encoding="utf-8")
            except OSError as exc:
                self.notify(f"Not saved: {exc}", title="Save", severity="error", markup=False)
                return
            self.notify(f"Saved the context to {path.resolve()}.", title="Save", markup=False)

        self.app.push_screen(
            PromptScreen(
                "Save the context",
                "File name (.json: the messages as JSON; otherwise text):",
                f"context-thread-{self.thread_id}.md",
                ok="Save",
            ),
            chosen,
        )


def context_text(result: ContextResult) -> str:
    """The built context as text for pasting into a chat: each message under a `## role` heading."""
    return "\n\n".join(f"## {m['role']}\n\n{m['content']}" for m in result.messages)
