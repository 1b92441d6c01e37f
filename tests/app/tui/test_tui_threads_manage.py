"""Threads for daily use (issue 18): the TUI notices other processes' writes, threads are renamed,
archived and deleted with keys, `s` summarises a short thread (and says so), find-in-thread, copy."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.widgets import DataTable, Input

from app.tui.screens.confirm import ConfirmScreen
from app.tui.screens.memories import MemoriesScreen
from app.tui.screens.prompt import PromptScreen
from app.tui.screens.thread_view import ThreadViewScreen
from app.tui.screens.threads import ThreadsScreen
from app.tui.widgets.message_list import MessageList
from embeddings import FakeEmbedder
from store import MessageIn, Store, ThreadIn
from tests.app.tui.tui_helpers import go_to, make_app, screen_text, settle


def _short_thread(store: Store, title: str = "Short chat about kettles", n: int = 6) -> int:
    msgs = [
        MessageIn(
            "user" if i % 2 == 0 else "assistant",
            f"We decided to buy the blue kettle number {i}. The kettle boils water fast."
            if i != 4
            else "Remember the teapot warranty card.",
            f"m{i}",
        )
        for i in range(n)
    ]
    return store.write_thread(ThreadIn("generic", f"t-{title}", title, msgs)).thread_id


async def test_writes_by_another_process_show_up_within_a_second(tui_store: Store) -> None:
    tui_store.add_memory("First memory", "fact")
    app = make_app(tui_store, greet=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await go_to(pilot, "2", MemoriesScreen)
        assert app.status.memories == 1
        other = Store(Path("chat.db"), embedder=FakeEmbedder())  # another process's connection
        try:
            other.add_memory("Written by the CLI beside the TUI", "preference")
            _short_thread(other)
        finally:
            other.close()
        await pilot.pause(1.0)
        await settle(pilot)
        assert app.status.memories == 2 and app.status.threads == 1
        assert "Written by the CLI beside the TUI" in screen_text(app)
        assert "2 memories" in screen_text(app)


async def test_rename_archive_and_delete_a_thread_with_keys(tui_store: Store) -> None:
    keep = _short_thread(tui_store, "Keep this one")
    private = _short_thread(tui_store, "Private by mistake")
    app = make_app(tui_store, greet=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ThreadsScreen)
        table = screen.query_one("#threads-table", DataTable)
        assert str(table.get_row_at(0)[0]) == "Private by mistake"  # newest first
        await pilot.press("e")
        await settle(pilot)
        assert isinstance(app.screen, PromptScreen)
        await pilot.press("ctrl+a", "ctrl+k", *"Medical notes", "enter")
        await settle(pilot)
        assert tui_store.get_thread(private).title == "Medical notes"
        assert "Medical notes" in screen_text(app)
        await pilot.press("a")  # archive: gone from the list and from search
        await settle(pilot)
        assert tui_store.get_thread(private).archived_at is not None
        assert table.row_count == 1 and "Medical notes" not in screen_text(app)
        assert "1 thread ·" in screen_text(app)
        assert tui_store.search("teapot", keyword_only=True).results[0].thread_id == keep
        await pilot.press("A")  # the archived list
        await settle(pilot)
        assert "1 archived thread" in screen_text(app) and "Medical notes" in screen_text(app)
        await pilot.press("a")  # unarchive
        await settle(pilot)
        assert tui_store.get_thread(private).archived_at is None
        await pilot.press("A")
        await settle(pilot)
        assert table.row_count == 2
        await pilot.press("d")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        assert "Medical notes" in screen_text(app) and "for good" in screen_text(app)
        await pilot.press("y")
        await settle(pilot)
        assert [t.id for t in tui_store.list_threads(archived=None)] == [keep]
        assert table.row_count == 1


async def test_s_summarises_a_short_thread_and_says_so(tui_store: Store) -> None:
    tid = _short_thread(tui_store)
    assert tui_store.get_summary(tid) is None  # under 30 messages: the import did not summarise it
    app = make_app(tui_store, greet=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await go_to(pilot, "enter", ThreadViewScreen)
        await pilot.press("s")
        await settle(pilot, rounds=5)
        assert tui_store.get_summary(tid) is not None
        notes = [n.message for n in app._notifications]  # noqa: SLF001 - what the toasts say
        assert any(n.startswith("Summary written: 6 messages") for n in notes), notes
        assert "Summary ·" in screen_text(app)
        await pilot.press("s")  # now it only hides and shows
        await settle(pilot)
        assert sum(n.startswith("Summary written") for n in (m.message for m in app._notifications)) == 1  # noqa: SLF001


async def test_find_in_thread_and_copy_the_message(tui_store: Store) -> None:
    _short_thread(tui_store, n=12)
    app = make_app(tui_store, greet=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ThreadViewScreen)
        await pilot.press("ctrl+f")
        assert screen.query_one("#find-input", Input).has_focus
        await pilot.press(*"number 1", "enter")  # messages 1 and 10 (message 4 is the teapot)
        await settle(pilot)
        assert "match 1 of" in screen_text(app)
        first = screen.matches[0]
        target = [v for v in screen.query_one(MessageList).views if v.has_class("-target")]
        assert [v.index for v in target] == [first]
        await pilot.press("enter")  # Enter again: the next match
        await settle(pilot)
        assert "match 2 of" in screen_text(app)
        await pilot.press("escape")  # closes the find bar, stays in the thread
        assert isinstance(app.screen, ThreadViewScreen)
        assert not screen.query_one("#find-bar").display
        await pilot.press("y")
        shown = next(v for v in screen.query_one(MessageList).views if v.has_class("-target"))
        assert app.clipboard == shown.message.content
        assert "Copied message" in list(app._notifications)[-1].message  # noqa: SLF001
        await pilot.press("slash", *"no such words", "enter")
        await settle(pilot)
        assert "no match" in screen_text(app)


async def test_archive_and_delete_keep_the_cursor_in_place_and_say_it_once(tui_store: Store) -> None:
    """Issue 28.9: after archiving the highlighted thread the cursor jumped to the top of the list; the
    next thread now moves up under it (as after a delete), and each action is one notification."""
    titles = [f"Thread {c}" for c in "ABCDE"]
    ids = {t: _short_thread(tui_store, t) for t in titles}  # newest first: E, D, C, B, A
    app = make_app(tui_store, greet=False)
    said: list[str] = []  # every toast, kept: a toast expires after seconds, a slow run outlives it
    notify = app.notify

    def recording_notify(message: str, *args: Any, **kwargs: Any) -> None:
        said.append(str(message))
        notify(message, *args, **kwargs)

    app.notify = recording_notify  # type: ignore[method-assign]

    def notes() -> list[str]:
        return list(said)

    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ThreadsScreen)
        table = screen.query_one("#threads-table", DataTable)
        await pilot.press("down", "down")  # on C
        await pilot.press("a")
        await settle(pilot)
        assert tui_store.get_thread(ids["Thread C"]).archived_at is not None
        assert table.cursor_row == 2 and screen.current_thread_id() == ids["Thread B"]
        assert sum("Archived" in n for n in notes()) == 1
        await pilot.press("d")
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        assert [t.title for t in tui_store.list_threads()] == ["Thread E", "Thread D", "Thread A"]
        assert table.cursor_row == 2 and screen.current_thread_id() == ids["Thread A"]
        await pilot.press("d", "y")  # the last row: the cursor stays on the new last row
        await settle(pilot)
        assert table.cursor_row == 1 and screen.current_thread_id() == ids["Thread D"]
        assert sum("Deleted" in n for n in notes()) == 2
        await pilot.press("A")  # the archived list: unarchive C
        await settle(pilot)
        await pilot.press("a")
        await settle(pilot)
        assert tui_store.get_thread(ids["Thread C"]).archived_at is None
        assert sum("Unarchived" in n for n in notes()) == 1
        assert len(notes()) == 4, notes()
