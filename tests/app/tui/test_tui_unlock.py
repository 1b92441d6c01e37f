"""The unlock screen of an encrypted chat.db (issue 33): real keys typed into the password box; a wrong
passphrase is refused on the screen (and never shown), the right one opens the store, "remember" puts it in
the (test) keyring, and nothing reads the file before it is unlocked."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Checkbox, Input, Static

from app.tui.app import MemApp, StoreOpener
from app.tui.screens.unlock import UnlockScreen
from embeddings import FakeEmbedder
from store import Store
from store.crypto import convert, keys
from tests.app.tui.tui_helpers import settle

PASS = "purple otters sing"


def _encrypted(path: Path) -> Path:
    convert.create_encrypted(path, PASS)
    with Store(path, embedder=FakeEmbedder()) as s:
        s.add_memory("The unlock screen test memory", "fact")
    keys.forget_process_keys()
    return path


def _app(path: Path) -> tuple[MemApp, list[Store]]:
    opened: list[Store] = []

    def open_store() -> Store:
        opened.append(Store(path, embedder=FakeEmbedder()))
        return opened[-1]

    locked = keys.is_encrypted(path) and keys.unlocked(path) is None
    return MemApp(StoreOpener(path, open_store, locked=locked), load_model=False, greet=False), opened


async def test_wrong_then_right_passphrase_typed_on_the_unlock_screen(tmp_path: Path) -> None:
    path = _encrypted(Path("chat.db"))
    app, opened = _app(path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, UnlockScreen)
        assert not app.store_ready and opened == []  # nothing opened the file yet
        await pilot.press(*"not it at all", "enter")
        await settle(pilot)
        assert isinstance(app.screen, UnlockScreen)
        message = str(app.screen.query_one("#unlock-message", Static).render())
        assert "does not open it" in message and "not it at all" not in message
        assert app.screen.query_one("#unlock-input", Input).value == ""  # cleared, never kept
        await pilot.press(*PASS, "enter")
        await settle(pilot, rounds=6)
        assert not isinstance(app.screen, UnlockScreen)
        assert app.store_ready and len(opened) == 1
        assert app.status.memories == 1
    for s in opened:
        s.close()
    assert keys.keyring_get(keys.salt_of(path)) is None  # not asked to remember


async def test_remember_puts_it_in_the_keyring_and_the_next_start_needs_no_screen(tmp_path: Path) -> None:
    path = _encrypted(Path("chat.db"))
    app, opened = _app(path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.screen.query_one("#unlock-remember", Checkbox).focus()
        await pilot.press("space")
        app.screen.query_one("#unlock-input", Input).focus()
        await pilot.press(*PASS, "enter")
        await settle(pilot, rounds=6)
        assert app.store_ready
    for s in opened:
        s.close()
    assert keys.keyring_get(keys.salt_of(path)) == PASS
    keys.forget_process_keys()
    again, opened = _app(path)
    async with again.run_test(size=(80, 24)) as pilot:  # the keyring opens it: the screen closes by itself
        await settle(pilot, rounds=6)
        assert not isinstance(again.screen, UnlockScreen) and again.store_ready
    for s in opened:
        s.close()


async def test_quitting_from_the_unlock_screen_opens_nothing(tmp_path: Path) -> None:
    path = _encrypted(Path("chat.db"))
    app, opened = _app(path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+q")
        await settle(pilot)
    assert opened == [] and not Path("chat.db-wal").exists()
