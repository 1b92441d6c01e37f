"""Cleanup (candidates with reasons, apply after a confirm, undo, trash restore and purge) and Import
(a path typed in the UI, run in a worker with progress, a report of what was added and skipped)."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable, Input, ProgressBar, Static

from app.tui.screens.cleanup import CleanupScreen
from app.tui.screens.confirm import ConfirmScreen
from app.tui.screens.import_screen import ImportScreen
from store import Store
from store.records import now
from tests.app.tui.tui_helpers import go_to, make_app, screen_text, settle, write_generic

OLD = now() - 200 * 86400


async def test_cleanup_apply_undo_restore_and_purge(tui_store: Store) -> None:
    faded = tui_store.add_memory("Once tried the Dvorak layout", "fact", importance=1, created_at=OLD).memory
    also = tui_store.add_memory("Had a cold in March", "fact", importance=2, created_at=OLD).memory
    pinned = tui_store.add_memory(
        "Allergic to penicillin", "fact", importance=1, pinned=True, created_at=OLD
    ).memory
    kept = tui_store.add_memory("Writes Python daily", "skill", importance=8, created_at=OLD).memory
    app = make_app(tui_store)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await go_to(pilot, "4", CleanupScreen)
        assert [c.memory.id for c in screen.candidates] == [faded.id, also.id]
        detail = str(screen.query_one("#candidate-detail", Static).render())
        assert "importance 1 (below 3)" in detail and "never accessed" in detail
        assert "Dvorak" in screen_text(app)

        await pilot.press("a")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await settle(pilot)
        assert tui_store.get_memory(faded.id).deleted_at is not None
        assert tui_store.get_memory(also.id).deleted_at is not None
        assert tui_store.get_memory(pinned.id).deleted_at is None
        assert tui_store.get_memory(kept.id).deleted_at is None
        assert [h.event for h in tui_store.memory_history(faded.id)][-1] == "cleanup"
        assert screen.candidates == [] and {m.id for m in screen.trash} == {faded.id, also.id}

        await pilot.press("u")
        await settle(pilot)
        assert tui_store.get_memory(faded.id).deleted_at is None
        assert tui_store.get_memory(also.id).deleted_at is None

        await pilot.press("a", "y")  # again, then restore one and purge the other from the Trash tab
        await settle(pilot)
        await pilot.press("t")
        await settle(pilot)
        trash_ids = [int(str(r.key.value)) for r in screen.query_one("#trash-table", DataTable).ordered_rows]
        assert set(trash_ids) == {faded.id, also.id}
        first = trash_ids[0]
        await pilot.press("r")
        await settle(pilot)
        assert tui_store.get_memory(first).deleted_at is None
        [other] = [m.id for m in screen.trash]
        await pilot.press("x")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen) and app.screen.danger
        await pilot.press("y")
        await settle(pilot)
        assert [m.id for m in tui_store.list_memories(trash=True)] == []
        assert other not in {m.id for m in tui_store.list_memories(limit=100)}


async def test_import_from_the_ui(tui_store: Store, tmp_path: Path) -> None:
    export = write_generic(
        tmp_path / "export.json",
        [
            {
                "id": "c1",
                "title": "Sourdough starter",
                "messages": [
                    {"id": "a", "role": "user", "content": "How often do I feed a sourdough starter?"},
                    {"id": "b", "role": "assistant", "content": "Once a day at room temperature."},
                ],
            },
            {"id": "c2", "title": "Broken", "messages": [{"id": "x", "role": "wizard", "content": "?"}]},
        ],
    )
    app = make_app(tui_store, greet=False)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await go_to(pilot, "5", ImportScreen)
        screen.query_one("#import-path", Input).value = str(export)
        await pilot.press("ctrl+r")
        await settle(pilot, rounds=4)
        [thread] = tui_store.list_threads()
        assert thread.title == "Sourdough starter" and thread.message_count == 2
        bar = screen.query_one("#import-progress", ProgressBar)
        assert bar.total is not None and bar.progress == bar.total
        report = str(screen.query_one("#import-report", Static).render())
        assert "threads added     1" in report and "messages added    2" in report
        assert "Skipped 1" in report and "c2" in report
        assert app.status.threads == 1

        await pilot.press("ctrl+r")  # the same file again: nothing new
        await settle(pilot, rounds=4)
        report = str(screen.query_one("#import-report", Static).render())
        assert "threads added     0" in report and "threads unchanged 1" in report
        assert tui_store.count_threads() == 1


async def test_import_explains_a_missing_path(tui_store: Store) -> None:
    app = make_app(tui_store, greet=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("5")
        await settle(pilot)
        screen = app.screen
        screen.query_one("#import-path", Input).value = "no/such/file.json"
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert "There is no file or folder" in str(
            screen.query_one("#import-progress-label", Static).render()
        )
        assert tui_store.count_threads() == 0


async def test_switches_say_whether_they_are_on(tui_store: Store) -> None:
    """Issue 28.12: the Import screen's "Embed now" switch showed its state only by the knob's side and
    colour; the word beside it says on or off, and follows the switch."""
    from textual.widgets import Switch

    app = make_app(tui_store, greet=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await go_to(pilot, "5", ImportScreen)
        line = next(row for row in screen_text(app).splitlines() if "Embed now" in row)
        assert line.rstrip().endswith("on"), line
        screen.query_one("#import-embed", Switch).value = False
        await pilot.pause()
        line = next(row for row in screen_text(app).splitlines() if "Embed now" in row)
        assert line.rstrip().endswith("off: embed later"), line


async def test_the_demo_shows_cleanup_work_with_the_default_settings(tui_store: Store) -> None:
    """Issue 28.12: every demo memory was created at load time, so with the default thresholds (importance
    below 3, fewer than 2 uses, untouched for 90 days) Cleanup was empty and a newcomer never saw what it
    does. Some demo memories are old, unimportant and unused now; the pinned ones never appear."""
    from store.importing import load_demo

    load_demo(tui_store)  # the real dates, as a newcomer gets them (not the snapshots' pinned ones)
    app = make_app(tui_store, greet=False)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await go_to(pilot, "4", CleanupScreen)
        assert len(screen.candidates) >= 2
        assert not any(c.memory.pinned for c in screen.candidates)
        shown = screen_text(app)
        assert all(c.memory.content[:20] in shown for c in screen.candidates)
