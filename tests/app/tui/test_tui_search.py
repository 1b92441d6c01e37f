"""Search screen: results as you type, stale searches dropped, keyword-only while the model warms up,
Enter opens the thread at the message (or the memory editor), access counted once per shown result."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from textual.widgets import DataTable, Input, Static

from app.tui.screens import search as search_screen
from app.tui.screens.memory_edit import MemoryEditScreen
from app.tui.screens.search import SearchScreen
from app.tui.screens.thread_view import ThreadViewScreen
from app.tui.widgets.message_list import MessageList
from store import MessageIn, Store, ThreadIn
from tests.app.tui.tui_helpers import make_app, screen_text, settle


def _thread(store: Store) -> tuple[int, int]:
    msgs = [
        MessageIn("user" if i % 2 == 0 else "assistant", f"filler message number {i} about nothing", f"m{i}")
        for i in range(60)
    ]
    msgs[41] = MessageIn(
        "assistant", "Use restic with a systemd timer to back up the NAS every night.", "m41"
    )
    res = store.write_thread(ThreadIn("generic", "t1", "Backups at home", msgs))
    target = store.get_messages(res.thread_id, offset=41, limit=1)[0]
    return res.thread_id, target.id


async def _type(pilot, text: str) -> SearchScreen:  # type: ignore[no-untyped-def]
    await settle(pilot)
    await pilot.press("3")
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, SearchScreen)
    await pilot.press(*text)
    await pilot.pause(0.35)  # the 200 ms debounce
    await settle(pilot)
    return screen


@pytest.mark.serial  # scroll position after a timed settle
async def test_search_finds_and_opens_the_message(tui_store: Store) -> None:
    thread_id, message_id = _thread(tui_store)
    app = make_app(tui_store)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await _type(pilot, "restic timer")
        assert screen.results[0].kind == "message" and screen.results[0].id == message_id
        assert tui_store.in_memory_keywords  # ranked in process (store.search.held), as in a real session
        assert "hybrid" in str(screen.query_one("#search-notice", Static).render())
        text = screen_text(app)
        assert "Backups at home" in text and "restic" in text
        await pilot.press("enter")  # in the box: go to the results
        await pilot.press("enter")  # on the first result: open it
        await settle(pilot)
        view = app.screen
        assert isinstance(view, ThreadViewScreen) and view.thread_id == thread_id
        messages = view.query_one(MessageList)
        [target] = [v for v in messages.views if v.has_class("-target")]
        assert target.message.id == message_id and target.index == 41
        assert messages.start <= 41 < messages.end and messages.end - messages.start < 60
        assert target.region.y - messages.region.y <= 2  # scrolled to it
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is screen and screen.results  # the search is still there


async def test_keyword_only_while_the_model_loads_then_hybrid(tui_store: Store) -> None:
    _thread(tui_store)
    app = make_app(tui_store)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        app.status = replace(app.status, semantic="loading")
        screen = await _type(pilot, "restic")
        notice = str(screen.query_one("#search-notice", Static).render())
        assert "warming up" in notice
        assert screen.results and {r.matched for r in screen.results} <= {("keyword",), ("neighbour",)}
        assert ("keyword",) in {r.matched for r in screen.results}
        app.status = replace(app.status, semantic="ready")  # the model worker would post this
        await pilot.pause()
        await settle(pilot)
        assert "hybrid" in str(screen.query_one("#search-notice", Static).render())
        assert any("semantic" in r.matched for r in screen.results)


async def test_stale_results_are_dropped(tui_store: Store) -> None:
    _thread(tui_store)
    app = make_app(tui_store)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await _type(pilot, "restic")
        before = list(screen.results)
        from app.tui.screens.search import Found
        from store.search.engine import SearchResponse

        screen.post_message(
            SearchScreen.Finished(Found("an old query", "all", SearchResponse("x", "hybrid", []), False))
        )
        await pilot.pause()
        assert screen.results == before and screen.shown_query == "restic"


async def _eventually(pilot: Any, ok: Callable[[], bool], seconds: float = 10.0) -> bool:
    """Whether `ok()` holds within `seconds` of app time (workers settled between looks)."""
    for _ in range(int(seconds / 0.1)):
        await settle(pilot)
        if ok():
            return True
        await pilot.pause(0.1)
    return ok()


async def test_access_counts_only_use_opening_or_settling_on_a_query(tui_store: Store) -> None:
    m = tui_store.add_memory("Prefers restic over borg for backups", "preference").memory
    app = make_app(tui_store)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await _type(pilot, "borg backups")  # typed key by key: only the settled query is shown
        assert screen.results[0].kind == "memory" and screen.results[0].id == m.id
        await pilot.pause(2.0)  # results that just stay on screen are not use
        await settle(pilot)
        assert tui_store.get_memory(m.id).access_count == 0
        await pilot.press("enter")  # settled on the query: the top rows count
        assert await _eventually(pilot, lambda: tui_store.get_memory(m.id).access_count == 1)
        await pilot.press("enter")  # on the result: open it
        await settle(pilot)
        assert isinstance(app.screen, MemoryEditScreen) and app.screen.memory is not None
        assert app.screen.memory.id == m.id
        await pilot.press("escape")
        await settle(pilot)
        assert tui_store.get_memory(m.id).access_count == 1  # the same query is not counted twice
        screen.query_one("#search-input", Input).value = "restic"
        await pilot.pause(0.5)
        await settle(pilot)
        assert tui_store.get_memory(m.id).access_count == 1  # typed, not settled: not counted
        screen.query_one("#search-results", DataTable).focus()
        await pilot.press("enter")  # opened: counted
        assert await _eventually(pilot, lambda: tui_store.get_memory(m.id).access_count == 2)


async def test_settling_on_a_query_counts_only_the_top_rows(tui_store: Store) -> None:
    texts = [
        "restic backs up the laptop every night",
        "The NAS gets a weekly restic snapshot",
        "Learning restic's prune and forget flags",
        "Friend recommended restic over borg at the meetup",
        "restic repository password lives in the keychain",
    ]
    ids = [tui_store.add_memory(t, "project").memory.id for t in texts]
    assert len(set(ids)) == 5
    app = make_app(tui_store)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await _type(pilot, "restic")
        assert len(screen.results) == 5
        await pilot.press("enter")
        top = [r.id for r in screen.results[: search_screen.TOP_ROWS]]
        assert await _eventually(pilot, lambda: sum(tui_store.get_memory(i).access_count for i in ids) == 3)
        assert [i for i in ids if tui_store.get_memory(i).access_count == 1] == sorted(top)


async def test_weak_results_are_shown_as_weak_and_settling_counts_none(tui_store: Store) -> None:
    """Results the answer floor judges unsure (answer_floor 1.0: all of them) are listed, marked weak and
    dimmed, the notice says there is no good match, and settling on the query counts none of them."""
    m = tui_store.add_memory("Prefers restic over borg for backups", "preference").memory
    tui_store.config.search.answer_floor = 1.0
    app = make_app(tui_store)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await _type(pilot, "borg backups")
        assert await _eventually(pilot, lambda: bool(screen.results) and not screen.shown_keyword_only)
        assert screen.results[0].id == m.id and all(r.weak for r in screen.results)
        notice = str(screen.query_one("#search-notice", Static).render())
        assert notice.startswith("1 weak result") and "no good match" in notice
        assert "weak" in screen_text(app)
        await pilot.press("enter")  # settled on the query: weak rows are not use
        await pilot.pause(0.3)
        await settle(pilot)
        assert tui_store.get_memory(m.id).access_count == 0


async def test_escape_twice_leaves_the_box_for_good_so_a_digit_switches(tui_store: Store) -> None:
    """Issue 28.8: Esc moved between the box and the results, so a second Esc put the focus back in the
    box and the next digit was typed into the query instead of switching screen. Esc only leaves the
    box; `/` goes back to it."""
    from app.tui.screens.memories import MemoriesScreen

    _thread(tui_store)
    app = make_app(tui_store)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await _type(pilot, "restic")
        box = screen.query_one("#search-input", Input)
        assert screen.results and box.has_focus
        await pilot.press("escape", "escape")
        assert not box.has_focus
        await pilot.press("/")
        assert box.has_focus  # `/` is the way back
        await pilot.press("escape", "escape", "2")
        await settle(pilot)
        assert isinstance(app.screen, MemoriesScreen)
        assert box.value == "restic"
        await pilot.press("3")
        await settle(pilot)
        box.value = "zzzz nothing matches this"  # no results: Esc leaves the box for nowhere
        await pilot.pause(0.35)
        await settle(pilot)
        box.focus()
        await pilot.press("escape", "escape", "2")
        await settle(pilot)
        assert isinstance(app.screen, MemoriesScreen)
        assert box.value == "zzzz nothing matches this"


async def test_a_newer_search_for_the_same_query_keeps_the_highlighted_result(tui_store: Store) -> None:
    """Issue 28.6: the first search after start runs keyword-only while the model loads, and runs again,
    hybrid, when it is in. The new results replaced the old ones under the cursor by row number, so Enter
    opened whatever came first now (a thread summary opens the thread at the top) instead of the hit the
    user had highlighted. The cursor now stays on the same result."""
    from app.tui.screens.search import Found
    from store.search.engine import SearchResponse

    thread_id, message_id = _thread(tui_store)
    app = make_app(tui_store)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await _type(pilot, "restic timer")
        await pilot.press("enter")  # to the results
        await settle(pilot)
        hit = screen.results[0]
        assert hit.kind == "message" and hit.id == message_id and screen.table.has_focus
        summary = replace(hit, kind="summary", id=thread_id, role=None, content="A summary of the thread")
        newer = SearchResponse("restic timer", "hybrid", [summary, hit])  # the model is in: a new order
        screen.post_message(
            SearchScreen.Finished(Found("restic timer", "all", newer, False, screen.filters()))
        )
        await pilot.pause()
        await settle(pilot)
        assert screen.results == [summary, hit] and screen.table.cursor_row == 1  # still on the hit
        await pilot.press("enter")
        await settle(pilot)
        view = app.screen
        assert isinstance(view, ThreadViewScreen) and view.message_id == message_id


async def test_enter_twice_in_the_box_opens_the_top_result(
    tui_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Enter in the box goes to the results; a second Enter typed before they arrive opens the first one
    (it used to start the same search again and do nothing else)."""
    import time

    thread_id, message_id = _thread(tui_store)
    search = tui_store.search

    def slow_search(*args: Any, **kwargs: Any) -> Any:
        time.sleep(0.3)  # a search under load: the second Enter arrives before its results
        return search(*args, **kwargs)

    monkeypatch.setattr(tui_store, "search", slow_search)
    app = make_app(tui_store)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("3")
        await settle(pilot)
        await pilot.press(*"restic timer", "enter", "enter")  # no pause: the search is still running
        await settle(pilot)
        view = app.screen
        assert isinstance(view, ThreadViewScreen), view
        assert view.thread_id == thread_id and view.message_id == message_id


async def test_a_hit_opens_at_the_hit_when_the_layout_comes_late(tui_store: Store) -> None:
    """Issue 28.6, the other half: the thread view scrolled to the hit in an after-refresh callback, which
    Textual may run before the layout that was due (under load, or while updates are batched); the new
    messages had no position yet and the view stayed at the top of the window. Here the layout is held
    back with a batch update while the thread opens."""
    _, message_id = _thread(tui_store)
    app = make_app(tui_store)
    async with app.run_test(size=(100, 30)) as pilot:
        await _type(pilot, "restic timer")
        await pilot.press("enter")  # to the results
        await settle(pilot)
        with app.batch_update():
            await pilot.press("enter")  # open the hit
            for _ in range(5):
                await app.workers.wait_for_complete()
                await pilot.pause(0.05)
        await settle(pilot)
        view = app.screen
        assert isinstance(view, ThreadViewScreen)
        messages = view.query_one(MessageList)
        [target] = [v for v in messages.views if v.has_class("-target")]
        assert target.message.id == message_id
        assert target.region.y - messages.region.y <= 2, (target.region, messages.region)
