"""Keys typed while a screen is switching (issue 28.7): at load ~10 a switch took 1.2 s, and typing "/Berlin"
right after `2` opened Edit (`e`), Conflicts (`r`) and New memory (`n`) on the arriving Memories screen; a
`d` would have deleted. Keys that arrive before the new screen is drawn and focused go to its text box if
it has one (the search box), else they are dropped: never shortcuts on the arriving screen.

The keys are posted in one burst, as a terminal delivers them while the app is busy, and the arriving
screen is made slow to build (a blocking sleep in its compose, as under load), so they really arrive
during the switch."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

import pytest
from textual import events
from textual.widget import Widget
from textual.widgets import Input

from app.tui.app import MemApp
from app.tui.screens.memories import MemoriesScreen
from app.tui.screens.search import SearchScreen
from app.tui.screens.thread_view import ThreadViewScreen
from app.tui.screens.threads import ThreadsScreen
from store import Store
from tests.app.tui.tui_helpers import make_app, settle

SLOW = 0.4  # seconds the arriving screen blocks the UI thread while it is built


def burst(app: MemApp, keys: Iterable[str]) -> None:
    """Keys posted all at once, as a terminal delivers what was typed while the app was busy."""
    for key in keys:
        char = key if len(key) == 1 else None
        app.post_message(events.Key("slash" if key == "/" else key, char))


def slow_compose(monkeypatch: pytest.MonkeyPatch, screen: type[Any]) -> None:
    original = screen.compose_body

    def compose_body(self: Any) -> Iterable[Widget]:
        time.sleep(SLOW)
        return original(self)  # type: ignore[no-any-return]

    monkeypatch.setattr(screen, "compose_body", compose_body)


async def test_keys_typed_while_memories_arrives_are_not_shortcuts_there(
    demo_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    slow_compose(monkeypatch, MemoriesScreen)
    before = [(m.id, m.content, m.pinned, m.importance) for m in demo_store.list_memories(limit=1000)]
    app = make_app(demo_store, load_model=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        burst(app, ["2", *"/Berlin", "d", "p", "plus", "u"])
        await pilot.pause(SLOW + 0.3)
        await settle(pilot)
        assert isinstance(app.screen, MemoriesScreen), app.screen  # no editor, no conflict review
        assert len(app.screen_stack) == 1
        await pilot.press("d")  # typed after the screen arrived: a shortcut as usual
        await settle(pilot)
    after = [(m.id, m.content, m.pinned, m.importance) for m in demo_store.list_memories(limit=1000)]
    assert len(after) == len(before) - 1  # only the `d` typed after the switch deleted anything
    assert set(after) < set(before)  # nothing pinned, re-rated or edited by the burst


async def test_keys_typed_while_search_arrives_go_into_the_search_box(
    demo_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    slow_compose(monkeypatch, SearchScreen)
    app = make_app(demo_store, load_model=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        burst(app, ["3", *"restic"])
        await pilot.pause(SLOW + 0.3)
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SearchScreen)
        assert screen.query_one("#search-input", Input).value == "restic"
        await pilot.pause(0.35)  # the debounce
        await settle(pilot)
        assert screen.results  # what was typed was searched


async def test_keys_typed_while_a_thread_opens_are_not_shortcuts_there(
    demo_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    slow_compose(monkeypatch, ThreadViewScreen)
    app = make_app(demo_store, load_model=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, ThreadsScreen)
        burst(app, ["enter"])
        await pilot.pause(0.05)  # the thread screen is being built (blocking, as under load)
        burst(app, ["m", "c", "u"])  # suggestions, context preview, summarise
        await pilot.pause(SLOW + 0.3)
        await settle(pilot)
        assert isinstance(app.screen, ThreadViewScreen), app.screen
        assert len(app.screen_stack) == 2  # Threads and the thread: nothing pushed on top
