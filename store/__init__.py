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
        InvalidInputError,
        NotADatabaseError,
        NotFoundError,
        SchemaTooNewError,
        StoreError,
    )
    from store.memories import AddResult
    from store.records import CATEGORIES, ROLES, Memory, MemoryIn, Message, MessageIn, Thread, ThreadIn
    from store.store import Store

_WHERE = {
    "Config": "store.config",
    "load_config": "store.config",
    "DuplicateMemoryError": "store.errors",
    "InvalidInputError": "store.errors",
    "NotADatabaseError": "store.errors",
    "NotFoundError": "store.errors",
    "SchemaTooNewError": "store.errors",
    "StoreError": "store.errors",
    "AddResult": "store.memories",
    "CATEGORIES": "store.records",
    "ROLES": "store.records",
    "Memory": "store.records",
    "MemoryIn": "store.records",
    "Message": "store.records",
    "MessageIn": "store.records",
    "Thread": "store.records",
    "ThreadIn": "store.records",
    "Store": "store.store",
}

__all__ = [
    "CATEGORIES",
    "ROLES",
    "AddResult",
    "Config",
    "DuplicateMemoryError",
    "InvalidInputError",
    "Memory",
    "MemoryIn",
    "Message",
    "MessageIn",
    "NotADatabaseError",
    "NotFoundError",
    "SchemaTooNewError",
    "Store",
    "StoreError",
    "Thread",
    "ThreadIn",
    "load_config",
]


__getattr__, __dir__ = exports(__name__, _WHERE, globals())
