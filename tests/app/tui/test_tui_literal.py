"""User text is data: markup, ANSI escapes and 10,000-character texts render literally everywhere."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

from textual.widgets import Input, TextArea

from app.text import literal, one_line
from app.tui.screens.cleanup import CleanupScreen
from app.tui.screens.import_screen import ImportScreen
from app.tui.screens.memories import MemoriesScreen
from app.tui.screens.memory_edit import MemoryEditScreen
from app.tui.screens.search import SearchScreen
from app.tui.screens.thread_view import ThreadViewScreen
from app.tui.screens.threads import ThreadsScreen
from store import MessageIn, Store, ThreadIn
from tests.app.tui.tui_helpers import NASTY, make_app, screen_text, settle

HUGE = "lorem ipsum dolor " * 560  # ~10,000 characters, no line breaks


def _fill(store: Store) -> None:
    for text in NASTY:
        store.add_memory(f"{text} memory", "fact", force=True)
    store.add_memory(HUGE, "fact")
    store.write_thread(
        ThreadIn(
            "generic",
            "nasty",
            "[red]Title[/red] [/x] \x1b[31m",
            [
                MessageIn("user", NASTY[i % len(NASTY)], f"u{i}")
                if i % 2 == 0
                else MessageIn(
                    "assistant", f"{NASTY[i % len(NASTY)]}\n\n# Heading [/x]\n\n`[b]code[/b]`", f"a{i}"
                )
                for i in range(2 * len(NASTY))
            ]
            + [MessageIn("user", HUGE, "huge")],
        )
    )


def test_literal_helpers_make_controls_visible() -> None:
    assert literal("\x1b[31mred\x1b[0m\x07") == "␛[31mred␛[0m␇"
    assert literal("line\n\ttab") == "line\n\ttab"
    assert one_line("[red]a[/red]\n b", 80) == "[red]a[/red] b"
    assert one_line(HUGE, 20).endswith("…") and len(one_line(HUGE, 20)) == 20


async def test_every_screen_shows_nasty_text_literally(tui_store: Store) -> None:
    _fill(tui_store)
    app = make_app(tui_store)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, ThreadsScreen)
        assert "[red]Title[/red] [/x] ␛[31m" in screen_text(app)

        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, ThreadViewScreen)
        text = screen_text(app)
        assert "[red]not markup[/red]" in text and "[/x] closing tag with no opener" in text
        assert "Heading [/x]" in text and "[b]code[/b]" in text  # Markdown renders, markup does not
        await pilot.press("end")
        await settle(pilot)
        assert "lorem ipsum dolor lorem" in screen_text(app)
        await pilot.press("escape")

        await pilot.press("2")
        await settle(pilot)
        assert isinstance(app.screen, MemoriesScreen)
        text = screen_text(app)
        for nasty in (
            "[red]not markup[/red] memory",
            "[/x] closing tag",
            "[link=https://example.com]click",
            "␛[31mANSI red␛[0m",
            "$name and \\[escaped] and [@click=app.quit]quit[/]",
        ):
            assert nasty in text
        assert "lorem ipsum dolor lorem" in text
        table = app.screen.table
        huge_row = next(
            i for i, row in enumerate(table.ordered_rows) if "lorem" in str(table.get_row(row.key)[3])
        )
        table.move_cursor(row=huge_row)
        await pilot.press("e")
        await settle(pilot)
        assert isinstance(app.screen, MemoryEditScreen)
        assert app.screen.query_one("#memory-text", TextArea).text == HUGE.strip()
        await pilot.press("escape")
        await settle(pilot)

        await pilot.press("3")
        await settle(pilot)
        assert isinstance(app.screen, SearchScreen)
        app.screen.query_one("#search-input", Input).value = "[/x] closing"
        await pilot.pause(0.35)
        await settle(pilot)
        text = screen_text(app)
        assert app.screen.results and "[/x] closing tag" in text

        app.notify(NASTY[1], markup=False)  # the app's own notifications always pass markup=False
        await pilot.press("escape")
        await pilot.press("4")
        await settle(pilot)
        assert isinstance(app.screen, CleanupScreen)
        await pilot.press("5")
        await settle(pilot)
        assert isinstance(app.screen, ImportScreen)
        app.screen.query_one("#import-path", Input).value = "[/x]/nothing"
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert "There is no file or folder at [/x]/nothing" in screen_text(app)


def test_no_attribute_shadows_a_textual_member() -> None:
    """`self.loading = True` in a screen once showed Textual's loading overlay and froze its painting, and
    a `_render` helper once replaced Widget._render: no screen or widget of ours may assign an attribute,
    or define a private method, that its Textual base class already has."""
    import app.tui.screens
    import app.tui.widgets

    problems = []
    for package in (app.tui.screens, app.tui.widgets):
        for path in sorted(Path(package.__path__[0]).glob("*.py")):
            module = importlib.import_module(f"{package.__name__}.{path.stem}")
            tree = ast.parse(path.read_text())
            for node in (n for n in tree.body if isinstance(n, ast.ClassDef)):
                cls = getattr(module, node.name)
                base = next((b for b in cls.__mro__ if b.__module__.startswith("textual.")), None)
                if base is None:
                    continue
                assigned = {
                    t.attr
                    for n in ast.walk(node)
                    if isinstance(n, (ast.Assign, ast.AnnAssign))
                    for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
                    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"
                }
                clash = assigned & set(dir(base))
                if clash:
                    problems.append(f"{path.name}:{node.name} assigns {sorted(clash)}")
                private = {
                    f.name
                    for f in node.body
                    if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                    and f.name.startswith("_")
                    and not f.name.startswith("__")
                }
                if private & set(dir(base)):  # `_render` once replaced Widget._render
                    problems.append(f"{path.name}:{node.name} overrides {sorted(private & set(dir(base)))}")
    assert not problems
