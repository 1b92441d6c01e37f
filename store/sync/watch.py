"""`memapp sync --watch`: sync whenever this chat.db or the sync folder changed, until interrupted.

Polling, not file-system events: the folder may be a network share or a USB stick, where events are
unreliable, and a look costs a directory listing and one PRAGMA. A sync runs when another process
wrote to chat.db (SQLite's data_version), when a device's folder shows a new or grown file, and at
least every `every` seconds (a file that was incomplete at the last look may be whole now).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from store.sync import state
from store.sync.engine import Report, sync
from store.sync.files import Sealer

if TYPE_CHECKING:
    from store.store import Store


def folder_signature(folder: Path) -> tuple[tuple[str, int, int], ...]:
    """(device, its newest file's number, that file's size) for every device folder."""
    out = []
    try:
        devices = sorted(e.name for e in os.scandir(folder) if e.is_dir())
    except OSError:
        return ()
    for dev in devices:
        best, size = 0, 0
        try:
            for e in os.scandir(folder / dev):
                if e.name.endswith(".memsync") and e.name[:10].isdigit() and int(e.name[:10]) >= best:
                    best, size = int(e.name[:10]), e.stat().st_size
        except OSError:
            continue
        out.append((dev, best, size))
    return tuple(out)


def watch(
    store: Store,
    sealer: Sealer | None,
    *,
    interval: float = 2.0,
    every: float = 300.0,
    embed: bool = True,
    on_sync: Callable[[Report], None] | None = None,
    should_stop: Callable[[], bool] = lambda: False,
) -> int:
    """Sync now and whenever something changed; returns the number of syncs run when `should_stop`."""
    folder = Path(state.device(store.con).folder)
    seen: tuple[object, ...] | None = None
    last = 0.0
    runs = 0
    while not should_stop():
        now = (store.data_version(), folder_signature(folder))
        if now != seen or time.monotonic() - last >= every:
            report = sync(store, sealer, embed=embed)
            runs += 1
            last = time.monotonic()
            if on_sync is not None:
                on_sync(report)
            seen = (store.data_version(), folder_signature(folder))
        time.sleep(interval)
    return runs
