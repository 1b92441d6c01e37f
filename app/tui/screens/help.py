"""`?`: every key, screen by screen, read from the same Binding tables the footer and the command palette
use (so the help can never disagree with what the keys do), plus the state of the database and search.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from app.text import literal
from app.tui.host import Host, host

MOVING = [
    ("Esc", "Leave a text box (then the plain keys work), close a dialog, go back"),
    ("↑ ↓ PgUp PgDn", "Move in a list or scroll a thread"),
    ("Enter", "Open / choose"),
    ("Tab / shift+Tab", "Move between the parts of a screen"),
    ("ctrl+p", "Command palette: every action by name"),
]


def binding_rows(app: App[Any], bindings: list[BindingType]) -> list[tuple[str, str, str]]:
    """(keys, description, longer help) per action; keys bound to the same action are joined."""
    rows: dict[tuple[str, str], list[str]] = {}
    tips: dict[tuple[str, str], str] = {}
    for b in Binding.make_bindings(bindings):
        if not b.description or b.system:
            continue
        # A group (raise/lower importance) is one row: its keys, its name, the first tooltip.
        key = ("group", b.group.description) if b.group else (b.action, b.description)
        # The keys themselves, not the footer's shorthand: "+/-" in the footer is two rows here ("+ =" and
        # "-"), so no key is listed twice.
        rows.setdefault(key, []).append(app.get_key_display(replace(b, key_display=None)))
        tips.setdefault(key, b.tooltip)
    return [
        (" ".join(dict.fromkeys(keys)), desc, tips[(action, desc)]) for (action, desc), keys in rows.items()
    ]


def screen_sections(app: App[Any], current: Screen[object]) -> list[tuple[str, list[BindingType]]]:
    """The binding tables to list, the current screen's first."""
    from app.tui.modes import PLACES
    from app.tui.screens.confirm import ConfirmScreen
    from app.tui.screens.context_preview import ContextPreviewScreen
    from app.tui.screens.memory_edit import MemoryEditScreen
    from app.tui.screens.prompt import PromptScreen
    from app.tui.screens.suggestions import SuggestionsScreen
    from app.tui.screens.thread_view import ThreadViewScreen
    from app.tui.screens.thresholds import ThresholdsScreen
    from app.tui.screens.welcome import WelcomeScreen

    classes: list[type[Screen[Any]]] = [place.screen_class() for place in PLACES]
    classes += [
        ThreadViewScreen,
        ContextPreviewScreen,
        SuggestionsScreen,
        MemoryEditScreen,
        ThresholdsScreen,
        ConfirmScreen,
        PromptScreen,
        WelcomeScreen,
    ]
    first = [c for c in classes if isinstance(current, c)][:1]
    ordered = first + [c for c in classes if c not in first]
    return [(section_title(c), list(c.BINDINGS)) for c in ordered]


def section_title(screen: type[Screen[Any]]) -> str:
    """A heading a person reads ("Memory editor"), never a class name."""
    if screen.TITLE:
        return screen.TITLE
    words = re.sub(r"(?<!^)(?=[A-Z])", " ", screen.__name__.removesuffix("Screen"))
    return words.capitalize()


class HelpScreen(ModalScreen[None]):
    """All keys; Escape, q or ? closes it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark", "dismiss", "Close", id="help-close"),
    ]

    def __init__(self, current: Screen[object]) -> None:
        super().__init__()
        self.current = current

    def compose(self) -> ComposeResult:
        app = self.app
        with Vertical(id="help-box", classes="dialog"):
            yield Static("Keys  (Esc closes)", classes="dialog-title", markup=False)
            with VerticalScroll(id="help-scroll"):
                for title, bindings in screen_sections(app, self.current):
                    yield Static(self._table(title, binding_rows(app, bindings)), classes="help-section")
                yield Static(
                    self._table(
                        "Everywhere", binding_rows(app, list(app.BINDINGS)) + [(k, d, "") for k, d in MOVING]
                    ),
                    classes="help-section",
                )
                yield Static(self._about(host(app)), classes="help-section", markup=False)

    @staticmethod
    def _table(title: str, rows: list[tuple[str, str, str]]) -> Table:
        table = Table(
            title=title,
            title_justify="left",
            title_style="bold",
            show_header=False,
            box=None,
            padding=(0, 1),
            expand=True,
        )
        table.add_column("key", style="bold", no_wrap=True, min_width=12)
        table.add_column("what", ratio=1)
        for keys, desc, tip in rows:
            table.add_row(Text(keys), Text(f"{desc}" + (f" — {tip}" if tip and tip != desc else "")))
        return table

    @staticmethod
    def _about(app: Host) -> Text:
        s = app.status
        text = Text()
        text.append("This database\n", style="bold")
        text.append(f"  file      {s.database}\n")
        text.append(f"  tokens    {literal(app.store.tokens.status)}\n")
        text.append(f"  semantic  {literal(s.semantic)}\n")
        return text
