"""Keys that do what the screen says (issue 18): digits typed in a box stay text, alt+digit switches
screen from anywhere, the nav bar shows the keys that work right now, Esc leaves the Import path box,
ctrl+b twice never leaves the focus on a hidden tree, and after an import the key the hint names works."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Button, DirectoryTree, Input

from app.tui.screens.import_screen import ImportScreen
from app.tui.screens.memories import MemoriesScreen
from app.tui.screens.search import SearchScreen
from app.tui.screens.threads import ThreadsScreen
from store import Store
from tests.app.tui.tui_helpers import go_to, make_app, screen_text, settle, write_generic


def nav_line(app) -> str:  # type: ignore[no-untyped-def]
    return screen_text(app).splitlines()[0]


async def test_digits_typed_in_a_box_are_text_and_alt_digits_switch_screen(demo_store: Store) -> None:
    app = make_app(demo_store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert "1 Threads" in nav_line(app) and "alt+" not in nav_line(app)  # the list has the focus
        await pilot.press("3")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SearchScreen)
        await pilot.press(*"kyoto4")
        await pilot.pause(0.3)
        await settle(pilot)
        assert screen.query_one("#search-input", Input).value == "kyoto4"
        assert isinstance(app.screen, SearchScreen)
        assert "alt+1…5 switch" in nav_line(app) and "1 Threads" not in nav_line(app)
        await pilot.press("alt+2")  # from inside the box
        await settle(pilot)
        assert isinstance(app.screen, MemoriesScreen)
        await pilot.press("alt+3")
        await settle(pilot)
        assert isinstance(app.screen, SearchScreen)
        assert app.screen.query_one("#search-input", Input).value == "kyoto4"  # kept, still typing
        await pilot.press("escape")  # out of the box (no results: the focus leaves it)
        await settle(pilot)
        assert "1 Threads" in nav_line(app)
        await pilot.press("1")
        await settle(pilot)
        assert isinstance(app.screen, ThreadsScreen)


async def test_escape_leaves_the_import_path_box_and_ctrl_b_twice_keeps_the_typed_path(
    tui_store: Store, tmp_path: Path
) -> None:
    app = make_app(tui_store, greet=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await go_to(pilot, "5", ImportScreen)
        box = screen.query_one("#import-path", Input)
        assert box.has_focus
        await pilot.press(*str(tmp_path))
        await pilot.press("ctrl+b")  # the tree opens and takes the focus
        await pilot.pause(0.2)  # (the tree's loader worker never ends: no settle)
        tree = screen.query_one(DirectoryTree)
        assert tree.display and tree.has_focus
        await pilot.press("ctrl+b")  # hidden again: the focus is back in the path box
        await pilot.pause(0.2)  # (the tree's loader worker never ends: no settle)
        assert not tree.display and box.has_focus
        await pilot.press(*"/x")
        assert box.value == f"{tmp_path}/x"  # what was typed is all there
        await pilot.press("ctrl+b", "escape")  # Esc from the tree: tree hides, back to the box
        await pilot.pause(0.2)  # (the tree's loader worker never ends: no settle)
        assert not tree.display and box.has_focus
        await pilot.press("escape")  # Esc from the box: out of it, so the screen keys work
        assert screen.query_one("#import-go", Button).has_focus
        assert "1 Threads" in nav_line(app)
        await pilot.press("4")
        await pilot.pause(0.2)  # (the tree's loader worker never ends: no settle)
        assert app.screen.__class__.__name__ == "CleanupScreen"
        assert box.value == f"{tmp_path}/x"


async def test_after_an_import_the_key_the_hint_names_works(tui_store: Store, tmp_path: Path) -> None:
    export = write_generic(
        tmp_path / "export.json",
        [{"id": "t1", "title": "Typed path import", "messages": [{"role": "user", "content": "hello"}]}],
    )
    app = make_app(tui_store, greet=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("5")
        await settle(pilot)
        await pilot.press(*str(export), "enter")
        await settle(pilot, rounds=6)
        assert "Press 1 to browse the threads" in screen_text(app)
        await pilot.press("escape")  # Esc on the report never puts the focus back into the path box
        await pilot.press("1")
        await settle(pilot)
        assert isinstance(app.screen, ThreadsScreen)
        assert "Typed path import" in screen_text(app)


async def test_the_footer_is_readable_at_80_columns(demo_store: Store) -> None:
    app = make_app(demo_store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        for key in ("1", "2", "3", "4", "5"):
            await pilot.press(key) if key == "1" else await pilot.press(f"alt+{key}")
            await settle(pilot)
            footer = screen_text(app).splitlines()[-1]
            assert "…" not in footer, f"screen {key}: {footer!r}"
            assert "palette" in footer


async def test_alt_digits_as_a_terminal_sends_them_switch_screen_from_a_box(demo_store: Store) -> None:
    """A terminal sends alt+2 as ESC 2, which Textual parses as "™" (macOS's Option+2): found in tmux,
    where alt+2 typed "™" into the search box instead of opening Memories."""
    from textual._xterm_parser import XTermParser

    [key] = [e.key for e in XTermParser().feed("\x1b2") if hasattr(e, "key")]
    app = make_app(demo_store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("3", *"tea")
        await settle(pilot)
        assert isinstance(app.screen, SearchScreen)
        await pilot.press(key)  # what the terminal's alt+2 becomes
        await settle(pilot)
        assert isinstance(app.screen, MemoriesScreen)
        await pilot.press("alt+3")
        await settle(pilot)
        assert app.screen.query_one("#search-input", Input).value == "tea"  # nothing typed into it
