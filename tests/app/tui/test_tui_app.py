"""The app as a whole: the empty-database welcome, loading the demo, the status line, the command
palette, the help screen (every binding of every screen) and worker errors as notifications."""

from __future__ import annotations

from textual.binding import Binding

from app.tui.commands import MemappCommands
from app.tui.screens.help import HelpScreen, screen_sections
from app.tui.screens.import_screen import ImportScreen
from app.tui.screens.memories import MemoriesScreen
from app.tui.screens.memory_edit import MemoryEditScreen
from app.tui.screens.threads import ThreadsScreen
from app.tui.screens.welcome import WelcomeScreen
from app.tui.work import run_in_thread
from store import Store
from store.errors import StoreError
from tests.app.tui.tui_helpers import make_app, screen_text, settle


async def test_empty_database_greets_and_loads_the_demo(tui_store: Store) -> None:
    app = make_app(tui_store)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, WelcomeScreen)
        text = screen_text(app)
        assert "It is empty" in text and "Load the demo data" in text and "chat.db" in text
        await pilot.press("d")  # on the Import screen, with its progress bar and report
        await settle(pilot, rounds=5)
        assert isinstance(app.screen, ImportScreen)
        assert "Imported the demo data" in screen_text(app)
        assert tui_store.count_threads() >= 5 and len(tui_store.list_memories()) >= 5
        await pilot.press("1")  # the report has the focus: screen keys work at once
        await settle(pilot)
        assert isinstance(app.screen, ThreadsScreen)
        assert app.status.threads == tui_store.count_threads()
        assert "Home-lab backup strategy" in screen_text(app)
        status = screen_text(app).splitlines()[-2]
        assert "chat.db" in status and f"{app.status.threads} threads" in status
        assert "tokens exact" in status and "semantic ready" in status


async def test_welcome_add_a_memory_opens_the_editor(tui_store: Store) -> None:
    app = make_app(tui_store)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("n")
        await settle(pilot)
        assert isinstance(app.screen, MemoryEditScreen)


async def test_command_palette_runs_global_and_screen_commands(demo_store: Store) -> None:
    app = make_app(demo_store)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        await pilot.press(*"go to memories")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, MemoriesScreen)
        mid = app.screen.current_id()
        assert mid is not None
        was_pinned = demo_store.get_memory(mid).pinned
        await pilot.press("ctrl+p")
        await pilot.press(*"memories: pin")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await settle(pilot)
        assert demo_store.get_memory(mid).pinned is (not was_pinned)


async def test_palette_lists_every_screen_binding(demo_store: Store) -> None:
    app = make_app(demo_store)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        provider = MemappCommands(app.screen)
        names = [name for name, _, _ in provider._commands()]
        for mode in ("Threads", "Memories", "Search", "Cleanup", "Import"):
            assert f"Go to {mode}" in names
        described = {b.description for b in Binding.make_bindings(ThreadsScreen.BINDINGS) if b.description}
        assert {f"Threads: {d}" for d in described} <= set(names)


async def test_help_lists_every_binding(demo_store: Store) -> None:
    app = make_app(demo_store)
    async with app.run_test(size=(140, 200)) as pilot:  # tall enough to show the whole help at once
        await settle(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        sections = screen_sections(app, app.screen.current)
        assert sections[0][0] == "Threads"  # the screen it was opened from comes first
        rendered = screen_text(app)
        for _title, bindings in sections:
            for b in Binding.make_bindings(bindings):
                if b.description:  # a group's keys are one row, under the group's name
                    assert (b.group.description if b.group else b.description) in rendered
        for b in Binding.make_bindings(app.BINDINGS):
            if b.description and not b.system:
                assert b.description in rendered
        assert "semantic  ready" in rendered and "ctrl+p" in rendered
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, ThreadsScreen)


async def test_help_lists_raising_and_lowering_importance_once(demo_store: Store) -> None:
    """Issue 28.12: the help listed "+ = Importance" and "- Less important" as two rows for one thing."""
    app = make_app(demo_store)
    async with app.run_test(size=(140, 200)) as pilot:
        await settle(pilot)
        await pilot.press("2")
        await settle(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        rows = [
            line for line in screen_text(app).splitlines() if "Importance —" in line or "important —" in line
        ]
        assert len(rows) == 1, rows
        assert "+ = -" in rows[0] and "Importance — Raise (+) or lower (-)" in rows[0]


async def test_a_failing_worker_becomes_a_notification(demo_store: Store) -> None:
    app = make_app(demo_store)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)

        def boom() -> None:
            raise StoreError("disk [/x] full")

        run_in_thread(app.screen, boom, description="writing")
        await settle(pilot)
        assert any(n.message == "disk [/x] full" and n.severity == "error" for n in app._notifications)
        assert app.is_running
