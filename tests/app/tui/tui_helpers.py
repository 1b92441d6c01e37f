"""Helpers shared by the TUI tests (imported as tests.app.tui.tui_helpers, like tests/store/importing/formats/import_helpers.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from textual.pilot import Pilot
from textual.screen import Screen
from textual.worker import WorkerCancelled, WorkerState

from app.tui.app import MemApp
from store import Store

if TYPE_CHECKING:
    from app.tui.screens.memories import MemoriesScreen

NASTY = [
    "[red]not markup[/red]",
    "[/x] closing tag with no opener",
    "[link=https://example.com]click[/link] and [bold",
    "\x1b[31mANSI red\x1b[0m and a bell \x07",
    "$name and \\[escaped] and [@click=app.quit]quit[/]",
]


S = TypeVar("S", bound=Screen[Any])


def make_app(store: Store, **kwargs: Any) -> MemApp:
    return MemApp(store, **kwargs)


async def settle(pilot: Pilot[Any], rounds: int = 3) -> None:
    """Let workers finish and their results land on screen (a worker's result can start another)."""
    for _ in range(rounds):
        try:
            await pilot.app.workers.wait_for_complete()
        except WorkerCancelled:  # one a screen change cancelled (by design): wait for the others
            while any(w.state in (WorkerState.PENDING, WorkerState.RUNNING) for w in pilot.app.workers):
                await pilot.pause(0.01)
        await pilot.pause()


async def go_to(pilot: Pilot[Any], key: str, kind: type[S]) -> S:
    """Press `key` once the app is idle (a place's 1-5, Enter on a thread…); the screen it leads to, which
    must be a `kind`, with its data read."""
    await settle(pilot)
    await pilot.press(key)
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, kind)
    return screen


async def open_memories(pilot: Pilot[Any]) -> MemoriesScreen:
    """The Memories screen (key 2), its first page read."""
    from app.tui.screens.memories import MemoriesScreen  # as the app does: on first use

    return await go_to(pilot, "2", MemoriesScreen)


def write_generic(path: Path, threads: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps({"threads": threads}), encoding="utf-8")
    return path


def screen_text(app: MemApp) -> str:
    """Everything on the current screen as plain text, line by line (what a person would read)."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())
