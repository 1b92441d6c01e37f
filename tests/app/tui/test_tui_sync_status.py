"""The sync part of the status line: hidden for a chat.db that does not sync, and saying when this device
last synced and what waits to be applied once it does (issue 29)."""

from __future__ import annotations

from pathlib import Path

from embeddings import FakeEmbedder
from store import Store
from store.sync import engine
from tests.app.tui.tui_helpers import make_app, screen_text, settle


async def test_status_line_shows_sync_state(demo_store: Store, tmp_path: Path) -> None:
    app = make_app(demo_store)
    async with app.run_test(size=(140, 30)) as pilot:
        await settle(pilot)
        assert "synced" not in screen_text(app).splitlines()[-2]  # not syncing: nothing shown

    folder = tmp_path / "folder"
    engine.init(demo_store, folder, "laptop")
    engine.sync(demo_store, None, embed=False)
    other = Store(tmp_path / "other.db", embedder=FakeEmbedder())
    engine.init(other, folder, "desktop")
    other.add_memory("written on the desktop", "fact")
    engine.sync(other, None, embed=False)
    other.close()

    app = make_app(demo_store)
    async with app.run_test(size=(140, 30)) as pilot:
        await settle(pilot)
        status = screen_text(app).splitlines()[-2]
        assert "synced just now" in status and "1 to apply" in status
