"""Everything about chat.db: connection, migrations, schema, and the Store class with the queries.

from store import Store, load_config
with Store("chat.db") as s:
    s.add_memory("I prefer tabs", "preference")

Why the names are imported on first use (PEP 562 `__getattr__`): `Store` pulls in numpy, the vector
code and the embedder (a few hundred milliseconds), while `store.db`, `store.records` or `store.errors`
alone cost little. The TUI checks chat.db and paints its first frame with only those, and imports the
rest in a worker; `from store import Store` still works everywhere, as before.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from store.lazy import exports

if TYPE_CHECKING:
    from store.config import Config, load_config
    from store.errors import (
        DuplicateMemoryError,
        EncryptionKeyError,
        InvalidInputError,
        NotADatabaseError,
        NotFoundError,
        PinnedMemoryError,
        SchemaTooNewError,
        StoreError,
    )
    from store.locations import config_path, default_db_path
    from store.memories import AddResult
    from store.records import (
        CATEGORIES,
        ROLES,
        HistoryEvent,
        Memory,
        MemoryIn,
        Message,
        MessageIn,
        Summary,
        Thread,
        ThreadIn,
        iso,
    )
    from store.store import Store
    from store.threads import SORTS

_WHERE = {
    "Config": "store.config",
    "load_config": "store.config",
    "DuplicateMemoryError": "store.errors",
    "EncryptionKeyError": "store.errors",
    "InvalidInputError": "store.errors",
    "NotADatabaseError": "store.errors",
    "NotFoundError": "store.errors",
    "PinnedMemoryError": "store.errors",
    "SchemaTooNewError": "store.errors",
    "StoreError": "store.errors",
    "config_path": "store.locations",
    "default_db_path": "store.locations",
    "AddResult": "store.memories",
    "CATEGORIES": "store.records",
    "ROLES": "store.records",
    "Memory": "store.records",
    "MemoryIn": "store.records",
    "Message": "store.records",
    "MessageIn": "store.records",
    "Thread": "store.records",
    "ThreadIn": "store.records",
    "HistoryEvent": "store.records",
    "Summary": "store.records",
    "iso": "store.records",
    "Store": "store.store",
    "SORTS": "store.threads",
}

__all__ = [
    "AddResult",
    "CATEGORIES",
    "Config",
    "DuplicateMemoryError",
    "EncryptionKeyError",
    "HistoryEvent",
    "InvalidInputError",
    "Memory",
    "MemoryIn",
    "Message",
    "MessageIn",
    "NotADatabaseError",
    "NotFoundError",
    "PinnedMemoryError",
    "ROLES",
    "SORTS",
    "SchemaTooNewError",
    "Store",
    "StoreError",
    "Summary",
    "Thread",
    "ThreadIn",
    "config_path",
    "default_db_path",
    "iso",
    "load_config",
]


__getattr__, __dir__ = exports(__name__, _WHERE, globals())
