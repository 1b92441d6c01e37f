"""What an assistant is sent: current memories only, with detected secrets replaced. One rule, in one
place (issues 27 and 33).

A superseded memory (`valid_until` set: a newer one replaced it) stays in chat.db, searchable by the user
and by `--as-of`, but it is not who the user is now: the profile, MCP `get_profile`, `get_context` and
`memapp context`, MCP `search_memory` and `export --format prompt` all take their memories through this
module, and each of them has a test that a superseded memory never comes out of it
(tests/store/test_sent_to_assistant.py).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from store.records import Memory, json_dumps
from store.secrets import redact_text

if TYPE_CHECKING:
    from store.store import Store

# The condition, for queries that select memories for an assistant.
CURRENT = "deleted_at IS NULL AND valid_until IS NULL"
PAGE = 500


def current_memories(store: Store, *, order: str = "standing") -> Iterator[Memory]:
    """Every current memory (out of the trash, not superseded), in `order` (store.list_memories'), its
    content with any detected secret replaced: whatever chat.db stores (`[privacy] redact = "off"`),
    nothing sent to an assistant holds one."""
    offset = 0
    while True:
        page = store.list_memories(order=order, state="current", limit=PAGE, offset=offset)
        yield from (replace(m, content=redact_text(m.content)) for m in page)
        if len(page) < PAGE:
            return
        offset += PAGE


def only_current(store: Store, memory_ids: Sequence[int]) -> list[int]:
    """`memory_ids` less those in the trash or superseded, in the same order."""
    if not memory_ids:
        return []
    keep = {
        int(r[0])
        for r in store.con.execute(
            f"SELECT id FROM long_term_memories WHERE {CURRENT} AND id IN (SELECT value FROM json_each(?))",
            (json_dumps(list(memory_ids)),),
        )
    }
    return [i for i in memory_ids if i in keep]
