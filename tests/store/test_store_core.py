"""The Store's per-thread connections are closed once their thread has ended (issue 20, part 6: the TUI
runs every worker in a thread of its own, and each left a connection open until the app quit)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from store import Store


def _open_handles(path: Path) -> int:
    """File descriptors of this process open on chat.db itself."""
    n = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") == str(path):
                n += 1
        except OSError:
            continue
    return n


def test_connections_of_finished_threads_are_closed(tmp_path: Path) -> None:
    db = tmp_path / "chat.db"
    with Store(db, embedder=None) as store:
        store.add_memory("opened on the main thread", "fact")
        for i in range(20):  # like 20 TUI workers, one after the other
            t = threading.Thread(target=lambda i=i: store.add_memory(f"written by worker {i}", "fact"))
            t.start()
            t.join()
        last = threading.Thread(target=lambda: store.list_memories())
        last.start()
        last.join()
        store.list_memories()  # the main thread opens nothing new, so nothing is pruned here
        opened_late = threading.Thread(target=lambda: store.count_threads())
        opened_late.start()
        opened_late.join()
        # the main thread's, and the last worker's (pruned when the next thread connects): not 22
        assert _open_handles(db) <= 3
        assert len(store.list_memories(limit=100)) == 21
