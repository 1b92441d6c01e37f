"""Write transactions: the threads of one process queue for chat.db's write lock in Python, in turn.

Why: SQLite lets one connection write at a time and makes the others wait in its busy handler. apsw's
`transaction_mode = "IMMEDIATE"` began `with con:` while holding Python's GIL, so a thread waiting for
the lock kept the GIL for the whole wait and the thread that held the lock could not run the Python
code that would finish its transaction: both stalled until the busy timeout (two threads, one holding a
write transaction for 0.5 s of Python work: it committed at 16 s and the other failed; 3 of 20 parallel
MCP `add_memory` calls answered within 120 s). Here every `with con:` of a connection opened by
store.db.connect:

1. takes this process's lock for that database file (`WriteLock`, first come first served, waiting
   without the GIL), so threads of one process never meet inside SQLite's busy handler;
2. then runs `BEGIN IMMEDIATE` as a statement, which apsw runs without the GIL, so a wait for another
   *process* (an import, the TUI, a CLI edit) lets this process's other threads run meanwhile;
3. commits or rolls back and hands the lock to the next thread in line.

The whole wait (queue, then SQLite) is bounded by the connection's busy timeout, after which apsw's
BusyError says the database stayed locked, as before. A nested `with con:` is a savepoint inside the
transaction, as with apsw's own context manager.

A write committed outside `with con:` (an autocommit UPDATE) would skip the queue and go back to waiting
in SQLite; the commit hook notices it (`STRICT`: the test suite turns such a commit into an error, so a
new write path that forgets the lock fails its tests). The same hook tells store.checkpoints that the
database changed (a plain copy of chat.db is whole again soon after writes stop).
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from typing import Literal, Self

import apsw

log = logging.getLogger("memapp.writes")

# Set by the test suite (tests/conftest.py) or MEMAPP_STRICT_WRITES=1: a commit to chat.db made without
# the write lock fails (ConstraintError) instead of being logged.
STRICT = os.environ.get("MEMAPP_STRICT_WRITES", "") not in ("", "0")


class UnlockedWriteError(RuntimeError):
    """A commit to chat.db made without the write lock while STRICT (a write path that skips the queue)."""


class WriteLock:
    """One database's write lock within this process: threads get it in the order they asked.

    First come, first served on purpose: a plain threading.Lock lets the thread that releases it take it
    again at once, so an import writing thread after thread could keep a TUI edit waiting for its whole
    run. Waiting happens in `threading.Lock.acquire`, which releases the GIL."""

    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._owner: int | None = None
        self._queue: deque[tuple[int, threading.Lock]] = deque()

    @property
    def owner(self) -> int | None:
        """The thread id holding the lock, or None."""
        return self._owner

    def waiting(self) -> int:
        """How many threads are in line (for tests and diagnostics)."""
        return len(self._queue)

    def acquire(self, timeout: float) -> bool:
        """Take the lock within `timeout` seconds; False when the turn did not come in time."""
        me = threading.get_ident()
        with self._mutex:
            if self._owner is None:
                self._owner = me
                return True
            turn = threading.Lock()
            turn.acquire()
            self._queue.append((me, turn))
        try:
            if turn.acquire(timeout=max(0.0, timeout)):
                return True  # release() handed it over (and made us the owner)
        except BaseException:  # Ctrl-C while waiting: leave the line, or pass on a turn just given
            self._leave(me, turn)
            raise
        return not self._leave(me, turn, give_back=False)

    def _leave(self, me: int, turn: threading.Lock, *, give_back: bool = True) -> bool:
        """Step out of the line. True if we were still in it; False if release() had already handed us
        the lock (then it is released again when `give_back`, else kept: the caller owns it)."""
        with self._mutex:
            try:
                self._queue.remove((me, turn))
                return True
            except ValueError:
                pass
        if give_back:
            self.release()
        return False

    def release(self) -> None:
        with self._mutex:
            if self._queue:
                ident, turn = self._queue.popleft()
                self._owner = ident
                turn.release()
            else:
                self._owner = None


_locks: dict[object, WriteLock] = {}
_locks_mutex = threading.Lock()


def lock_for(key: object) -> WriteLock:
    """The process's lock for the database identified by `key` (its device and inode)."""
    with _locks_mutex:
        lock = _locks.get(key)
        if lock is None:
            lock = _locks[key] = WriteLock()
        return lock


def _forget_after_fork() -> None:
    """A forked child starts with no thread in any transaction: a lock some parent thread held at the
    fork would otherwise never be released in the child."""
    global _locks_mutex
    _locks_mutex = threading.Lock()
    _locks.clear()


os.register_at_fork(after_in_child=_forget_after_fork)


class Connection(apsw.Connection):
    """An apsw connection whose `with con:` queues for the process's write lock (module docstring).

    store.db.connect makes every connection this class and calls `attach` on it."""

    write_lock: WriteLock
    busy_ms: int
    on_commit: Callable[[], None] | None = None
    on_close: Callable[[Connection], None] | None = None
    _depth = 0  # `with con:` blocks open on this connection
    _holding = False  # this connection holds write_lock
    _ending = False  # inside our own COMMIT / ROLLBACK
    _inside_outer = False  # the outermost block is a savepoint inside a transaction the caller began

    def attach(
        self,
        lock: WriteLock,
        busy_ms: int,
        on_commit: Callable[[], None] | None = None,
        on_close: Callable[[Connection], None] | None = None,
    ) -> None:
        """Use `lock` for write transactions, wait at most `busy_ms` for it, call `on_commit` after each
        commit that changed the main database, and `on_close` with the connection just before it closes."""
        self.write_lock = lock
        self.busy_ms = busy_ms
        self.on_commit = on_commit
        self.on_close = on_close
        self.set_commit_hook(self._committing, id="memapp.writes")
        self.set_rollback_hook(self._rolled_back, id="memapp.writes")

    def close(self, force: bool = False) -> None:
        hook, self.on_close = self.on_close, None  # once, even when close() is called again
        if hook is not None:
            try:
                hook(self)
            except Exception as exc:  # closing must not fail because of what the hook does (a checkpoint)
                log.debug("on_close of a connection failed: %s", exc)
        super().close(force)

    # -- the context manager ---------------------------------------------------------------------------

    def __enter__(self) -> Self:
        self._open(self.busy_ms)
        return self

    def __exit__(self, etype: type[BaseException] | None, *exc: object) -> Literal[False]:
        self._close(ok=etype is None)
        return False

    @contextlib.contextmanager
    def transaction(self, wait_ms: int) -> Iterator[Self]:
        """`with con:` that waits at most `wait_ms` for the lock (0: only if it is free right now), then
        raises apsw.BusyError: for bookkeeping that must never hold up an answer (access counts)."""
        self._open(wait_ms)
        ok = False
        try:
            yield self
            ok = True
        finally:
            self._close(ok=ok)

    def _open(self, wait_ms: int) -> None:
        if self._depth == 0:
            self._begin(wait_ms)
        else:
            self.execute(f'SAVEPOINT "memapp-{self._depth}"')
        self._depth += 1

    def _close(self, *, ok: bool) -> None:
        self._depth -= 1
        if self._depth > 0 or self._inside_outer:
            self._end_savepoint(self._depth, ok=ok)
            if self._depth == 0:
                self._inside_outer = False
                self._release()
        else:
            self._end(ok=ok)

    @contextlib.contextmanager
    def locked(self) -> Iterator[Self]:
        """This process's write lock without a transaction, for what cannot run inside one but writes
        (switching to WAL, a restore through SQLite's backup API): other threads wait their turn."""
        if self._depth or self._holding or self.in_transaction:
            raise apsw.SQLError("locked() is for use outside a transaction")
        self._acquire(self.busy_ms)
        try:
            yield self
        finally:
            self._release()

    def _acquire(self, wait_ms: int) -> None:
        if not self.write_lock.acquire(wait_ms / 1000):
            raise apsw.BusyError(
                f"database is locked: other threads of this process kept writing for more than "
                f"{wait_ms / 1000:g} s"
            )
        self._holding = True

    # -- steps -----------------------------------------------------------------------------------------

    def _begin(self, wait_ms: int) -> None:
        self._release()  # a transaction ended by a bare ROLLBACK/COMMIT statement left the lock held
        deadline = time.monotonic() + wait_ms / 1000
        self._acquire(wait_ms)
        try:
            if self.in_transaction:  # the caller began a (read) transaction: a savepoint inside it
                self._inside_outer = True
                self.execute('SAVEPOINT "memapp-0"')
                return
            self.set_busy_timeout(max(0, int((deadline - time.monotonic()) * 1000)))
            try:
                self.execute("BEGIN IMMEDIATE")  # waits for other processes without the GIL
            finally:
                self.set_busy_timeout(self.busy_ms)
        except BaseException:
            if self._inside_outer:  # the savepoint did not open: the caller's transaction is as it was
                self._inside_outer = False
            elif self.in_transaction:
                with contextlib.suppress(apsw.Error):
                    self.execute("ROLLBACK")
            self._release()
            raise

    def _end(self, *, ok: bool) -> None:
        self._ending = True
        try:
            if not self.in_transaction:  # SQLite already rolled it back (a full disk, an interrupt)
                return
            if not ok:
                with contextlib.suppress(apsw.Error):  # the body's exception is the one to report
                    self.execute("ROLLBACK")
                return
            try:
                self.execute("COMMIT")
            except BaseException:
                if self.in_transaction:
                    with contextlib.suppress(apsw.Error):
                        self.execute("ROLLBACK")
                raise
        finally:
            self._ending = False
            self._release()

    def _end_savepoint(self, depth: int, *, ok: bool) -> None:
        if not self.in_transaction:  # the whole transaction was rolled back under us
            return
        name = f'"memapp-{depth}"'
        if not ok:
            with contextlib.suppress(apsw.Error):
                self.execute(f"ROLLBACK TO {name}")
        self.execute(f"RELEASE {name}")

    def _release(self) -> None:
        if self._holding:
            self._holding = False
            self.write_lock.release()

    # -- hooks -----------------------------------------------------------------------------------------

    def _committing(self) -> bool:
        """Commit hook: a commit that wrote chat.db without the lock is a write path that skipped the
        queue (refused when STRICT); every commit that wrote it is reported to `on_commit`."""
        if self.txn_state("main") != apsw.SQLITE_TXN_WRITE:
            return False  # only the temp schema changed (a search's fts5vocab view)
        if not self._holding:
            if STRICT:  # raised from the hook, the commit becomes a rollback: the test that made it fails
                raise UnlockedWriteError(
                    "a write to chat.db was committed without the write lock: make it inside `with con:`"
                )
            log.debug("a write to chat.db committed without the write lock")
        if self.on_commit is not None:
            self.on_commit()
        return False

    def _rolled_back(self) -> None:
        """Rollback hook: a transaction rolled back by SQLite itself (a full disk) or by a bare ROLLBACK
        statement is over, so the next thread in line may write."""
        if not self._ending and not self._inside_outer:
            self._release()
