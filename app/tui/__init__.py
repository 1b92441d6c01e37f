"""`memapp` with no subcommand: open the TUI on --db / MEMAPP_DB / the default chat.db.

chat.db is checked (and migrated) here, before the app starts, so a file that is not a memapp database
or has a newer schema is refused with a one-line message on the terminal instead of inside a half-drawn
screen. The Store itself (numpy, the vector code, the tokenizer) is built by the app in a worker after
its first frame, which is what keeps start-up close to a bare Textual app's (issue 7, benchmark 4).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import threading
import time

from app.cli.common import EXIT_FAILED, EXIT_USAGE, Context
from store import StoreError, checkpoints

NO_TERMINAL = (
    "memapp: the TUI needs a terminal, and {what} not one; run `memapp` in a terminal window, or use a "
    "command (memapp --help lists them, e.g. memapp search QUERY)"
)


def _not_a_terminal() -> str | None:
    """Which of stdin and stdout is not a terminal, or None when both are. Why check: started from a pipe,
    cron or an editor's task runner, the app drew to nobody and waited for keys that never came."""
    bad = [
        name
        for name, stream in (("stdin", sys.__stdin__), ("stdout", sys.__stdout__))
        if stream is None or not stream.isatty()
    ]
    if not bad:
        return None
    return " and ".join(bad) + (" are" if len(bad) > 1 else " is")


def run(args: argparse.Namespace) -> int:
    if (what := _not_a_terminal()) is not None:
        print(NO_TERMINAL.format(what=what), file=sys.stderr)
        return EXIT_USAGE
    try:
        ctx = Context(args)
        locked = _needs_unlock(ctx)
        if not locked:
            ctx.check_database()
    except StoreError as exc:
        print(f"memapp: {exc}", file=sys.stderr)
        return EXIT_FAILED
    # Log records would be written over the screen; Textual's handler sends them to its devtools console.
    from textual.logging import TextualHandler

    logging.getLogger().handlers[:] = [TextualHandler()]
    from app.tui.app import MemApp, StoreOpener

    app = MemApp(StoreOpener(ctx.db_path, lambda: ctx.store, locked=locked))
    exit_when_the_terminal_goes()
    try:
        app.run()
    finally:
        loading = app.model_loading
        if loading:
            ctx.flush()  # the store stays open for the loading thread; its access counts are written
        else:
            ctx.close()
    code = int(app.return_code or 0)
    # Leave at once. Quit while the model loads: its worker thread cannot be stopped, and Python would
    # wait for it (up to ~10 s). Quit with the model loaded: tearing down torch and its thread pools at
    # interpreter exit took another 5-6 s after the screen was cleared. Nothing is left to save either
    # way: every write was committed when it was made (and the store is closed when nothing is loading;
    # SQLite recovers an unclosed connection's WAL like a killed process's).
    sys.stdout.flush()
    sys.stderr.flush()
    checkpoints.flush_all()  # os._exit skips atexit: chat.db itself gets the last writes (store.checkpoints)
    os._exit(code)


def _needs_unlock(ctx: Context) -> bool:
    """An encrypted chat.db this process has no key for: the app's unlock screen finds one (the command, the
    keyring) or asks, after the first frame: importing `keyring` and finding its backend alone takes ~0.3 s.
    The database's checks and migrations then run when the store opens."""
    from store.crypto import keys

    return keys.is_encrypted(ctx.db_path) and keys.unlocked(ctx.db_path) is None


EXIT_HANGUP = 129  # 128 + SIGHUP, what a shell reports for a process its closed terminal ended
TERMINAL_CHECK_SECONDS = 1.0


def exit_when_the_terminal_goes(interval: float = TERMINAL_CHECK_SECONDS) -> None:
    """End the process once its terminal is gone (the window closed, an ssh session dropped).

    Why: a process usually gets SIGHUP then, but not always: started by `make run`, memapp was left
    running after its tmux window closed, with no terminal, at 100% of a core, for as long as nobody
    noticed (Textual's input thread reads end-of-file in a loop; its output queue, full, had stopped the
    event loop, so nothing inside the app can react). A thread of its own checks every `interval` whether
    stdin is still a terminal and leaves as `run` does (every write was committed when it was made)."""
    stdin = sys.__stdin__
    fd = stdin.fileno() if stdin is not None else -1
    if fd < 0 or not os.isatty(fd):
        return

    def watch() -> None:
        while os.isatty(fd):
            time.sleep(interval)
        checkpoints.flush_all()
        os._exit(EXIT_HANGUP)

    threading.Thread(target=watch, name="memapp-terminal", daemon=True).start()
