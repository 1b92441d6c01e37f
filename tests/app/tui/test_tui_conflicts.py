"""Keeping memories true in the TUI: superseded memories struck through, the conflicts filter and review,
and the editor's source line that opens the message a memory came from."""

from __future__ import annotations

from textual.widgets import Button, DataTable, Select, Static

from app.tui.screens.conflict_review import ConflictReviewScreen
from app.tui.screens.memories import MemoriesScreen
from app.tui.screens.memory_edit import MemoryEditScreen
from app.tui.screens.thread_view import ThreadViewScreen
from store import Store
from store.records import MessageIn, ThreadIn
from store.truth.conflicts import count_open, list_conflicts
from tests.app.tui.tui_helpers import go_to, make_app, open_memories, settle


def _rows(screen: MemoriesScreen) -> dict[int, list[object]]:
    table = screen.query_one("#memories-table", DataTable)
    return {int(str(r.key.value)): table.get_row(r.key) for r in table.ordered_rows}


async def test_review_a_conflict_keep_new(tui_store: Store) -> None:
    old = tui_store.add_memory("Prefers light mode in the editor", "preference", pinned=True).memory
    new = tui_store.add_memory("Prefers dark mode in the editor", "preference").memory
    assert count_open(tui_store) == 1
    app = make_app(tui_store, greet=False)
    async with app.run_test(size=(110, 30)) as pilot:
        screen = await open_memories(pilot)
        rows = _rows(screen)
        assert str(rows[old.id][0]) == "●!" and str(rows[new.id][0]) == "!"
        assert "1 to review (r)" in str(screen.query_one("#memories-info", Static).render())
        await pilot.press("f", "f", "f")  # all -> current -> superseded -> to review
        await settle(pilot)
        assert screen.query_one("#memories-state", Select).value == "conflicts"
        assert set(_rows(screen)) == {old.id, new.id}
        await pilot.press("r")
        await settle(pilot)
        review = app.screen
        assert isinstance(review, ConflictReviewScreen)
        assert (
            str(review.query_one("#conflict-new-text", Static).render()) == "Prefers dark mode in the editor"
        )
        assert (
            str(review.query_one("#conflict-old-text", Static).render()) == "Prefers light mode in the editor"
        )
        await pilot.press("n")
        await settle(pilot)
        assert app.screen is screen
        assert count_open(tui_store) == 0
        assert tui_store.get_memory(old.id).superseded_by == new.id
        assert [h.event for h in tui_store.memory_history(old.id)][-2:] == ["supersede", "resolve"]
        assert _rows(screen) == {}  # the "to review" list is empty now
        await pilot.press("f")  # back to all: the old one is struck through
        await settle(pilot)
        content = _rows(screen)[old.id][3]
        assert "strike" in str(content.spans[0].style if content.spans else content.style)  # type: ignore[attr-defined]


async def test_review_later_changes_nothing(tui_store: Store) -> None:
    tui_store.add_memory("Prefers light mode in the editor", "preference", pinned=True)
    tui_store.add_memory("Prefers dark mode in the editor", "preference")
    app = make_app(tui_store, greet=False)
    async with app.run_test(size=(110, 30)) as pilot:
        await open_memories(pilot)
        await pilot.press("r")
        await settle(pilot)
        assert isinstance(app.screen, ConflictReviewScreen)
        await pilot.press("escape")
        await settle(pilot)
        assert [c.status for c in list_conflicts(tui_store)] == ["open"]


async def test_the_editor_shows_the_source_and_opens_the_message(tui_store: Store) -> None:
    tid = tui_store.write_thread(
        ThreadIn(
            "test",
            "t1",
            "Eggs",
            [
                MessageIn("user", "How long to boil an egg?"),
                MessageIn("user", "Remember I like my eggs soft."),
            ],
        )
    ).thread_id
    row = tui_store.con.execute("SELECT id FROM messages WHERE thread_id = ? AND seq = 1", (tid,)).fetchone()
    assert row is not None
    mid = int(row[0])  # type: ignore[arg-type]
    m = tui_store.add_memory(
        "Likes soft-boiled eggs", "preference", origin="extract", source_thread_id=tid, source_message_id=mid
    ).memory
    app = make_app(tui_store, greet=False)
    async with app.run_test(size=(110, 30)) as pilot:
        await open_memories(pilot)
        await pilot.press("e")
        await settle(pilot)
        editor = app.screen
        assert isinstance(editor, MemoryEditScreen) and editor.memory is not None and editor.memory.id == m.id
        source = str(editor.query_one("#memory-source", Static).render())
        assert f"message {mid}" in source and "Eggs" in source and "ctrl+g" in source
        await pilot.press("ctrl+g")
        await settle(pilot)
        view = app.screen
        assert isinstance(view, ThreadViewScreen)
        assert (view.thread_id, view.message_id) == (tid, mid)


async def test_search_strikes_a_superseded_memory_and_its_editor_names_the_successor(
    tui_store: Store,
) -> None:
    from app.tui.screens.search import SearchScreen

    old = tui_store.add_memory("I prefer uv over pip for Python projects", "preference").memory
    new = tui_store.add_memory("I prefer pip over uv for Python projects", "preference").memory
    app = make_app(tui_store, greet=False)
    async with app.run_test(size=(110, 30)) as pilot:
        screen = await go_to(pilot, "3", SearchScreen)
        await pilot.press(*"uv pip")
        await pilot.pause(0.35)
        await settle(pilot)
        assert [r.id for r in screen.results] == [new.id, old.id]
        table = screen.query_one("#search-results", DataTable)
        snippet = table.get_row_at(1)[4]
        assert any("strike" in str(span.style) for span in snippet.spans)  # type: ignore[attr-defined]
        assert not any("strike" in str(span.style) for span in table.get_row_at(0)[4].spans)  # type: ignore[attr-defined]
        await pilot.press("enter", "down", "enter")
        await settle(pilot)
        editor = app.screen
        assert (
            isinstance(editor, MemoryEditScreen) and editor.memory is not None and editor.memory.id == old.id
        )
        line = str(editor.query_one("#memory-superseded", Static).render())
        assert f"memory {new.id}: I prefer pip over uv" in line


async def test_the_detail_pane_says_superseded_and_t_opens_the_source_message(tui_store: Store) -> None:
    from app.tui.widgets.memory_detail import MemoryDetail

    tid = tui_store.write_thread(
        ThreadIn("test", "t2", "Tools", [MessageIn("user", "hi"), MessageIn("user", "I prefer uv over pip")])
    ).thread_id
    row = tui_store.con.execute("SELECT id FROM messages WHERE thread_id = ? AND seq = 1", (tid,)).fetchone()
    assert row is not None
    mid = int(row[0])  # type: ignore[arg-type]
    old = tui_store.add_memory(
        "I prefer uv over pip for Python projects", "preference", source_thread_id=tid, source_message_id=mid
    ).memory
    new = tui_store.add_memory("I prefer pip over uv for Python projects", "preference").memory
    app = make_app(tui_store, greet=False)
    async with app.run_test(size=(110, 40)) as pilot:
        screen = await open_memories(pilot)
        table = screen.query_one("#memories-table", DataTable)
        table.move_cursor(row=table.get_row_index(str(old.id)))
        await settle(pilot)
        detail = screen.query_one(MemoryDetail)
        text = str(detail.query_one("#memory-detail-text", Static).render())
        assert "Superseded" in text and f"by memory {new.id}" in text and f"message {mid}" in text
        await pilot.press("t")
        await settle(pilot)
        view = app.screen
        assert isinstance(view, ThreadViewScreen) and (view.thread_id, view.message_id) == (tid, mid)


async def test_the_card_says_why_and_edit_writes_one_memory_in_the_users_words(tui_store: Store) -> None:
    """Issue 27: the card says in plain words why it was raised and offers keep both, newer replaces
    older, merge and edit; `e` opens the editor and saving makes one memory with the edited text."""
    old = tui_store.add_memory("Uses Firefox", "preference").memory
    new = tui_store.add_memory("Uses Chrome", "preference").memory
    [c] = list_conflicts(tui_store)
    app = make_app(tui_store, greet=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_memories(pilot)
        await pilot.press("r")
        await settle(pilot)
        review = app.screen
        assert isinstance(review, ConflictReviewScreen)
        why = str(review.query_one("#conflict-why", Static).render())
        assert why.startswith("These two are about the same thing, and something differs. Why:")
        assert "nothing says the old one stopped being true" in why
        labels = [str(b.label) for b in review.query(Button)]
        assert labels[:4] == ["Newer replaces older (n)", "Keep both (b)", "Merge (m)", "Edit… (e)"]
        await pilot.press("e")
        await settle(pilot)
        editor = app.screen
        assert isinstance(editor, MemoryEditScreen)
        title = str(editor.query_one(".dialog-title", Static).render())
        assert title == f"Merge memories {old.id} and {new.id} in your own words"  # not "New memory"
        area = editor.query_one("TextArea")
        area.text = "Uses Firefox at home and Chrome at work"  # type: ignore[attr-defined]
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert count_open(tui_store) == 0
        merged = tui_store.get_memory(old.id)
        assert merged.content == "Uses Firefox at home and Chrome at work" and merged.user_edited
        assert tui_store.get_memory(new.id).deleted_at is not None
        assert [x.resolution for x in list_conflicts(tui_store, status="resolved") if x.id == c.id] == [
            "merge"
        ]
