"""One thread: its summary (tokens, summarised up to which message, topics) above a window of its
messages that pages in from SQL as you scroll, so a 5,000-message thread opens as fast as a short one.

Opened from Threads (at the beginning) or from a search hit (at that message, highlighted).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.widget import Widget
from textual.widgets import Collapsible, Input, Static

from app.text import literal, number, one_line, when
from app.tui.screens.base import MemappScreen
from app.tui.screens.context_preview import ContextPreviewScreen
from app.tui.screens.suggestions import SuggestionsScreen
from app.tui.widgets.message_list import MessageList
from store import Summary, Thread
from store.extract import SummaryResult, summarize_thread
from store.message_notes import thread_notes


@dataclass(frozen=True)
class ThreadHead:
    """What the top of the screen shows, read in one worker."""

    thread: Thread
    total: int
    summary: Summary | None
    topics: list[tuple[str, int]]
    index: int | None  # the message to open at (from a search hit)


class ThreadViewScreen(MemappScreen):
    """Read a thread. Home/End jump to its first/last message wherever the window is."""

    TITLE = "Thread"
    AUTO_FOCUS = "#messages"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "escape,backspace",
            "back",
            "Back",
            id="thread-back",
            tooltip="Back to the list (closes find first)",
        ),
        # Start, End and Copy are left out of the footer (help and the palette list them): with them it
        # was cut at 80 columns (issue 28.10).
        Binding(
            "home,g",
            "first",
            "Start",
            show=False,
            priority=True,
            id="thread-first",
            tooltip="Jump to the first message",
        ),
        Binding(
            "end,G",
            "last",
            "End",
            show=False,
            priority=True,
            id="thread-last",
            tooltip="Jump to the last message",
        ),
        Binding(
            "s",
            "toggle_summary",
            "Summary",
            id="thread-summary",
            tooltip="Show or hide the summary (a thread without one is summarised now)",
        ),
        Binding(
            "slash,ctrl+f",
            "find",
            "Find",
            id="thread-find",
            tooltip="Find text in this thread (Enter in the box: next match; n/N in the thread; Esc closes)",
        ),
        Binding("n", "find_next(1)", "Next match", show=False, id="thread-find-next", tooltip="Next match"),
        Binding(
            "N",
            "find_next(-1)",
            "Previous match",
            show=False,
            id="thread-find-prev",
            tooltip="Previous match",
        ),
        Binding(
            "y",
            "copy",
            "Copy",
            show=False,
            id="thread-copy",
            tooltip="Copy the message at the top of the view (or the highlighted one) to the clipboard",
        ),
        Binding(
            "u",
            "update_summary",
            "Summarise",
            id="thread-summarize",
            tooltip="Summarise the messages not yet in the summary (offline, extractive)",
        ),
        Binding(
            "m",
            "suggestions",
            "Suggestions",
            id="thread-suggestions",
            tooltip="Memories suggested from this thread: accept, edit or reject each",
        ),
        Binding(
            "c",
            "context_preview",
            "Context",
            id="thread-context",
            tooltip="Preview the context a chat model would get for a token budget, tier by tier",
        ),
    ]

    def __init__(self, thread_id: int, *, message_id: int | None = None, nav: str = "threads") -> None:
        super().__init__(nav)
        self.thread_id = thread_id
        self.message_id = message_id
        self.head: ThreadHead | None = None
        self.matches: list[int] = []
        self.match_at = -1
        self.found_text = ""

    def compose_body(self) -> list[Widget]:
        return [
            Static("Opening…", id="thread-title", markup=False),
            Static("", id="thread-facts", markup=False),
            Collapsible(
                VerticalScroll(
                    Static("", id="summary-text", markup=False),
                    Static("", id="summary-topics", markup=False),
                    id="summary-scroll",
                ),
                title="Summary",
                id="thread-summary",
                collapsed=False,
            ),
            Static("", id="messages-placeholder", classes="empty-state", markup=False),
            Horizontal(
                Input(
                    placeholder="Find in this thread (Enter: next, Esc: close)", id="find-input", compact=True
                ),
                Static("", id="find-info", markup=False),
                id="find-bar",
                classes="toolbar -compact",
            ),
        ]

    def reload(self) -> None:
        store, thread_id, message_id = self.store, self.thread_id, self.message_id

        def fetch() -> ThreadHead:
            thread = store.get_thread(thread_id)
            index = store.message_index(message_id) if message_id is not None else None
            return ThreadHead(
                thread, thread.message_count, store.get_summary(thread_id), store.get_topics(thread_id), index
            )

        self.in_thread(
            fetch, self._show_head, group="thread-head", exclusive=True, description="opening the thread"
        )

    async def _show_head(self, head: ThreadHead) -> None:
        first_time = self.head is None
        self.head = head
        t = head.thread
        estimated = not self.store.tokens.exact
        self.query_one("#thread-title", Static).update(Text(one_line(t.title, 500), style="bold"))
        self.query_one("#thread-facts", Static).update(
            f"{literal(t.source)} · {number(head.total)} messages · {number(t.token_count, estimated)} tokens · "
            f"{when(t.created_at)} → {when(t.updated_at)}"
            + (f" · {literal(about)}" if (about := thread_notes(t.metadata)) else "")
        )
        self._show_summary(head, estimated)
        if not first_time:
            return
        if head.total == 0:
            self.query_one("#messages-placeholder", Static).update("This thread has no messages.")
            return
        self.query_one("#messages-placeholder", Static).display = False
        store, thread_id = self.store, self.thread_id
        messages = MessageList(
            lambda offset, limit: store.get_messages(thread_id, offset=offset, limit=limit),
            head.total,
            estimated=estimated,
            id="messages",
        )
        await self.query_one("#body").mount(messages, after="#thread-summary")
        messages.focus()
        messages.open_at(head.index)

    def _show_summary(self, head: ThreadHead, estimated: bool) -> None:
        box = self.query_one("#thread-summary", Collapsible)
        s = head.summary
        if s is None:
            box.display = False
            return
        box.display = True
        box.title = (
            f"Summary · {number(s.token_count, estimated)} tokens · up to message #{s.last_message_seq + 1}"
            f" · updated {when(s.updated_at)}"
        )
        self.query_one("#summary-text", Static).update(Text(literal(s.content)))
        topics = self.query_one("#summary-topics", Static)
        topics.display = bool(head.topics)
        topics.update(Text("Topics: " + ", ".join(literal(t) for t, _ in head.topics), style="italic"))

    @property
    def messages(self) -> MessageList | None:
        found = self.query(MessageList)
        return found.first() if found else None

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one("#find-bar").display = False

    def action_back(self) -> None:
        bar = self.query_one("#find-bar")
        if bar.display:
            bar.display = False
            if self.messages is not None:
                self.messages.focus()
            return
        self.dismiss()

    # -- find ------------------------------------------------------------------------------------------

    def action_find(self) -> None:
        self.query_one("#find-bar").display = True
        self.query_one("#find-input", Input).focus()

    @on(Input.Submitted, "#find-input")
    def _find_submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        if not text:
            return
        if text == self.found_text and self.matches:
            self.action_find_next(1)
            return
        store, thread_id = self.store, self.thread_id

        def found(positions: list[int]) -> None:
            self.found_text, self.matches, self.match_at = text, positions, -1
            if not positions:
                self.query_one("#find-info", Static).update("no match")
                return
            self.action_find_next(1)

        self.in_thread(
            lambda: store.find_in_thread(thread_id, text),
            found,
            group="find",
            exclusive=True,
            description="finding",
        )

    def action_find_next(self, step: int) -> None:
        info = self.query_one("#find-info", Static)
        if not self.matches:
            if self.found_text:
                info.update("no match")
            return
        self.match_at = (self.match_at + step) % len(self.matches)
        index = self.matches[self.match_at]
        info.update(f"match {self.match_at + 1} of {len(self.matches)} · message #{index + 1} · n/N")
        if self.messages is not None:
            self.messages.open_at(index)

    # -- copy ------------------------------------------------------------------------------------------

    def action_copy(self) -> None:
        view = self.messages.current() if self.messages is not None else None
        if view is None:
            self.notify("No message to copy.", markup=False)
            return
        self.app.copy_to_clipboard(view.message.content)
        self.notify(
            f"Copied message #{view.index + 1} ({len(view.message.content):,} characters) to the clipboard.",
            title="Copy",
            markup=False,
        )

    def action_first(self) -> None:
        if self.messages is not None:
            self.messages.first()

    def action_last(self) -> None:
        if self.messages is not None:
            self.messages.last()

    def action_update_summary(self) -> None:
        store, thread_id = self.store, self.thread_id

        def done(result: SummaryResult) -> None:
            self.notify(summary_words(result), title="Summary", markup=False)
            if result.action != "unchanged":
                self.memapp.data_changed()

        total = self.head.total if self.head is not None else 0
        self.notify(f"Summarising {number(total)} messages…", title="Summary", markup=False, timeout=2)
        self.in_thread(
            lambda: summarize_thread(store, thread_id),
            done,
            group="summarize",
            exclusive=True,
            description="summarising the thread",
        )

    def action_suggestions(self) -> None:
        title = self.head.thread.title if self.head is not None else ""
        self.app.push_screen(SuggestionsScreen(self.thread_id, title))

    def action_context_preview(self) -> None:
        title = self.head.thread.title if self.head is not None else ""
        self.app.push_screen(ContextPreviewScreen(self.thread_id, title))

    def action_toggle_summary(self) -> None:
        """Show or hide the summary; a thread without one (under summary.trigger_messages messages, so
        the import did not summarise it) is summarised now, and the notification says so."""
        box = self.query_one("#thread-summary", Collapsible)
        if box.display:
            box.collapsed = not box.collapsed
            return
        if self.head is None:
            return
        if self.head.total == 0:
            self.notify("This thread has no messages to summarise.", title="Summary", markup=False)
            return
        self.action_update_summary()


def summary_words(result: SummaryResult) -> str:
    """What a summary run did, in a sentence (never silent)."""
    if result.action == "unchanged":
        return "The summary already covers every message."
    tokens = result.summary.token_count if result.summary is not None else 0
    verb = "written" if result.action == "created" else "updated"
    return (
        f"Summary {verb}: {number(result.messages_covered)} message"
        f"{'' if result.messages_covered == 1 else 's'} → {number(tokens)} tokens. s hides it, u updates it."
    )
