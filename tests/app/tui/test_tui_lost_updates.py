"""A change made elsewhere while the TUI shows a memory is built on, never written over (issue 31, 5: a
deterministic case overwrote an acknowledged CLI edit; the TUI's `+`/`-` and cleanup's keep read the
value outside the write transaction)."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import TextArea

from app.cli import main
from app.tui.screens.cleanup import CleanupScreen
from app.tui.screens.memory_edit import MemoryEditScreen
from store import Store
from store.records import now
from tests.app.tui.tui_helpers import go_to, make_app, open_memories, settle

OLD = now() - 200 * 86400


def _cli(*args: str) -> None:
    """An acknowledged edit from another `memapp` command (same code path as the shell's)."""
    assert main(["--db", "chat.db", *args, "--json"]) == 0


async def test_saving_the_editor_keeps_a_cli_edit_made_while_it_was_open(
    tui_store: Store, no_model_config: Path
) -> None:
    m = tui_store.add_memory("Prefers tea over coffee", "preference", importance=5).memory
    app = make_app(tui_store)
    async with app.run_test(size=(100, 30)) as pilot:
        await open_memories(pilot)
        await pilot.press("e")
        await settle(pilot)
        editor = app.screen
        assert isinstance(editor, MemoryEditScreen)
        _cli("--config", str(no_model_config), "memory", "edit", str(m.id), "--importance", "8")
        _cli("--config", str(no_model_config), "memory", "pin", str(m.id))
        editor.query_one("#memory-text", TextArea).load_text("Prefers green tea over coffee")
        await pilot.click("#save")
        await settle(pilot)
    saved = tui_store.get_memory(m.id)
    # The text the user typed, and the importance and pin the CLI set meanwhile (before: 5, unpinned).
    assert (saved.content, saved.importance, saved.pinned) == ("Prefers green tea over coffee", 8, True)


async def test_plus_after_a_cli_edit_builds_on_it(tui_store: Store, no_model_config: Path) -> None:
    m = tui_store.add_memory("Writes Rust at work", "skill", importance=5).memory
    app = make_app(tui_store)
    async with app.run_test(size=(100, 30)) as pilot:
        await open_memories(pilot)
        _cli("--config", str(no_model_config), "memory", "edit", str(m.id), "--importance", "8")
        await pilot.press("+")
        await settle(pilot)
        _cli("--config", str(no_model_config), "memory", "pin", str(m.id))
        await pilot.press("p")  # shown unpinned, stored pinned: the toggle unpins what is stored
        await settle(pilot)
    after = tui_store.get_memory(m.id)
    assert (after.importance, after.pinned) == (9, False)


async def test_keep_never_lowers_an_importance_raised_meanwhile(
    tui_store: Store, no_model_config: Path
) -> None:
    """Keep raises a candidate to the cleanup threshold; if a CLI edit raised it further meanwhile, that
    stands (before: the stale difference was added on top, 7 became 9)."""
    m = tui_store.add_memory("Once tried the Dvorak layout", "fact", importance=1, created_at=OLD).memory
    app = make_app(tui_store)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await go_to(pilot, "4", CleanupScreen)
        assert [c.memory.id for c in screen.candidates] == [m.id]
        _cli("--config", str(no_model_config), "memory", "edit", str(m.id), "--importance", "7")
        await pilot.press("k")
        await settle(pilot)
    assert tui_store.get_memory(m.id).importance == 7
