"""The unlock screen: an encrypted chat.db is opened here, before anything reads it, with the passphrase
MEMAPP_PASSPHRASE_COMMAND or the OS keyring gives (the screen then closes by itself), or the one typed.

Why a screen of the app and not a getpass before it starts: the terminal belongs to Textual from the first
frame, and the app must still draw at once (the first frame is measured, bench/perf/startup.py). The passphrase is
typed into a password box (nothing shown), checked off the UI thread (deriving the key takes ~30 ms of
CPU, more on a busy machine), and never logged, notified or kept in a widget once checked: a wrong one
clears the box. "Remember" stores it in the OS keyring, as `memapp key remember` does.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Checkbox, Input, Static

from app.text import literal, short_path
from app.tui.work import run_in_thread
from store.crypto import keys


class UnlockScreen(ModalScreen[bool]):
    """Ask for chat.db's passphrase; dismisses with True once it opens the file (ctrl+q quits instead)."""

    TITLE = "Unlock (an encrypted chat.db)"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "clear", "Clear", id="unlock-clear", tooltip="Empty the passphrase box"),
    ]

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        self.attempts = 0
        self.checking = False

    def compose(self) -> ComposeResult:
        with Vertical(id="unlock-box", classes="dialog"):
            yield Static("This chat.db is encrypted", classes="dialog-title", markup=False)
            yield Static(literal(short_path(self.path)), id="unlock-path", markup=False)
            yield Input(placeholder="passphrase", password=True, id="unlock-input")
            yield Checkbox("Remember on this machine (OS keyring)", id="unlock-remember")
            yield Static("", id="unlock-message", markup=False)
            yield Static("Enter: unlock   Ctrl+Q: quit", id="unlock-hint", markup=False)

    def on_mount(self) -> None:
        """First the sources that need nobody (MEMAPP_PASSPHRASE_COMMAND, the OS keyring), in a worker: the
        screen then closes by itself, or the box takes the passphrase."""
        box = self.query_one("#unlock-input", Input)
        box.disabled = True
        self.checking = True
        self._say("Looking for the passphrase (MEMAPP_PASSPHRASE_COMMAND, the OS keyring)…")
        run_in_thread(
            self,
            lambda: keys.unattended(self.path),
            self._looked,
            group="unlock",
            description="looking for the passphrase",
            on_error=lambda _exc: self._looked(False),
        )

    def _looked(self, found: bool) -> None:
        self.checking = False
        if found:
            self.dismiss(True)
            return
        self._say("")
        box = self.query_one("#unlock-input", Input)
        box.disabled = False
        box.focus()

    def action_clear(self) -> None:
        self.query_one("#unlock-input", Input).value = ""

    def _say(self, text: str) -> None:
        self.query_one("#unlock-message", Static).update(text)

    @on(Input.Submitted, "#unlock-input")
    def _submit(self) -> None:
        box = self.query_one("#unlock-input", Input)
        passphrase = box.value
        if self.checking or not passphrase:
            return
        self.checking = True
        remember = self.query_one("#unlock-remember", Checkbox).value
        box.disabled = True
        self._say("Checking…")

        def check() -> tuple[bool, str | None]:
            if not keys.unlock(self.path, passphrase, "unlock screen"):
                return False, None
            if remember:
                try:
                    keys.keyring_set(keys.salt_of(self.path), passphrase)
                except Exception as exc:  # noqa: BLE001 - opening works without the keyring: say so
                    return True, str(exc)
            return True, None

        run_in_thread(self, check, self._checked, group="unlock", description="checking the passphrase")

    def _checked(self, result: tuple[bool, str | None]) -> None:
        ok, keyring_problem = result
        self.checking = False
        box = self.query_one("#unlock-input", Input)
        box.value = ""
        box.disabled = False
        if ok:
            if keyring_problem:
                self.app.notify(keyring_problem, title="Keyring", severity="warning", markup=False)
            self.dismiss(True)
            return
        self.attempts += 1
        self._say(
            f"That passphrase does not open it (attempt {self.attempts}). Try again, or Ctrl+Q to quit."
        )
        box.focus()
