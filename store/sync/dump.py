"""A canonical dump of chat.db's synced rows: what two devices that have synced must agree on.

Rows are keyed by uid and local integer ids are replaced by uids, so two devices' dumps compare equal
exactly when they hold the same data (tests/store/sync compare them; `memapp sync status --json` could
print a digest of it to check two machines by hand).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import apsw

QUERIES = {
    "threads": "SELECT uid, source, external_id, title, created_at, updated_at, metadata, archived_at, "
    "message_count, token_count FROM threads ORDER BY uid",
    "messages": "SELECT m.uid, t.uid, m.seq, m.role, m.content, m.token_count, m.external_id, m.created_at, "
    "m.metadata FROM messages m JOIN threads t ON t.id = m.thread_id ORDER BY m.uid",
    "memories": "SELECT m.uid, m.category, m.content, m.importance, m.access_count, m.last_accessed, m.pinned, "
    "m.user_edited, m.origin, st.uid, m.content_hash, m.token_count, m.created_at, m.updated_at, m.deleted_at, "
    "m.valid_from, m.valid_until, sb.uid, sm.uid, m.source_note FROM long_term_memories m "
    "LEFT JOIN threads st ON st.id = m.source_thread_id LEFT JOIN long_term_memories sb ON sb.id = m.superseded_by "
    "LEFT JOIN messages sm ON sm.id = m.source_message_id ORDER BY m.uid",
    "history": "SELECT uid, memory_uid, event, old, new, at FROM memory_history ORDER BY uid",
    "conflicts": "SELECT c.uid, n.uid, o.uid, c.relation, c.similarity, c.reasons, c.kind, c.status, c.resolution, "
    "c.created_at, c.resolved_at FROM memory_conflicts c JOIN long_term_memories n ON n.id = c.new_id "
    "JOIN long_term_memories o ON o.id = c.old_id ORDER BY c.uid",
}


def canonical_dump(con: apsw.Connection) -> dict[str, list[tuple[Any, ...]]]:
    return {name: [tuple(r) for r in con.execute(sql)] for name, sql in QUERIES.items()}


def digest(con: apsw.Connection) -> str:
    """A short fingerprint of the dump: equal on two devices that hold the same rows."""
    text = json.dumps(canonical_dump(con), sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
