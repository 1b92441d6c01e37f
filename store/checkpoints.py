"""Keep chat.db itself whole: the WAL is copied into it soon after writes stop, and when a process exits.

Why: "back up by copying chat.db" is the first promise of the SPEC, but in WAL mode a commit lands in
chat.db-wal, and SQLite copies it into chat.db only every 1,000 pages or when the last connection
closes. A long-lived process (the MCP server, the TUI) therefore kept recent memories out of chat.db for
as long as it ran: a copy of chat.db alone held none of 20 acknowledged memories, and passed
`PRAGMA integrity_check`, so it looked like a good backup (and a new chat.db copied this way had no
tables at all).

So each process that writes a database checkpoints it DELAY seconds after its last commit (debounced:
an import writing thread after thread is not slowed by a checkpoint per thread), on a thread of its own
with a connection of its own, and once more at exit (`flush_all`, registered with atexit; the TUI, which
leaves with os._exit, calls it itself). The checkpoint is PASSIVE: it never waits for, or blocks, a
reader or writer; when a reader's snapshot keeps part of the WAL from being copied, it is tried again
a little later. `memapp backup` stays the copy that is safe at any moment.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable

import apsw

log = logging.getLogger("memapp.checkpoints")

DELAY = 1.0  # seconds after the last commit; a plain copy of chat.db is whole ~DELAY s after writes stop
RETRY = 2.0  # seconds before trying again when readers kept part of the WAL from being copied
EXIT_BUSY_MS = 500  # the most the exit checkpoint waits for a lock


def checkpoint(con: apsw.Connection) -> bool:
    """A PASSIVE checkpoint on `con`: True when every frame of the WAL is now in the database file (or
    there is no WAL), False when some could not be copied yet (a reader still uses them)."""
    try:
        row = con.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    except apsw.BusyError:  # another connection is checkpointing right now
        return False
    if row is None:
        return True
    busy, frames, copied = (int(x) for x in row)  # type: ignore[arg-type]
    return frames < 0 or (busy == 0 and copied >= frames)


class Checkpointer:
    """The delayed checkpoint of one database in this process."""

    def __init__(self, path: str, connect: Callable[[], apsw.Connection]) -> None:
        self.path = path
        self._connect = connect
        self._last_commit = 0.0
        self._dirty = threading.Event()
        self._stop = threading.Event()
        self._mutex = threading.Lock()  # one checkpoint at a time (the thread's, or the exit's)
        self._thread: threading.Thread | None = None
        self.done = 0  # checkpoints that copied the whole WAL (for tests)

    def wrote(self) -> None:
        """A commit changed the database (called from the commit hook: cheap, no I/O)."""
        self._last_commit = time.monotonic()
        self._dirty.set()
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="memapp-checkpoint", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            self._dirty.wait()
            while (left := self._last_commit + DELAY - time.monotonic()) > 0:
                if self._stop.wait(left):
                    return
            self._dirty.clear()
            if self._stop.is_set():
                return
            if not self.flush() and not self._dirty.is_set():
                self._dirty.set()  # readers held part of it: again after RETRY
                if self._stop.wait(RETRY):
                    return

    def flush(self, busy_ms: int | None = None) -> bool:
        """Checkpoint now on a connection of its own. True when chat.db holds every commit."""
        with self._mutex:
            try:
                con = self._connect()
            except Exception as exc:  # the file was removed or cannot be opened: nothing to keep whole
                log.debug("no checkpoint of %s: %s", self.path, exc)
                return True
            try:
                if busy_ms is not None:
                    con.set_busy_timeout(busy_ms)
                whole = checkpoint(con)
            except apsw.Error as exc:
                log.debug("checkpoint of %s failed: %s", self.path, exc)
                whole = False
            finally:
                con.close()
            self.done += whole
            return whole

    def pending(self) -> bool:
        return self._dirty.is_set()

    def stop(self) -> None:
        self._stop.set()
        self._dirty.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=1.0)


_checkpointers: dict[object, Checkpointer] = {}
_mutex = threading.Lock()


def checkpointer(key: object, path: str, connect: Callable[[], apsw.Connection]) -> Checkpointer:
    """The process's Checkpointer for the database `key` (device and inode), made on first use."""
    with _mutex:
        c = _checkpointers.get(key)
        if c is None:
            c = _checkpointers[key] = Checkpointer(path, connect)
        return c


def flush_all() -> None:
    """At exit: checkpoint every database this process changed since its last checkpoint. A WAL that is
    already gone (the last connection's close copied and removed it) needs nothing."""
    with _mutex:
        pending = list(_checkpointers.values())
    for c in pending:
        was_pending = c.pending()
        c.stop()
        wal = c.path + "-wal"
        if was_pending and os.path.exists(wal) and os.path.getsize(wal) > 0:
            with contextlib.suppress(Exception):  # leaving must never fail because of this
                c.flush(busy_ms=EXIT_BUSY_MS)


def _forget_after_fork() -> None:
    """A forked child has none of the parent's threads: it starts its own on its first commit."""
    global _mutex
    _mutex = threading.Lock()
    _checkpointers.clear()


os.register_at_fork(after_in_child=_forget_after_fork)
atexit.register(flush_all)
