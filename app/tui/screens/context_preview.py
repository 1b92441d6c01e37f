"""What a chat model would receive to continue this thread, for a budget the user picks.

The numbers and the messages are store.context's (`build_context`, as `memapp context`), built with
touch=False: previewing is not using, so no memory's access count moves. Each message is listed with its
tier and token cost, so the user sees where the budget went.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from app.text import literal, number, one_line, short_path
from app.tui.host import Host, host
from app.tui.work import run_in_thread
from store import StoreError
from store.context import ContextResult, build_context
from store.crypto import keys
from store.files import commit_partial, partial_file, refuse_database_paths

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
    def memapp(self) -> Host:
        return host(self.app)

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

        db_path = self.memapp.store.path

        def chosen(name: str | None) -> None:
            if not name or not name.strip():
                return
            run_in_thread(
                self,
                lambda: save_context(result, name.strip(), db_path),
                self._saved,
                group="save",
                description="saving the context",
            )

        folder = short_path(contexts_dir(db_path))
        self.app.push_screen(
            PromptScreen(
                "Save the context",
                f"File name, saved in {folder} unless you give a folder (.json: the messages as JSON; "
                "otherwise text):",
                f"context-thread-{self.thread_id}.md",
                ok="Save",
            ),
            chosen,
        )

    def _saved(self, saved: tuple[Path, bool]) -> None:
        path, sealed = saved
        how = " (age-encrypted, as chat.db is: `age -d` and its passphrase open it)" if sealed else ""
        self.notify(f"Saved the context to {path}{how}.", title="Save", markup=False)


def contexts_dir(db_path: Path) -> Path:
    """Where a context saved by a bare file name goes: beside chat.db (the data folder), not the folder
    memapp happened to be started in."""
    return Path(db_path).expanduser().resolve().parent / "contexts"


def save_context(result: ContextResult, name: str, db_path: Path) -> tuple[Path, bool]:
    """Write the built context to `name` (a bare name: under contexts_dir), 0600, whole or not at all, never
    over an existing file; age-encrypted (".age" added) when chat.db is encrypted. (path, sealed)."""
    typed = Path(name).expanduser()
    path = typed if typed.is_absolute() or len(Path(name).parts) > 1 else contexts_dir(db_path) / typed
    body = (
        json.dumps(result.to_json(), ensure_ascii=False, indent=2)
        if path.suffix.lower() == ".json"
        else context_text(result)
    ) + "\n"
    data = body.encode("utf-8")
    sealed = keys.is_encrypted(db_path)
    if sealed:
        from store.crypto import seal_export

        path = path if path.suffix == ".age" else path.with_name(path.name + ".age")
        data = seal_export(data, keys.key_for(db_path).passphrase)
    refuse_database_paths(path, db_path)
    if path.exists():
        raise StoreError(f"{path} already exists: choose a new name")
    with partial_file(path, binary=True) as (tmp, fh):  # 0600, folders made 0700
        fh.write(data)
    commit_partial(tmp, path, replace=False)
    return path, sealed


def context_text(result: ContextResult) -> str:
    """The built context as text for pasting into a chat: each message under a `## role` heading."""
    return "\n\n".join(f"## {m['role']}\n\n{m['content']}" for m in result.messages)
