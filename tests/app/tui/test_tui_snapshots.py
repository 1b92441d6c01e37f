"""SVG snapshots of the main screens at fixed sizes (review the SVGs in __snapshots__ when they change;
regenerate with `pytest tests/app/tui/test_tui_snapshots.py --snapshot-update`)."""

from __future__ import annotations

from typing import Any

from textual.pilot import Pilot
from textual.widgets import Input

from store import Store
from tests.app.tui.tui_helpers import make_app, settle


async def _settled(pilot: Pilot[Any]) -> None:
    await settle(pilot)


def test_snapshot_empty_database(tui_store: Store, snap_compare: Any) -> None:
    assert snap_compare(make_app(tui_store), terminal_size=(80, 24), run_before=_settled)


def test_snapshot_memories(demo_store: Store, snap_compare: Any) -> None:
    """Memories at 80x24: the table without the "Last accessed" column, the detail pane below it."""

    async def run_before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await pilot.press("2")
        await settle(pilot)

    assert snap_compare(make_app(demo_store), terminal_size=(80, 24), run_before=run_before)


def test_snapshot_thread(demo_store: Store, snap_compare: Any) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await pilot.press("down", "enter")  # "Showing user text literally in a Textual app"
        await settle(pilot)

    assert snap_compare(make_app(demo_store), terminal_size=(100, 30), run_before=run_before)


def test_snapshot_search_results(demo_store: Store, snap_compare: Any) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await pilot.press("3")
        await settle(pilot)
        pilot.app.screen.query_one("#search-input", Input).value = "backup restic"
        await pilot.pause(0.35)
        await settle(pilot)

    assert snap_compare(make_app(demo_store), terminal_size=(100, 30), run_before=run_before)


def test_snapshot_threads_list(demo_store: Store, snap_compare: Any) -> None:
    assert snap_compare(make_app(demo_store), terminal_size=(80, 24), run_before=_settled)
