"""The Textual app: five places (modes), the status line's state, the model loaded after the first frame.

Why modes: Threads, Memories, Search, Cleanup and Import each keep their own screen stack, so opening a
thread from a search result and going back lands in the search with its results intact, while the
Threads list keeps its scroll position.

Why the model loads in `on_ready`: importing torch and sentence-transformers takes seconds. `Ready` is
sent after the first frame is on the terminal, so the app is usable at once; until the model is in,
search runs keyword-only and the status line says semantic search is warming up.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path
from typing import ClassVar

from textual.app import App
from textual.binding import Binding, BindingType
from textual.reactive import reactive

from app.commands import MemappCommands
from app.messages import CountsChanged, ModelStateChanged
from app.screens.cleanup import CleanupScreen
from app.screens.help import HelpScreen
from app.screens.import_screen import ImportScreen
from app.screens.memories import MemoriesScreen
from app.screens.memory_edit import open_memory_editor
from app.screens.search import SearchScreen
from app.screens.threads import ThreadsScreen
from app.screens.welcome import WelcomeScreen
from app.widgets.format import short_path
from app.widgets.status_line import AppStatus
from app.widgets.work import run_in_thread
from store import Store
from store.errors import StoreError

log = logging.getLogger(__name__)

GLOBAL_ACTIONS = {"go", "help", "new_memory", "load_demo"}


class MemApp(App[None]):
    """memapp's TUI over one Store (which the caller opens and closes)."""

    CSS_PATH = Path(__file__).with_name("memapp.tcss")
    TITLE = "memapp"
    COMMANDS = App.COMMANDS | {MemappCommands}
    MODES = {
        "threads": ThreadsScreen,
        "memories": MemoriesScreen,
        "search": SearchScreen,
        "cleanup": CleanupScreen,
        "import": ImportScreen,
    }
    DEFAULT_MODE = "threads"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "1",
            "go('threads')",
            "Threads",
            show=False,
            id="go-threads",
            tooltip="Browse imported conversations",
        ),
        Binding(
            "2",
            "go('memories')",
            "Memories",
            show=False,
            id="go-memories",
            tooltip="See, edit, pin and delete long-term memories",
        ),
        Binding(
            "3",
            "go('search')",
            "Search",
            show=False,
            id="go-search",
            tooltip="Search memories, messages and summaries",
        ),
        Binding(
            "4",
            "go('cleanup')",
            "Cleanup",
            show=False,
            id="go-cleanup",
            tooltip="Review unused memories, apply cleanup, restore from the trash",
        ),
        Binding(
            "5",
            "go('import')",
            "Import",
            show=False,
            id="go-import",
            tooltip="Import a chat export (ChatGPT, Claude, llm, Open WebUI, JSON)",
        ),
        Binding("question_mark", "help", "Help", show=False, id="help", tooltip="List every key"),
        Binding(
            "f1",
            "help",
            "Help",
            show=False,
            priority=True,
            id="help-f1",
            tooltip="List every key (works while typing in a box)",
        ),
        Binding(
            "ctrl+n",
            "new_memory",
            "New memory",
            show=False,
            id="new-memory",
            tooltip="Add a long-term memory from anywhere",
        ),
        Binding(
            "ctrl+q",
            "quit",
            "Quit",
            show=False,
            priority=True,
            id="quit",
            tooltip="Leave memapp (everything is already saved)",
        ),
    ]

    status: reactive[AppStatus] = reactive(AppStatus, init=False)
    """What the status line shows (counts, tokenizer, semantic search state)."""

    data_version: reactive[int] = reactive(0, init=False)
    """Bumped after every write; screens reload when it differs from what they last showed."""

    def __init__(self, store: Store, *, load_model: bool = True, greet: bool = True) -> None:
        super().__init__()
        self.store = store
        self._load_model = load_model
        self._greet = greet
        state = store.semantic_state
        if state == "not loaded":
            state = "loading" if load_model else "unavailable: the model is not loaded in this session"
        self.set_reactive(
            MemApp.status,
            AppStatus(database=short_path(store.path), tokens_exact=store.tokens.exact, semantic=state),
        )

    # -- start-up ------------------------------------------------------------------------------------

    def on_mount(self) -> None:
        self.refresh_counts()

    def on_ready(self) -> None:
        if self.status.semantic == "loading":
            run_in_thread(
                self, self._load_model_now, group="model", description="loading the embedding model"
            )

    def _load_model_now(self) -> None:
        ok = self.store.load_model()
        problem = self.store.vector_problem or "the embedding model failed to load"
        self.post_message(ModelStateChanged("ready" if ok else f"unavailable: {problem}"))

    def on_model_state_changed(self, message: ModelStateChanged) -> None:
        self.status = replace(self.status, semantic=message.state)
        if message.state != "ready":
            why = message.state.removeprefix("unavailable:").strip()
            self.notify(
                f"Semantic search is off: {why}. Keyword search still works.",
                title="Search",
                severity="warning",
                markup=False,
                timeout=10,
            )

    # -- counts and data changes ---------------------------------------------------------------------

    def refresh_counts(self) -> None:
        run_in_thread(self, self._count, group="counts", exclusive=True, description="counting")

    def _count(self) -> None:
        stats = self.store.stats()
        mem = stats["memories"]
        self.post_message(CountsChanged(stats["threads"], stats["messages"], mem["active"], mem["trash"]))

    def on_counts_changed(self, message: CountsChanged) -> None:
        first = self.status.threads is None
        self.status = replace(
            self.status, threads=message.threads, messages=message.messages, memories=message.memories
        )
        empty = not (message.threads or message.memories or message.trash)
        if first and empty and self._greet and not self.screen.is_modal:
            self.push_screen(WelcomeScreen())

    def data_changed(self) -> None:
        """Call after any write: screens reload what they show, the status line recounts."""
        self.data_version += 1
        self.refresh_counts()

    def show_error(self, error: BaseException, doing: str = "") -> None:
        """The one place a failed worker ends up: a notification, never a crash or a traceback."""
        if isinstance(error, StoreError):
            text = str(error)
        else:
            log.error("%s failed", doing or "a background task", exc_info=error)
            text = f"{doing or 'A background task'} failed: {type(error).__name__}: {error}"
        self.notify(text, title="Error", severity="error", markup=False, timeout=10)

    # -- actions -------------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Keys typed in a dialog belong to the dialog, not to screen switching.
        return not (action in GLOBAL_ACTIONS and self.screen.is_modal)

    def action_go(self, mode: str) -> None:
        if isinstance(self.screen, WelcomeScreen):
            self.screen.dismiss()
        self.switch_mode(mode)

    def action_help(self) -> None:
        self.push_screen(HelpScreen(self.screen))

    def action_new_memory(self) -> None:
        open_memory_editor(self, None)

    async def action_load_demo(self) -> None:
        """Import the bundled demo on the Import screen, where its progress and report are shown."""
        if isinstance(self.screen, WelcomeScreen):
            self.screen.dismiss()
        await self.switch_mode("import")
        screen = self.screen
        if isinstance(screen, ImportScreen):
            screen.action_demo()
