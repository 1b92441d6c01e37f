"""The Textual app: five places (modes), the status line's state, the store and the model loaded after
the first frame.

Why modes: Threads, Memories, Search, Cleanup and Import each keep their own screen stack, so opening a
thread from a search result and going back lands in the search with its results intact, while the
Threads list keeps its scroll position. Each mode's screen module is imported when the mode is first
shown: together they cost a few hundred milliseconds of imports that the first frame does not need.

Why the store may open in `on_ready`: building the Store imports numpy and the vector code, and that,
like everything else not needed to draw the first frame, is what separates memapp's start from a bare
Textual app's (issue 7, benchmark 4). `memapp` checks chat.db before the app starts and passes a
`StoreOpener`; the app draws its screens, opens the store in a worker, then tells the screens to read
(the same `data_version` bump as after any write). Code on the UI thread that needs the store before
that simply waits for it (`MemApp.store`); tests and scripts may pass a ready Store instead.

Why the model loads after that: importing torch and sentence-transformers takes seconds. `Ready` is
sent after the first frame is on the terminal, so the app is usable at once; until the model is in,
search runs keyword-only and the status line says semantic search is warming up.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import events
from textual.actions import SkipAction
from textual.app import App
from textual.binding import Binding, BindingType
from textual.reactive import reactive
from textual.screen import Screen

from app.text import short_path
from app.tui.commands import MemappCommands
from app.tui.messages import CountsChanged, ModelStateChanged
from app.tui.modes import ALT_DIGIT_AS_KEY, FIRST_MODE, PLACES, import_all_screens, mode_screen_class
from app.tui.switching import KeysDuringSwitch
from app.tui.widgets.status_line import AppStatus
from app.tui.work import run_in_thread
from store import StoreError

if TYPE_CHECKING:
    from store import Store

log = logging.getLogger(__name__)

THEME_SETTING = "tui.theme"
POLL_SECONDS = 0.5
"""How often the app checks whether another process wrote to chat.db (the issue asks for ~1 s)."""

GLOBAL_ACTIONS = {"go", "place", "help", "new_memory", "load_demo"}


class _OnFirstUse:
    """A MODES entry: Textual calls it for the mode's first screen, and only then is its module imported."""

    def __init__(self, mode: str) -> None:
        self.mode = mode

    def __call__(self) -> Screen[Any]:
        return mode_screen_class(self.mode)()

    def __repr__(self) -> str:
        return f"<{self.mode} screen, imported on first use>"


@dataclass(frozen=True)
class StoreOpener:
    """A chat.db the caller has already checked, and how to build its Store (in a worker, after the
    first frame)."""

    path: Path
    open: Callable[[], Store]
    locked: bool = False
    """chat.db is encrypted and no keyring entry or command gives its passphrase: the unlock screen asks
    for it first (app.tui.screens.unlock), and nothing opens the file before that."""


class MemApp(App[None]):
    """memapp's TUI over one Store (which the caller opens and closes)."""

    CSS_PATH = Path(__file__).with_name("memapp.tcss")
    TITLE = "memapp"
    COMMANDS = App.COMMANDS | {MemappCommands}
    DEFAULT_MODE = FIRST_MODE
    MODES: ClassVar[dict[str, str | Callable[[], Screen[Any]]]] = {
        place.mode: _OnFirstUse(place.mode) for place in PLACES if place.mode != FIRST_MODE
    }
    """The default mode's screen comes from `get_default_screen` and joins the modes in `on_mount`."""

    BINDINGS: ClassVar[list[BindingType]] = [
        *(place.binding() for place in PLACES),
        *(place.anywhere_binding() for place in PLACES),
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

    def __init__(
        self,
        store: Store | StoreOpener,
        *,
        load_model: bool = True,
        greet: bool = True,
        import_screens: bool = True,
    ) -> None:
        super().__init__()
        self._store: Store | None = None
        self._opener: StoreOpener | None = None
        self._store_lock = threading.Lock()
        self._load_model = load_model
        self._import_screens = import_screens
        self.screens_imported = threading.Event()
        """Set once every place's screen module is imported (in the model's thread, after the model)."""
        self._model_started = False
        self._greet = greet
        self._awaiting_unlock = isinstance(store, StoreOpener) and store.locked
        app_keys = [k.strip() for b in self.BINDINGS if isinstance(b, Binding) for k in b.key.split(",")]
        self._switch_keys = KeysDuringSwitch(self, [*app_keys, *ALT_DIGIT_AS_KEY], self.on_event)
        self._seen_data_version: int | None = None
        self._theme_restored = False
        if isinstance(store, StoreOpener):
            self._opener = store
            # Until the store is open: counts are being read, semantic search is warming up.
            status = AppStatus(database=short_path(store.path), semantic="loading")
        else:
            store.hold_keywords()  # search-as-you-type ranks keyword matches in this process
            self._store = store
            status = self._store_status(AppStatus(database=short_path(store.path)), store)
        self.set_reactive(MemApp.status, status)

    @property
    def store(self) -> Store:
        """The Store. If the opening worker has not finished, the caller waits for it (or opens it)."""
        store = self._store
        if store is None:
            with self._store_lock:
                if self._store is None:
                    assert self._opener is not None
                    opened = self._opener.open()
                    opened.hold_keywords()  # search-as-you-type ranks keyword matches in this process
                    self._store = opened
                store = self._store
        return store

    @property
    def store_ready(self) -> bool:
        """Whether the store is open: screens read nothing before, so the first frame never waits."""
        return self._store is not None

    def _store_status(self, status: AppStatus, store: Store) -> AppStatus:
        state = store.semantic_state
        if state == "not loaded":
            state = "loading" if self._load_model else "unavailable: the model is not loaded in this session"
        return replace(status, tokens_exact=store.tokens.exact, semantic=state)

    # -- start-up ------------------------------------------------------------------------------------

    def get_default_screen(self) -> Screen[Any]:
        """The Threads screen, shown first. Why not from MODES like the others: Textual re-parses the
        whole stylesheet when it starts a mode from MODES (~40 ms, before the first frame here), and
        not for the default screen. `on_mount` adds the mode, so `switch_mode` can come back to it."""
        return mode_screen_class(self.DEFAULT_MODE)()

    def on_mount(self) -> None:
        self.add_mode(self.DEFAULT_MODE, _OnFirstUse(self.DEFAULT_MODE))  # its screen is already running
        if self._awaiting_unlock and self._opener is not None:
            from app.tui.screens.unlock import UnlockScreen

            self.push_screen(UnlockScreen(self._opener.path), self._unlocked)
        if self.store_ready:
            self.refresh_counts()
            self._watch_other_writers()
            self._restore_theme()

    def on_ready(self) -> None:
        if not self.store_ready and not self._awaiting_unlock:
            self._open_store()

    def _unlocked(self, ok: bool | None) -> None:
        self._awaiting_unlock = False
        if ok:
            self._open_store()

    def _open_store(self) -> None:
        run_in_thread(
            self,
            lambda: self.store,
            self._store_opened,
            group="store",
            description="opening the database",
            on_error=self._store_failed,
        )

    @property
    def model_loading(self) -> bool:
        """The embedding model is being loaded in its worker thread right now."""
        return self._model_started and self.status.semantic == "loading"

    def _store_opened(self, store: Store) -> None:
        self.status = self._store_status(self.status, store)
        self.data_changed()  # the screens read what they show now, and the status line counts
        self._watch_other_writers()
        self._restore_theme()

    def _watch_other_writers(self) -> None:
        """Poll SQLite's data_version (microseconds, on the UI thread's own connection) to notice writes
        by other processes (the CLI, the MCP server) and refresh the counts and the visible screen."""
        self._seen_data_version = self._read_data_version()
        self.set_interval(POLL_SECONDS, self._poll_data_version, name="data-version")

    def _read_data_version(self) -> int | None:
        try:
            return self.store.data_version()
        except Exception:  # closing down, or the file went away: the next poll tries again
            return None

    def _poll_data_version(self) -> None:
        version = self._read_data_version()
        if version is not None and version != self._seen_data_version:
            self._seen_data_version = version
            self.data_changed()

    # -- the theme, saved per database -----------------------------------------------------------------

    def _restore_theme(self) -> None:
        """The theme chosen last time (ctrl+p → "Change theme"), from chat.db's settings."""
        store = self.store

        def read() -> str | None:
            return store.get_setting(THEME_SETTING)

        run_in_thread(self, read, self._apply_saved_theme, group="theme", description="reading the theme")

    def _apply_saved_theme(self, name: str | None) -> None:
        self._theme_restored = True
        if name and name != self.theme and name in self.available_themes:
            self.theme = name

    def watch_theme(self, name: str) -> None:
        if not self._theme_restored or not self.store_ready:
            return  # the saved one is being put back, not chosen
        store = self.store
        run_in_thread(
            self,
            lambda: store.set_setting(THEME_SETTING, name),
            group="theme",
            description="saving the theme",
        )

    def _store_failed(self, error: BaseException) -> None:
        self.exit(return_code=1, message=f"memapp: cannot open {self.status.database}: {error}")

    def _load_model_later(self) -> None:
        """Once, after the first counts are on screen: importing torch holds the GIL for seconds, and
        started any earlier it slows the first screen's rows by hundreds of milliseconds. The other
        screens' modules are imported in the same thread afterwards (`import_all_screens`)."""
        if self._model_started:
            return
        self._model_started = True
        # A daemon thread of its own, not a Textual thread worker: those run in asyncio's default executor,
        # which App.run() waits for on exit, so quitting in the first seconds would hang until torch had
        # finished loading (memapp.tui exits at once instead, see `model_loading`).
        threading.Thread(target=self._in_background, name="memapp-model", daemon=True).start()

    def _in_background(self) -> None:
        if self.status.semantic == "loading":
            self._load_model_now()
        if self._import_screens:
            import_all_screens()
        self.screens_imported.set()

    def _load_model_now(self) -> None:
        try:
            store = self.store
            store.tokens.load()  # the BPE file is parsed on first use: do it here, not in the first count
            # ... and the keyword indexes' row lengths, not in the first search
            store.hold_keywords(load=True)
            ok = store.load_model()
            problem = store.vector_problem or "the embedding model failed to load"
            if ok:
                store.hold_vectors()  # search-as-you-type scans vectors held in this process
        except Exception as exc:  # noqa: BLE001 - shown to the person, never a crash
            ok, problem = False, f"{type(exc).__name__}: {exc}"
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
        run_in_thread(
            self,
            self._count,
            group="counts",
            exclusive=True,
            description="counting",
            on_error=lambda _error: self._load_model_later(),
        )

    def _count(self) -> None:
        stats = self.store.stats()
        mem = stats["memories"]
        self.post_message(CountsChanged(stats["threads"], stats["messages"], mem["active"], mem["trash"]))

    def on_counts_changed(self, message: CountsChanged) -> None:
        first = self.status.threads is None
        self.status = replace(
            self.status, threads=message.threads, messages=message.messages, memories=message.memories
        )
        if first:
            self.call_after_refresh(self._load_model_later)
        empty = not (message.threads or message.memories or message.trash)
        if first and empty and self._greet and not self.screen.is_modal:
            from app.tui.screens.welcome import WelcomeScreen

            self.push_screen(WelcomeScreen())

    def data_changed(self) -> None:
        """Call after any write: screens reload what they show, the status line recounts."""
        self.data_version += 1
        self.refresh_counts()
        if self._seen_data_version is not None:  # our own write: the poll need not report it again
            self._seen_data_version = self._read_data_version()

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

    def _leave_welcome(self) -> None:
        from app.tui.screens.welcome import WelcomeScreen

        if isinstance(self.screen, WelcomeScreen):
            self.screen.dismiss()

    async def on_event(self, event: events.Event) -> None:
        """Keys typed while a screen is switching are held (app.tui.switching). A terminal's alt+digit
        arrives as a macOS Option+digit character (see modes.ALT_DIGIT_AS_KEY); taken here, before the
        focused text box would type it."""
        if isinstance(event, events.Key) and self._switch_keys.take(event):
            return
        if isinstance(event, events.Key) and event.key in ALT_DIGIT_AS_KEY:
            place = next((p for p in PLACES if p.key == ALT_DIGIT_AS_KEY[event.key]), None)
            if place is not None:
                event.stop()
                event.prevent_default()
                await self.action_go(place.mode)
                return
        await super().on_event(event)

    @property
    def holding_keys(self) -> bool:
        """True from the start of a screen switch until the arriving screen has been drawn once: keys
        typed meanwhile are held, then passed on or dropped (app.tui.switching)."""
        return self._switch_keys.holding

    async def switching(self, change: Awaitable[object]) -> None:
        """Await a screen change (`switch_mode`, `push_screen` of a main screen) with the keys typed
        meanwhile held until the arriving screen is drawn (app.tui.switching)."""
        await self._switch_keys.during(change)

    async def open_screen(self, screen: Screen[Any]) -> None:
        """Push a main screen (a thread, from a list or a search hit) the way switching does."""
        await self.switching(self.push_screen(screen))

    async def open_thread(
        self, thread_id: int, *, message_id: int | None = None, nav: str = "threads"
    ) -> None:
        from app.tui.screens.thread_view import ThreadViewScreen

        await self.open_screen(ThreadViewScreen(thread_id, message_id=message_id, nav=nav))

    async def action_place(self, mode: str) -> None:
        """A place's digit: typed as text in a text box, else the switch."""
        if self._switch_keys.typing_in_a_box():
            raise SkipAction
        await self.action_go(mode)

    async def action_go(self, mode: str) -> None:
        self._leave_welcome()
        if mode != self.current_mode:
            await self.switching(self.switch_mode(mode))

    def action_help(self) -> None:
        from app.tui.screens.help import HelpScreen

        self.push_screen(HelpScreen(self.screen))

    def action_imported_suggestions(self) -> None:
        """Review the memory suggestions an imported text list made (they belong to no thread)."""
        from app.tui.screens.suggestions import SuggestionsScreen

        self.push_screen(SuggestionsScreen(None, "from imported lists"))

    def action_new_memory(self) -> None:
        from app.tui.screens.memory_edit import open_memory_editor

        open_memory_editor(self, None)

    async def action_load_demo(self) -> None:
        """Import the bundled demo on the Import screen, where its progress and report are shown."""
        from app.tui.screens.import_screen import ImportScreen

        self._leave_welcome()
        await self.switching(self.switch_mode("import"))
        screen = self.screen
        if isinstance(screen, ImportScreen):
            screen.action_demo()
