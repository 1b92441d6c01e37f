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

The thread lives only while there is something to do: it ends IDLE seconds after its last checkpoint
(the next commit starts another), and when the process's last connection to the database closes, that
connection does the pending checkpoint itself and the thread is stopped. A process that opens and
closes many databases (a test run, a sync of many files) once kept a thread per database for good:
thousands of them used up the process's memory maps (vm.max_map_count), after which every mmap failed
(SQLite's -shm, thread stacks, malloc) and the process crashed with a segmentation fault. And a thread
that woke after its Store was closed opened the file again, recreating -wal and -shm files in a folder
that was being removed.
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
IDLE = 2.0  # seconds a thread with nothing left to do waits for another commit before it ends


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

    def __init__(self, key: object, path: str, connect: Callable[[], apsw.Connection]) -> None:
        self.key = key
        self.path = path
        self._connect = connect
        self._last_commit = 0.0
        self._dirty = threading.Event()
        self._stop = threading.Event()
        self._mutex = threading.Lock()  # one checkpoint at a time (the thread's, a closing one's, the exit's)
        self._thread: threading.Thread | None = None  # set and cleared under the module's _mutex
        self.users = 0  # this process's open connections to the database (under the module's _mutex)
        self.done = 0  # checkpoints that copied the whole WAL (for tests)

    def wrote(self) -> None:
        """A commit changed the database (called from the commit hook: cheap, no I/O)."""
        self._last_commit = time.monotonic()
        self._dirty.set()
        self._start()

    def _start(self) -> None:
        with _mutex:
            if self._thread is not None or self._stop.is_set():
                return
            thread = threading.Thread(target=self._run, name="memapp-checkpoint", daemon=True)
            try:
                thread.start()
            except RuntimeError as exc:
                # No thread to be had (the process is at a limit): the commit stands, and the checkpoint
                # at close or exit still copies it; raising here would turn the commit into a rollback.
                log.warning("no checkpoint thread for %s: %s", self.path, exc)
                return
            self._thread = thread

    def _run(self) -> None:
        while not self._stop.is_set():
            if not self._dirty.wait(IDLE):
                if self._retire():
                    return
                continue
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

    def _retire(self) -> bool:
        """Nothing was written for IDLE s: the thread ends (the next commit starts another), and the
        database is forgotten when no connection of this process holds it any more."""
        with _mutex:
            if self._dirty.is_set():  # a commit came in meanwhile; its wrote() saw this thread alive
                return False
            self._thread = None
            if self.users <= 0 and _checkpointers.get(self.key) is self:
                del _checkpointers[self.key]
            return True

    def flush(self, busy_ms: int | None = None) -> bool:
        """Checkpoint now on a connection of its own. True when chat.db holds every commit."""
        with self._mutex:
            wal = self.path + "-wal"
            if not os.path.exists(wal) or os.path.getsize(wal) == 0:
                # Nothing to copy (the last connection's close did it): opening the file would only
                # create -wal and -shm files again, perhaps in a folder being removed.
                return True
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

    def flush_on(self, con: apsw.Connection) -> bool:
        """Checkpoint now on `con` (the process's last connection to the database, about to close)."""
        self._dirty.clear()
        with self._mutex:
            try:
                whole = checkpoint(con)
            except apsw.Error as exc:  # e.g. closed inside a transaction: the thread tries again
                log.debug("checkpoint of %s at close failed: %s", self.path, exc)
                whole = False
            self.done += whole
        if not whole:
            self._dirty.set()
        return whole

    def pending(self) -> bool:
        return self._dirty.is_set()

    def stop(self) -> None:
        self._stop.set()
        self._dirty.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=1.0)


_checkpointers: dict[object, Checkpointer] = {}
_mutex = threading.Lock()


def acquire(key: object, path: str, connect: Callable[[], apsw.Connection]) -> Checkpointer:
    """The process's Checkpointer for the database `key` (device and inode), made on first use, for a
    connection that opens now (each is given back with `release` when it closes)."""
    with _mutex:
        c = _checkpointers.get(key)
        if c is None or (c.path != path and not os.path.exists(c.path)):
            # new, or the inode of a removed file reused by another one: a checkpointer of its own
            c = _checkpointers[key] = Checkpointer(key, path, connect)
        c.users += 1
        return c


def release(c: Checkpointer, con: apsw.Connection) -> None:
    """`con`, a connection of this process to c's database, is about to close. The last one does the
    pending checkpoint itself and stops the thread: a closed Store leaves no thread behind, and nothing
    opens the file after it. When readers elsewhere keep part of the WAL, the thread tries again."""
    with _mutex:
        c.users -= 1
        if c.users > 0:
            return
    if c.pending() and not c.flush_on(con):
        c.wrote()  # the thread tries again after DELAY, RETRY (and flush_all at exit)
        return
    with _mutex:
        if c.users > 0:  # opened again meanwhile
            return
        if _checkpointers.get(c.key) is c:
            del _checkpointers[c.key]
    c.stop()


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
