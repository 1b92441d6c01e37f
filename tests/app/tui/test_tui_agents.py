"""The TUI side of issue 16: imported text-list suggestions reviewed like the others; a coding-agent
session's tool runs shown as one line under the message."""

from __future__ import annotations

from pathlib import Path

from app.tui.screens.suggestions import SuggestionsScreen
from app.tui.screens.thread_view import ThreadViewScreen
from store import Store
from store.importing.pipeline import import_paths
from tests.app.tui.tui_helpers import make_app, screen_text, settle

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "import"


async def test_imported_suggestions_are_reviewed_and_only_accepting_makes_memories(tui_store: Store) -> None:
    import_paths(tui_store, [FIXTURES / "text" / "chatgpt-memories.txt"])
    assert tui_store.list_memories() == []
    app = make_app(tui_store)
    async with app.run_test(size=(110, 30)) as pilot:
        await settle(pilot)
        app.action_imported_suggestions()
        await settle(pilot, rounds=4)
        modal = app.screen
        assert isinstance(modal, SuggestionsScreen)
        assert len(modal.pending) == 5 and modal.pending[0].content.startswith("Prefers concise answers")
        await pilot.press("a")
        await settle(pilot)
        assert [m.content for m in tui_store.list_memories()] == [
            "Prefers concise answers without bullet-point summaries at the end."
        ]
        await pilot.press("r")
        await settle(pilot)
        assert len(modal.pending) == 3 and len(tui_store.list_memories()) == 1


async def test_tool_runs_show_as_one_line_in_the_thread_view(tui_store: Store) -> None:
    import_paths(tui_store, [FIXTURES / "claude-code"])
    app = make_app(tui_store)
    async with app.run_test(size=(120, 50)) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot, rounds=4)
        assert isinstance(app.screen, ThreadViewScreen)
        text = screen_text(app)
        assert "3 tool calls: Read, Bash, Task · 1 failed" in text
        assert "attached: 1 image" in text
        assert "· project /home/ana/src/tide · branch" in text  # beside the thread facts
