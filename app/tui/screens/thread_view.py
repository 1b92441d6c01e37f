"""One thread: its summary (tokens, summarised up to which message, topics) above a window of its
messages that pages in from SQL as you scroll, so a 5,000-message thread opens as fast as a short one.

Opened from Threads (at the beginning) or from a search hit (at that message, highlighted).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Collapsible, Static

from app.text import literal, number, one_line, when
from app.tui.screens.base import MemappScreen
from app.tui.screens.context_preview import ContextPreviewScreen
from app.tui.screens.suggestions import SuggestionsScreen
from app.tui.widgets.message_list import MessageList
from store import Thread
from store.extract.summaries import SummaryResult, summarize_thread
from store.message_notes import thread_notes
from store.records import Summary


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
        Binding("escape,backspace", "back", "Back", id="thread-back", tooltip="Back to the list"),
        Binding(
            "home,g", "first", "Start", priority=True, id="thread-first", tooltip="Jump to the first message"
        ),
        Binding("end,G", "last", "End", priority=True, id="thread-last", tooltip="Jump to the last message"),
        Binding("s", "toggle_summary", "Summary", id="thread-summary", tooltip="Show or hide the summary"),
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

    def action_back(self) -> None:
        self.dismiss()

    def action_first(self) -> None:
        if self.messages is not None:
            self.messages.first()

    def action_last(self) -> None:
        if self.messages is not None:
            self.messages.last()

    def action_update_summary(self) -> None:
        store, thread_id = self.store, self.thread_id

        def done(result: SummaryResult) -> None:
            words = {
                "created": "Summary written",
                "updated": "Summary updated",
                "unchanged": "The summary already covers every message",
            }
            self.notify(f"{words.get(result.action, result.action)}.", title="Summary", markup=False)
            if result.action != "unchanged":
                self.memapp.data_changed()

        self.notify("Summarising…", title="Summary", markup=False, timeout=2)
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
        box = self.query_one("#thread-summary", Collapsible)
        if box.display:
            box.collapsed = not box.collapsed
