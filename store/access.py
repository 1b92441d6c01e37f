"""Access counts that never make an answer wait.

A memory's access_count and last_accessed change each time it is used (SPEC: returned by a search,
included in a context or profile, opened in the TUI). Written as part of the answer, that write waited
for the write lock: `search_memory` in the MCP server failed after 15 s while an import held the lock
(issue 28, 21). Here the answer never waits for it:

- `AccessCounts.add` writes the counts at once when the write lock is free right now (the usual case,
  and what a script or test that searches and then reads a count expects), in one statement;
- otherwise they are kept in memory, added up per memory, and a background thread writes them as soon
  as it gets the lock (trying briefly, again every RETRY seconds), still one statement per write;
- `flush` writes what is left with the normal busy timeout: Store.close calls it (after a CLI command
  has printed its answer), so nothing counted is dropped while the process lives.

`last_accessed` never moves backwards (a clock set back, or counts written late): the stored value is
kept when it is later than the new one.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable

import apsw

from store.records import json_dumps, now
from store.writelock import Connection

log = logging.getLogger("memapp.access")

RETRY = 0.25  # seconds between the background writer's tries while counts are waiting
TRY_MS = 100  # how long one background try waits for the lock

_UPDATE = (
    "UPDATE long_term_memories SET access_count = access_count + t.n, "
    "last_accessed = max(coalesce(last_accessed, 0), ?) "
    "FROM (SELECT json_extract(value, '$[0]') AS id, json_extract(value, '$[1]') AS n "
    "FROM json_each(?)) AS t WHERE long_term_memories.id = t.id"
)


def write_counts(con: Connection, counts: dict[int, int], at: float, *, wait_ms: int) -> None:
    """Add `counts` (memory id -> uses) in one statement, last_accessed at least `at`; apsw.BusyError
    when the write lock did not come within `wait_ms`."""
    with con.transaction(wait_ms):
        con.execute(_UPDATE, (at, json_dumps([[i, n] for i, n in sorted(counts.items())])))


class AccessCounts:
    """The access counts of one Store: written now when the lock is free, else soon after."""

    def __init__(self, connection: Callable[[], Connection], busy_ms: Callable[[], int]) -> None:
        self._connection = connection  # the calling thread's connection (Store.con)
        self._busy_ms = busy_ms
        self._pending: Counter[int] = Counter()
        self._at = 0.0
        self._mutex = threading.Lock()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._closed = False

    def add(self, memory_ids: Iterable[int]) -> None:
        ids = {int(i) for i in memory_ids}
        if not ids:
            return
        with self._mutex:
            self._pending.update(ids)
            self._at = max(self._at, now())
        if not self._write(wait_ms=0):
            self._start()

    def pending(self) -> dict[int, int]:
        with self._mutex:
            return dict(self._pending)

    def _take(self) -> tuple[dict[int, int], float]:
        with self._mutex:
            counts, at = dict(self._pending), self._at
            self._pending.clear()
            self._at = 0.0
            return counts, at

    def _put_back(self, counts: dict[int, int], at: float) -> None:
        with self._mutex:
            self._pending.update(counts)
            self._at = max(self._at, at)

    def _write(self, *, wait_ms: int) -> bool:
        """Write what is pending on the calling thread's connection. False if the lock did not come."""
        counts, at = self._take()
        if not counts:
            return True
        try:
            write_counts(self._connection(), counts, at, wait_ms=wait_ms)
            return True
        except apsw.BusyError:
            self._put_back(counts, at)
            return False
        except BaseException:
            self._put_back(counts, at)
            raise

    def _start(self) -> None:
        with self._mutex:
            if self._thread is None and not self._closed:
                self._thread = threading.Thread(target=self._run, name="memapp-access-counts", daemon=True)
                self._thread.start()
            self._wake.set()

    def _run(self) -> None:
        while not self._closed:
            self._wake.wait()
            self._wake.clear()
            while not self._closed and self.pending():
                try:
                    if self._write(wait_ms=TRY_MS):
                        break
                except apsw.Error as exc:  # a full or read-only disk: kept, tried again later
                    log.warning("access counts not written yet: %s", exc)
                time.sleep(RETRY)

    def flush(self, wait_ms: int | None = None) -> bool:
        """Write everything pending now, waiting up to `wait_ms` for the lock (default: as long as any
        write may, as at close). False when the lock did not come (the counts stay pending)."""
        if not self.pending():
            return True
        return self._write(wait_ms=self._busy_ms() if wait_ms is None else wait_ms)

    def close(self) -> None:
        """Flush, and stop the background writer (before the Store closes its connections)."""
        self._closed = True
        self._wake.set()
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=self._busy_ms() / 1000 + 1)
        try:
            self.flush()
        except apsw.Error as exc:
            log.warning("access counts could not be written at close: %s", exc)
        finally:
            self._closed = False  # a Store used again after close() counts again
