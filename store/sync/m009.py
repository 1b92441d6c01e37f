"""Migration 9 (issue 29, sync), kept here as it was released: global ids and the sync bookkeeping.

Why a module of its own: the migration carries its SQL as it is (it never calls live sync code), and the
text is long enough to crowd store/migrations.py, which every engineer edits.

Global ids (`uid`) are filled by AFTER INSERT triggers, so every write path, in any process (TUI, MCP
server, hooks, CLI, a restore), gets one without being edited. They are deterministic where the same
row can be made on two machines independently, so it becomes one row when they sync:

- an imported thread: 'x:' || source || '/' || external_id (the export's own conversation id);
- a message: its thread's uid || '#e:' || external_id (or '#s:' || seq when the export gave none);
- a memory that did not come from the keyboard (import, suggestion): 'h:' || category || ':' ||
  content_hash;
- everything else (a manual thread or memory, history rows, conflicts): 'u:' || 32 random hex digits.

A deterministic uid already taken (a forced duplicate memory, a thread synced in under the same name)
falls back to a random one, so no insert ever fails on the unique index. The `sync_*` tables are the
synced state (store.sync.tables says what each holds); they stay empty until `memapp sync init`.
"""

from __future__ import annotations

import apsw

RANDOM = "'u:' || lower(hex(randomblob(16)))"
THREAD_KEY = "'x:' || {t}.source || '/' || {t}.external_id"
MESSAGE_KEY = (
    "(SELECT t.uid FROM threads t WHERE t.id = {m}.thread_id) || '#' || "
    "coalesce('e:' || {m}.external_id, 's:' || {m}.seq)"
)
MEMORY_KEY = "'h:' || {m}.category || ':' || {m}.content_hash"

COLUMNS = """
ALTER TABLE threads ADD COLUMN uid TEXT;
ALTER TABLE messages ADD COLUMN uid TEXT;
ALTER TABLE long_term_memories ADD COLUMN uid TEXT;
ALTER TABLE memory_history ADD COLUMN uid TEXT;
ALTER TABLE memory_history ADD COLUMN memory_uid TEXT;
ALTER TABLE memory_conflicts ADD COLUMN uid TEXT;
ALTER TABLE memory_conflicts ADD COLUMN kind TEXT NOT NULL DEFAULT 'classifier';
"""

# Existing rows: the first row of a deterministic key gets it, any later one a random uid.
BACKFILL = f"""
UPDATE threads SET uid = CASE WHEN external_id IS NOT NULL THEN {THREAD_KEY.format(t="threads")}
    ELSE {RANDOM} END;
UPDATE messages SET uid = {MESSAGE_KEY.format(m="messages")};
UPDATE long_term_memories SET uid = CASE WHEN origin != 'manual' AND id = (SELECT min(d.id)
    FROM long_term_memories d WHERE d.category = long_term_memories.category
    AND d.content_hash = long_term_memories.content_hash AND d.origin != 'manual')
    THEN {MEMORY_KEY.format(m="long_term_memories")} ELSE {RANDOM} END;
UPDATE memory_history SET uid = {RANDOM},
    memory_uid = (SELECT m.uid FROM long_term_memories m WHERE m.id = memory_history.memory_id);
UPDATE memory_history SET memory_uid = {RANDOM} WHERE memory_uid IS NULL;
UPDATE memory_conflicts SET uid = {RANDOM};
"""

INDEXES = """
CREATE UNIQUE INDEX threads_uid ON threads(uid);
CREATE UNIQUE INDEX messages_uid ON messages(uid);
CREATE UNIQUE INDEX memories_uid ON long_term_memories(uid);
CREATE UNIQUE INDEX memory_history_uid ON memory_history(uid);
CREATE UNIQUE INDEX memory_conflicts_uid ON memory_conflicts(uid);
"""


def _fill(table: str, key: str | None, when: str = "NEW.uid IS NULL", extra: str = "") -> str:
    new_key = key.format(t="NEW", m="NEW") if key else None
    value = (
        f"CASE WHEN {new_key} IS NOT NULL AND NOT EXISTS (SELECT 1 FROM {table} WHERE uid = {new_key}) "
        f"THEN {new_key} ELSE {RANDOM} END"
        if new_key
        else RANDOM
    )
    return (
        f"CREATE TRIGGER {table}_uid AFTER INSERT ON {table} WHEN {when} BEGIN "
        f"UPDATE {table} SET uid = coalesce(NEW.uid, {value}){extra} WHERE rowid = NEW.rowid; END;"
    )


TRIGGERS = [
    _fill("threads", THREAD_KEY),
    _fill("messages", MESSAGE_KEY),
    # A memory typed by hand is new by definition: two people typing the same words are two memories.
    _fill(
        "long_term_memories",
        f"CASE WHEN NEW.origin != 'manual' THEN {MEMORY_KEY.format(m='NEW')} END",
    ),
    _fill(
        "memory_history",
        None,
        "NEW.uid IS NULL OR NEW.memory_uid IS NULL",
        ", memory_uid = coalesce(NEW.memory_uid, "
        "(SELECT m.uid FROM long_term_memories m WHERE m.id = NEW.memory_id))",
    ),
    _fill("memory_conflicts", None),
]

SYNC_TABLES = """
CREATE TABLE sync_state(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE sync_applied(
    device TEXT PRIMARY KEY,
    seq INTEGER NOT NULL,
    at REAL NOT NULL
);
CREATE TABLE sync_pending(
    id INTEGER PRIMARY KEY,
    changeset BLOB NOT NULL,
    clock INTEGER NOT NULL,
    at REAL NOT NULL
);
CREATE TABLE sync_threads(
    uid TEXT PRIMARY KEY, source TEXT, external_id TEXT, title TEXT, created_at REAL, updated_at REAL,
    metadata TEXT, archived_at REAL, stamps TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE sync_messages(
    uid TEXT PRIMARY KEY, thread_uid TEXT NOT NULL, pos INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX sync_messages_thread ON sync_messages(thread_uid, pos);
CREATE TABLE sync_wire_messages(
    uid TEXT PRIMARY KEY, thread_uid TEXT, pos INTEGER, role TEXT, content TEXT, external_id TEXT,
    created_at REAL, metadata TEXT
) WITHOUT ROWID;
CREATE TABLE sync_memories(
    uid TEXT PRIMARY KEY, category TEXT, content TEXT, importance INTEGER, origin TEXT,
    user_edited INTEGER, source_thread_uid TEXT, source_message_uid TEXT, source_note TEXT,
    created_at REAL, updated_at REAL, deleted_at REAL, valid_from REAL, valid_until REAL,
    superseded_by_uid TEXT, stamps TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE sync_history(
    uid TEXT PRIMARY KEY, memory_uid TEXT, event TEXT, old TEXT, new TEXT, at REAL
) WITHOUT ROWID;
CREATE TABLE sync_conflicts(
    uid TEXT PRIMARY KEY, new_uid TEXT, old_uid TEXT, relation TEXT, similarity REAL, reasons TEXT,
    kind TEXT, status TEXT, resolution TEXT, created_at REAL, resolved_at REAL, stamps TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE sync_pins(
    memory_uid TEXT NOT NULL, token TEXT NOT NULL, PRIMARY KEY(memory_uid, token)
) WITHOUT ROWID;
CREATE TABLE sync_access(
    memory_uid TEXT NOT NULL, device TEXT NOT NULL, count INTEGER NOT NULL, last_accessed REAL,
    PRIMARY KEY(memory_uid, device)
) WITHOUT ROWID;
"""


def migrate(con: apsw.Connection) -> None:
    con.execute(COLUMNS)
    con.execute(BACKFILL)
    con.execute(INDEXES)
    for trigger in TRIGGERS:
        con.execute(trigger)
    con.execute(SYNC_TABLES)
