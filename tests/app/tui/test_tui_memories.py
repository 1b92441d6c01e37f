"""Memories screen: keys drive the real app on a temp chat.db; the database and the screen are checked."""

from __future__ import annotations

from textual.widgets import DataTable, Input, Select, Static, Switch, TextArea

from app.tui.screens.confirm import ConfirmScreen
from app.tui.screens.memories import MemoriesScreen
from app.tui.screens.memory_edit import MemoryEditScreen
from store import Store
from tests.app.tui.tui_helpers import make_app, open_memories, screen_text, settle


def _row_ids(screen: MemoriesScreen) -> list[int]:
    table = screen.query_one("#memories-table", DataTable)
    return [int(str(r.key.value)) for r in table.ordered_rows]


async def test_add_memory_with_the_editor(tui_store: Store) -> None:
    tui_store.add_memory("I keep notes in plain Markdown files", "preference")
    app = make_app(tui_store)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_memories(pilot)
        await pilot.press("n")
        await pilot.pause()
        editor = app.screen
        assert isinstance(editor, MemoryEditScreen)
        editor.query_one("#memory-text", TextArea).load_text("Working on the memapp TUI in Textual")
        editor.query_one("#memory-category", Select).value = "project"
        editor.query_one("#memory-importance", Input).value = "8"
        editor.query_one("#memory-pinned", Switch).value = True
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert app.screen is screen
        [added] = tui_store.list_memories(category="project")
        assert (added.content, added.importance, added.pinned) == (
            "Working on the memapp TUI in Textual",
            8,
            True,
        )
        assert _row_ids(screen)[0] == added.id  # pinned first, and the cursor moved to it
        assert screen.current_id() == added.id
        assert "Working on the memapp TUI in Textual" in screen_text(app)
        assert [h.event for h in tui_store.memory_history(added.id)] == ["add"]


async def test_editor_validation_keeps_the_dialog_open(tui_store: Store) -> None:
    app = make_app(tui_store, greet=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await open_memories(pilot)
        await pilot.press("n")
        await pilot.pause()
        editor = app.screen
        assert isinstance(editor, MemoryEditScreen)
        editor.query_one("#memory-importance", Input).value = "11"
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.screen is editor
        errors = str(editor.query_one("#memory-errors", Static).render())
        assert "text is empty" in errors and "Importance must be 1-10" in errors
        await pilot.press("escape")
        await settle(pilot)
        assert tui_store.list_memories() == []


async def test_edit_pin_importance_delete_and_undo(tui_store: Store) -> None:
    m = tui_store.add_memory("Prefers tea over coffee", "preference", importance=5).memory
    app = make_app(tui_store)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_memories(pilot)
        await pilot.press("e")
        await settle(pilot)
        editor = app.screen
        assert isinstance(editor, MemoryEditScreen)
        assert editor.query_one("#memory-text", TextArea).text == "Prefers tea over coffee"
        editor.query_one("#memory-text", TextArea).load_text("Prefers green tea over coffee")
        editor.query_one("#memory-category", Select).value = "fact"
        await pilot.click("#save")
        await settle(pilot)
        edited = tui_store.get_memory(m.id)
        assert (edited.content, edited.category, edited.user_edited) == (
            "Prefers green tea over coffee",
            "fact",
            True,
        )

        await pilot.press("p")
        await settle(pilot)
        assert tui_store.get_memory(m.id).pinned
        assert "●" in screen_text(app)
        await pilot.press("p")
        await settle(pilot)
        assert not tui_store.get_memory(m.id).pinned

        await pilot.press("+", "+")
        await settle(pilot)
        await pilot.press("-")
        await settle(pilot)
        assert tui_store.get_memory(m.id).importance == 6

        await pilot.press("d")
        await settle(pilot)
        assert tui_store.get_memory(m.id).deleted_at is not None
        assert _row_ids(screen) == []
        assert any("Press u to undo" in str(n.message) for n in app._notifications)
        await pilot.press("u")
        await settle(pilot)
        assert tui_store.get_memory(m.id).deleted_at is None
        assert _row_ids(screen) == [m.id]
        events = [h.event for h in tui_store.memory_history(m.id)]
        assert events == [
            "add",
            "edit",
            "recategorise",
            "pin",
            "unpin",
            "importance",
            "importance",
            "importance",
            "delete",
            "restore",
        ]


async def test_near_duplicate_of_a_pinned_memory_asks_and_can_add_anyway(tui_store: Store) -> None:
    pinned = tui_store.add_memory("I use restic for backups to a storage box", "fact", pinned=True).memory
    app = make_app(tui_store)
    async with app.run_test(size=(100, 30)) as pilot:
        await open_memories(pilot)
        await pilot.press("n")
        await pilot.pause()
        editor = app.screen
        assert isinstance(editor, MemoryEditScreen)
        editor.query_one("#memory-text", TextArea).load_text("I use restic for backups to a storage box!")
        editor.query_one("#memory-category", Select).value = "fact"
        await pilot.press("ctrl+s")
        await settle(pilot)
        question = app.screen
        assert isinstance(question, ConfirmScreen)
        assert f"memory {pinned.id}" in question.message and "pinned" in question.message
        await pilot.press("n")  # back to editing, with the text still there
        await settle(pilot)
        assert isinstance(app.screen, MemoryEditScreen)
        assert (
            app.screen.query_one("#memory-text", TextArea).text
            == "I use restic for backups to a storage box!"
        )
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await settle(pilot)
        assert len(tui_store.list_memories(category="fact")) == 2
        assert tui_store.get_memory(pinned.id).content == "I use restic for backups to a storage box"


async def test_category_and_text_filters(tui_store: Store) -> None:
    tui_store.add_memory("Knows Go", "skill")
    tui_store.add_memory("Knows Rust a little", "skill")
    tui_store.add_memory("Lives in Lyon", "fact")
    app = make_app(tui_store)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_memories(pilot)
        assert len(_row_ids(screen)) == 3
        await pilot.press("c", "c", "c")  # all -> preference -> project -> skill
        await settle(pilot)
        assert screen.category == "skill"
        assert len(_row_ids(screen)) == 2
        await pilot.press("/")
        await pilot.press(*"rust")
        await pilot.pause(0.3)
        await settle(pilot)
        assert [tui_store.get_memory(i).content for i in _row_ids(screen)] == ["Knows Rust a little"]
        await pilot.press("escape")
        await pilot.pause(0.3)
        await settle(pilot)
        assert len(_row_ids(screen)) == 2


async def test_c_cycles_the_category_and_the_list_follows(tui_store: Store) -> None:
    pref = tui_store.add_memory("Prefers tea over coffee", "preference").memory
    proj = tui_store.add_memory("Working on a garden planner", "project").memory
    app = make_app(tui_store, greet=False)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_memories(pilot)
        assert sorted(_row_ids(screen)) == sorted([pref.id, proj.id])
        shown = []
        for _ in range(5):  # each of the four categories, then all again
            screen.query_one("#memories-table", DataTable).focus()
            await pilot.press("c")
            await settle(pilot)
            shown.append((screen.category, _row_ids(screen)))
        assert shown[:2] == [("preference", [pref.id]), ("project", [proj.id])]
        assert shown[2:4] == [("skill", []), ("fact", [])]
        assert shown[4][0] == "all" and sorted(shown[4][1]) == sorted([pref.id, proj.id])
        assert screen.query_one("#memories-category", Select).value == "all"
