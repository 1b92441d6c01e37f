"""At 80 columns nothing the user needs is cut off (issue 28.10): every key the footer shows is whole, with
the command palette's at the end, and the status line keeps the database's file name and the counts."""

from __future__ import annotations

from pathlib import Path

from textual.screen import Screen

from app.tui.app import MemApp
from embeddings import FakeEmbedder
from store import Store
from store.importing import load_demo
from tests.app.tui.tui_helpers import screen_text, settle


def footer_problems(app: MemApp) -> list[str]:
    """The bindings the footer means to show (what the keys do right now) that its line does not show
    whole."""
    footer = screen_text(app).splitlines()[-1]
    screen: Screen[object] = app.screen
    missing = []
    for active in screen.active_bindings.values():
        b = active.binding
        if b.show and b.description and active.enabled and f" {b.description}" not in footer:
            missing.append(b.description)
    if not footer.rstrip().endswith("palette"):
        missing.append("the palette key")
    return missing


async def test_at_80_columns_the_footers_and_the_status_line_are_whole(tmp_path: Path) -> None:
    db = tmp_path / "a folder with a rather long name" / "and another one below it" / "chat.db"
    db.parent.mkdir(parents=True)
    store = Store(db, embedder=FakeEmbedder())
    load_demo(store)
    app = MemApp(store, load_model=False, greet=False)
    seen = {}
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            for name, keys in [
                ("threads", []),
                ("thread", ["enter"]),
                ("memories", ["escape", "2"]),
                ("search", ["3"]),
                ("search results", [*"restic", "enter"]),
                ("cleanup", ["4"]),
                ("trash", ["t"]),
                ("import", ["5"]),
            ]:
                await pilot.press(*keys)
                await pilot.pause(0.3)
                await settle(pilot)
                status = screen_text(app).splitlines()[-2]
                whole = all(w in status for w in ("chat.db", "8 threads", "16 memories", "semantic ready"))
                seen[name] = footer_problems(app) + ([] if whole else [f"status: {status}"])
    finally:
        store.close()
    assert seen == dict.fromkeys(seen, []), seen
