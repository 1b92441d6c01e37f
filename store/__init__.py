"""Everything about chat.db: connection, migrations, schema, and the Store class with the queries.

from store import Store, load_config
with Store("chat.db") as s:
    s.add_memory("I prefer tabs", "preference")
"""

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
