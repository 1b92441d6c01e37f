"""Sync between devices through a folder (issue 29); see docs/design/sync.md."""

from __future__ import annotations

from typing import TYPE_CHECKING

from store.lazy import exports

if TYPE_CHECKING:
    from store.sync.crypto import sealer_for
    from store.sync.engine import Report, init, sync
    from store.sync.files import Sealer
    from store.sync.status import Peer, Status, brief
    from store.sync.status import status as sync_status
    from store.sync.watch import watch as watch_folder

_WHERE = {
    "sealer_for": "store.sync.crypto",
    "Report": "store.sync.engine",
    "init": "store.sync.engine",
    "sync": "store.sync.engine",
    "Sealer": "store.sync.files",
    "Peer": "store.sync.status",
    "Status": "store.sync.status",
    "brief": "store.sync.status",
    "sync_status": "store.sync.status:status",
    "watch_folder": "store.sync.watch:watch",
}

# `status` and `watch` are also this package's module names, so the face names them sync_status and
# watch_folder (store/lazy.py says why).
__all__ = [
    "Peer",
    "Report",
    "Sealer",
    "Status",
    "brief",
    "init",
    "sealer_for",
    "sync",
    "sync_status",
    "watch_folder",
]

__getattr__, __dir__ = exports(__name__, _WHERE, globals())
