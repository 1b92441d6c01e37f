"""A memory shown on one page and again at the start of the next (a write between the two reads shifted the
order) is shown once: found by the soak run of tests/reliability/test_faces.py, where the page's rows
raised DuplicateKey and the TUI said "reading the memories failed"."""

from __future__ import annotations

from textual.widgets import DataTable

from app.tui.screens.memory_list import PAGE
from store import Store
from tests.app.tui.tui_helpers import make_app, open_memories, settle


async def test_a_page_that_repeats_a_shown_memory_adds_it_once(tui_store: Store) -> None:
    for i in range(PAGE + 20):
        tui_store.add_memory(f"note {i}: the {i}th thing worth keeping", "fact", force=True)
    app = make_app(tui_store, greet=False)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_memories(pilot)
        table = screen.query_one("#memories-table", DataTable)
        assert table.row_count == PAGE
        # Pin the last memory (another process would do this): it moves to the top, and every row after
        # it moves down one, so the second page now starts with the first page's last row.
        last = tui_store.list_memories(limit=10**6)[-1]
        tui_store.pin_memory(last.id)
        await pilot.press("end")  # near the end of what is loaded: the next page is read
        await settle(pilot)
        keys = [str(k.value) for k in table.rows]
        assert len(keys) == len(set(keys))
        assert table.row_count >= PAGE + 19
        assert not [n for n in app._notifications if n.severity == "error"]  # noqa: SLF001
