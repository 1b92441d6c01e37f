"""Reading (issue 18): the Memories detail pane at 80 columns (full text, history, source), copy, search
terms highlighted, the search filters, help headings, the importance field and the title sort arrow."""

from __future__ import annotations

from textual.widgets import DataTable, Input, Select

from app.tui.screens.help import HelpScreen
from app.tui.screens.memories import MemoriesScreen
from app.tui.screens.memory_edit import MemoryEditScreen
from app.tui.screens.search import SearchScreen
from app.tui.screens.thread_view import ThreadViewScreen
from app.tui.screens.threads import ThreadsScreen
from store import MessageIn, Store, ThreadIn
from tests.app.tui.tui_helpers import go_to, make_app, screen_text, settle

LONG = (
    "Prefers long, careful explanations of database internals, with the write-ahead log, checkpoints and "
    "page cache each explained, and a worked example at the end of every answer"
)


async def test_memories_detail_pane_shows_full_text_history_and_source_at_80_columns(
    tui_store: Store,
) -> None:
    tid = tui_store.write_thread(
        ThreadIn("generic", "src", "Where the memory came from", [MessageIn("user", "hi", "m1")])
    ).thread_id
    m = tui_store.add_memory(
        LONG, "preference", importance=9, source_thread_id=tid, origin="extracted"
    ).memory
    tui_store.change_importance(m.id, -1)
    app = make_app(tui_store, greet=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await go_to(pilot, "2", MemoriesScreen)
        text = " ".join(screen_text(app).split())
        assert LONG in text  # every word, wrapped in the pane, though the table cuts it
        assert (
            "History (newest first):" in text and "importance 9 → 8" in text and "added (extracted)" in text
        )
        assert "from thread" in text and "Where the memory came from" in text
        await pilot.press("y")
        assert app.clipboard == LONG
        await pilot.press("t")
        await settle(pilot)
        assert isinstance(app.screen, ThreadViewScreen) and app.screen.thread_id == tid


async def test_search_highlights_the_terms_and_filters_by_role_and_date(tui_store: Store) -> None:
    msgs = [
        MessageIn("user", "How do I back up the NAS with restic?", "m0", created_at=1_700_000_000),
        MessageIn("assistant", "Use restic with a systemd timer.", "m1", created_at=1_700_000_100),
    ]
    tui_store.write_thread(ThreadIn("generic", "t", "Backups", msgs))
    app = make_app(tui_store, greet=False)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await go_to(pilot, "3", SearchScreen)
        await pilot.press(*"restic")
        await pilot.pause(0.35)
        await settle(pilot)
        table = screen.query_one("#search-results", DataTable)
        assert table.row_count == 2
        snippet = table.get_row_at(0)[4]
        marked = [snippet.plain[s.start : s.end] for s in snippet.spans if "reverse" in str(s.style)]
        assert marked and all(w.lower() == "restic" for w in marked)
        await pilot.press("ctrl+l")  # the filter bar, the role first
        await settle(pilot)
        assert screen.query_one("#search-filter-bar").display
        await pilot.press("enter", "down", "down", "enter")  # any role -> system? no: user, assistant
        await pilot.pause(0.3)
        await settle(pilot)
        roles = {screen.results[i].role for i in range(len(screen.results))}
        chosen = str(screen.query_one("#search-role").value)  # type: ignore[attr-defined]
        assert chosen in ("user", "assistant") and roles == {chosen}
        source = screen.query_one("#search-source", Select)
        assert [str(o[0]) for o in source._options] == ["any source", "generic"]  # noqa: SLF001 - its choices
        await pilot.press("tab", "tab", "tab", *"2099-01-01", "enter")  # from: a date after every message
        await settle(pilot)
        assert screen.results == [] and "Nothing found" in screen_text(app)
        until = screen.query_one("#search-since", Input)
        await pilot.press("ctrl+a", "ctrl+k", *"2023-13-45", "enter")
        await settle(pilot)
        assert until.value == "2023-13-45" and "not a date" in screen_text(app)


async def test_help_has_readable_headings_no_duplicates_and_the_context_preview(demo_store: Store) -> None:
    app = make_app(demo_store)
    async with app.run_test(size=(100, 200)) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        text = screen_text(app)
        for heading in ("Memory editor", "Context preview", "Questions (yes/no)", "Cleanup thresholds"):
            assert heading in text
        assert "Screen" not in text  # no class names as headings
        assert "+/-" not in text  # the footer's shorthand: here "+ =" and "-" are rows of their own
        rows = [line.strip() for line in text.splitlines() if "—" in line]
        assert len(rows) == len(set(rows))


async def test_importance_field_shows_what_was_typed(tui_store: Store) -> None:
    app = make_app(tui_store, greet=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+n")
        await settle(pilot)
        assert isinstance(app.screen, MemoryEditScreen)
        await pilot.click("#memory-importance")
        await pilot.press("ctrl+a", "ctrl+k", "1", "0")
        await pilot.pause()
        line = next(line for line in screen_text(app).splitlines() if "Importance 1-10" in line)
        assert "10" in line.split("Importance 1-10", 1)[1], line


async def test_title_sort_arrow_points_up(demo_store: Store) -> None:
    app = make_app(demo_store)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, ThreadsScreen)
        assert "Last active ▼" in screen_text(app)
        await pilot.press("o", "o")  # created, then title (A→Z)
        await settle(pilot)
        assert "Title ▲" in screen_text(app) and "▼" not in screen_text(app).splitlines()[3]
