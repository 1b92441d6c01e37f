"""Threads list (paged from SQL, filter, sort) and the thread view (summary on top, a window of messages
that pages in, so a 5,000-message thread opens at once)."""

from __future__ import annotations

import time

import pytest
from textual.widgets import DataTable, Input

from app.tui.screens.context_preview import ContextPreviewScreen
from app.tui.screens.suggestions import SuggestionsScreen
from app.tui.screens.thread_view import ThreadViewScreen
from app.tui.screens.threads import PAGE, ThreadsScreen
from app.tui.widgets.message_list import MAX_MOUNTED, MessageList
from app.tui.widgets.message_list import PAGE as MESSAGE_PAGE
from app.tui.widgets.message_view import MessageView
from store import MessageIn, Store, ThreadIn
from tests.app.tui.tui_helpers import go_to, make_app, screen_text, settle


def _many_threads(store: Store, n: int) -> None:
    """n one-message threads, written straight in one transaction (the import path is tested elsewhere)."""
    with store.con:
        for i in range(n):
            store.con.execute(
                "INSERT INTO threads(source, external_id, title, created_at, updated_at, message_count, "
                "token_count) VALUES ('generic', ?, ?, ?, ?, 1, ?)",
                (f"t{i}", f"Thread {i:04d}", i, i, i),
            )


def _long_thread(store: Store, n: int) -> int:
    """n messages written straight (no keyword index: this thread is only read, never searched)."""
    with store.con:
        store.con.execute(
            "INSERT INTO threads(source, external_id, title, created_at, updated_at, message_count) "
            "VALUES ('generic', 'long', 'A very long thread', 0, 0, ?)",
            (n,),
        )
        tid = store.con.last_insert_rowid()
        for i in range(n):
            role = "user" if i % 2 == 0 else "assistant"
            text = f"message {i}: **bold** text with `code` and a [/x] bracket"
            store.con.execute(
                "INSERT INTO messages(thread_id, seq, role, content, token_count, created_at) "
                "VALUES (?, ?, ?, ?, 12, ?)",
                (tid, i, role, text, 1_700_000_000 + i),
            )
    return int(tid)


async def test_threads_page_in_and_filter_and_sort(tui_store: Store) -> None:
    _many_threads(tui_store, PAGE + 150)
    app = make_app(tui_store)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ThreadsScreen)
        table = screen.query_one("#threads-table", DataTable)
        assert table.row_count == PAGE  # one page, not all 350
        assert "350 threads" in screen_text(app)
        assert str(table.get_row_at(0)[0]) == "Thread 0349"  # last active first
        await pilot.press("end")  # the cursor near the end of what is loaded asks for the next page
        await settle(pilot)
        assert table.row_count == PAGE + 150
        await pilot.press("o")  # sort: created, then title
        await settle(pilot)
        await pilot.press("o")
        await settle(pilot)
        assert screen.sort == "title" and str(table.get_row_at(0)[0]) == "Thread 0000"
        await pilot.press("/")
        await pilot.press(*"0123")
        await pilot.pause(0.3)
        await settle(pilot)
        assert table.row_count == 1 and str(table.get_row_at(0)[0]) == "Thread 0123"
        await pilot.press("enter")  # from the filter box back to the list, then open
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, ThreadViewScreen)


@pytest.mark.serial  # a time limit
async def test_a_5000_message_thread_opens_at_once_and_pages_in(tui_store: Store) -> None:
    tid = _long_thread(tui_store, 5000)
    with tui_store.con:
        tui_store.con.execute(
            "INSERT INTO thread_summaries(thread_id, content, last_message_seq, token_count, "
            "created_at, updated_at) VALUES (?, ?, 99, 321, 0, 0)",
            (tid, "- user: wants [b]literal[/b] text"),
        )
        tui_store.con.execute(
            "INSERT INTO memory_topics(thread_id, topic, mention_count, last_seen_at) "
            "VALUES (?, 'parsers', 7, 0)",
            (tid,),
        )
    app = make_app(tui_store)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        started = time.perf_counter()
        await pilot.press("enter")
        await settle(pilot)
        opened = time.perf_counter() - started
        view = app.screen
        assert isinstance(view, ThreadViewScreen)
        messages = view.query_one(MessageList)
        assert (messages.start, messages.end, messages.total) == (0, MESSAGE_PAGE, 5000)
        assert len(view.query(MessageView)) == MESSAGE_PAGE
        assert opened < 5.0, f"opening took {opened:.1f}s"
        text = screen_text(app)
        assert "Summary · 321 tokens · up to message #100" in text
        assert "wants [b]literal[/b] text" in text and "Topics: parsers" in text
        edges = [str(edge.render()) for edge in messages.query(".edge")]
        assert "start of thread" in edges[0] and f"{5000 - MESSAGE_PAGE:,} more" in edges[1]

        await pilot.press("end")
        await settle(pilot)
        assert (messages.start, messages.end) == (5000 - MESSAGE_PAGE, 5000)
        assert "message 4999:" in screen_text(app) and "end of thread" in screen_text(app)

        messages.scroll_home(animate=False)  # reaching the top loads the page before, keeping the place
        await pilot.pause()
        await settle(pilot, rounds=5)
        assert messages.start == 5000 - 2 * MESSAGE_PAGE and messages.end == 5000
        first_old = next(v for v in messages.views if v.index == 5000 - MESSAGE_PAGE)
        assert first_old.virtual_region.y - messages.scroll_y <= 2  # still looking at the same message

        for _ in range(3):  # keep scrolling up: the window never grows past its cap
            messages.scroll_home(animate=False)
            await pilot.pause()
            await settle(pilot, rounds=5)
        assert len(messages.views) <= MAX_MOUNTED
        assert messages.end - messages.start == len(messages.views)

        await pilot.press("home")
        await settle(pilot)
        assert messages.start == 0 and "start of thread" in screen_text(app)
        assert "message 0:" in screen_text(app)
        await pilot.press("s")  # collapse the summary
        await pilot.pause()
        assert "wants [b]literal[/b] text" not in screen_text(app)


async def test_summarise_and_suggested_memories_from_a_thread(tui_store: Store) -> None:
    msgs = [
        MessageIn("user", "I prefer dark roast coffee in the morning.", "u1"),
        MessageIn("assistant", "Noted. A French press brings out dark roasts well.", "a1"),
        MessageIn("user", "I'm working on a home automation project with Home Assistant.", "u2"),
        MessageIn("assistant", "Start with a few Zigbee sensors and one automation you use daily.", "a2"),
        MessageIn("user", "My daughter is allergic to peanuts.", "u3"),
    ]
    tid = tui_store.write_thread(ThreadIn("generic", "c", "Mornings and projects", msgs)).thread_id
    app = make_app(tui_store)
    async with app.run_test(size=(100, 30)) as pilot:
        await go_to(pilot, "enter", ThreadViewScreen)
        assert "Summary ·" not in screen_text(app)
        await pilot.press("u")
        await settle(pilot, rounds=4)
        summary = tui_store.get_summary(tid)
        assert summary is not None and summary.last_message_seq == 4
        assert "up to message #5" in screen_text(app)

        await pilot.press("m")
        await settle(pilot)
        modal = app.screen
        assert isinstance(modal, SuggestionsScreen)
        assert {s.content for s in modal.pending} == {m.content for m in msgs if m.role == "user"}
        first = modal.pending[0]
        await pilot.press("a")
        await settle(pilot)
        [memory] = [m for m in tui_store.list_memories() if m.content == first.content]
        assert memory.origin == "extract" and memory.source_thread_id == tid
        rejected = modal.pending[0]
        await pilot.press("r")
        await settle(pilot)
        assert [s.id for s in modal.pending] != [] and rejected.id not in [s.id for s in modal.pending]
        assert all(m.content != rejected.content for m in tui_store.list_memories())
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, ThreadViewScreen)


async def test_context_preview_shows_tiers_within_the_budget(tui_store: Store) -> None:
    msgs = [
        MessageIn(
            "user" if i % 2 == 0 else "assistant", f"turn {i}: we talk about backups and restic " * 8, f"m{i}"
        )
        for i in range(40)
    ]
    tid = tui_store.write_thread(ThreadIn("generic", "ctx", "Backups [bold]chat[/bold]", msgs)).thread_id
    pinned = tui_store.add_memory("Prefers restic over borg", "preference", pinned=True).memory
    app = make_app(tui_store)
    async with app.run_test(size=(100, 30)) as pilot:
        await go_to(pilot, "enter", ThreadViewScreen)
        await pilot.press("c")
        await settle(pilot, rounds=4)
        modal = app.screen
        assert isinstance(modal, ContextPreviewScreen)
        result = modal.result
        assert result is not None and result.token_stats.budget == 4000
        assert result.token_stats.total <= 4000
        assert result.messages[-1]["content"] == msgs[-1].content
        text = screen_text(app)
        assert "Tier 3 · recent, verbatim" in text and "Backups [bold]chat[/bold]" in text
        # A smaller budget rebuilds; previewing never counts as using a memory.
        budget = modal.query_one("#context-budget", Input)
        budget.value = "600"
        await pilot.press("enter")
        await settle(pilot, rounds=4)
        assert modal.result is not None and modal.result.token_stats.budget == 600
        assert modal.result.token_stats.total <= 600
        assert tui_store.get_memory(pinned.id).access_count == 0
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, ThreadViewScreen) and tid


async def test_every_sortable_column_shows_an_arrow(tui_store: Store) -> None:
    """Issue 28.12: only the sorted column had an arrow (none at all when sorted by creation), so nothing
    said the other headers sort too. The sorted one has ▲/▼, every other sortable one ↕."""
    tui_store.write_thread(ThreadIn("generic", "t", "One thread", [MessageIn("user", "hello", "m")]))
    app = make_app(tui_store, greet=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ThreadsScreen)
        table = screen.query_one("#threads-table", DataTable)

        def labels() -> list[str]:
            return [str(c.label) for c in table.columns.values()]

        assert labels() == ["Title ↕", "Source ↕", "Msgs ↕", "Tokens ↕", "Last active ▼"]
        await pilot.press("o")  # by creation: no column for it, every header still says it sorts
        await settle(pilot)
        assert labels() == ["Title ↕", "Source ↕", "Msgs ↕", "Tokens ↕", "Last active ↕"]
        await pilot.press("o")
        await settle(pilot)
        assert labels() == ["Title ▲", "Source ↕", "Msgs ↕", "Tokens ↕", "Last active ↕"]
