"""What syncs: the mirror tables (`sync_*`), keyed by global id, and how each canonical table maps onto one.

A mirror row is the synced state of one canonical row: the same values with local integer ids replaced
by uids (a memory's source thread is the thread's uid), and, for rows that can be edited, a `stamps`
column: a JSON object giving each editable column the Lamport stamp of the edit that set it (see
store.sync.state). Every column is one of:

- fixed: set when the row is made and never edited (a message's text, a history row, a thread's source);
  two devices that made the same row (one export imported on both) keep the smaller value, so both agree;
- lww: a register; of two edits made without knowing each other, the one with the higher stamp wins
  everywhere, and a memory's text, category and importance never lose in silence (store.sync.merge);
- max: only grows (a thread's last activity, a memory's updated_at, `user_edited`): the larger value.

Pins and access counts are not columns here: a pin is a row of `sync_pins` (a set in which an unpin
removes only the pins it has seen, so a pin made elsewhere meanwhile survives: a pin on either side
wins), and access counts are one row per memory and device in `sync_access` (each device adds to its own
row; the count is their sum, so increments add up and never overwrite each other).

Messages are immutable once written, so their mirror (`sync_messages`) keeps only uid, thread and
position: their text travels in `sync_wire_messages`, an always-empty table that only gives the
changeset rows their shape, and is read back from the canonical row (this halves what the mirror costs
on disk for an archive, which is mostly messages).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Spec:
    """A mirror table: its columns after `uid` (and before `stamps`, when it has one)."""

    name: str
    canonical: str
    columns: tuple[str, ...]
    lww: frozenset[str] = frozenset()
    maxed: frozenset[str] = frozenset()
    projection: str = ""  # SELECT uid, <columns> FROM the canonical rows (local ids turned into uids)

    @property
    def stamped(self) -> bool:
        return bool(self.lww)

    @property
    def all_columns(self) -> tuple[str, ...]:
        """Every column of the mirror table, in order."""
        return ("uid", *self.columns, *(("stamps",) if self.stamped else ()))

    def index(self, column: str) -> int:
        return self.all_columns.index(column)


THREADS = Spec(
    "sync_threads",
    "threads",
    ("source", "external_id", "title", "created_at", "updated_at", "metadata", "archived_at"),
    lww=frozenset({"title", "archived_at"}),
    maxed=frozenset({"updated_at"}),
    projection=(
        "SELECT t.uid AS uid, t.source AS source, t.external_id AS external_id, t.title AS title, "
        "t.created_at AS created_at, t.updated_at AS updated_at, t.metadata AS metadata, "
        "t.archived_at AS archived_at FROM threads t WHERE t.uid IS NOT NULL"
    ),
)

MEMORIES = Spec(
    "sync_memories",
    "long_term_memories",
    (
        "category",
        "content",
        "importance",
        "origin",
        "user_edited",
        "source_thread_uid",
        "source_message_uid",
        "source_note",
        "created_at",
        "updated_at",
        "deleted_at",
        "valid_from",
        "valid_until",
        "superseded_by_uid",
    ),
    lww=frozenset(
        {
            "category",
            "content",
            "importance",
            "source_thread_uid",
            "source_message_uid",
            "source_note",
            "deleted_at",
            "valid_from",
            "valid_until",
            "superseded_by_uid",
        }
    ),
    maxed=frozenset({"updated_at", "user_edited"}),
    projection=(
        "SELECT m.uid AS uid, m.category AS category, m.content AS content, m.importance AS importance, "
        "m.origin AS origin, m.user_edited AS user_edited, st.uid AS source_thread_uid, "
        "sm.uid AS source_message_uid, m.source_note AS source_note, m.created_at AS created_at, "
        "m.updated_at AS updated_at, m.deleted_at AS deleted_at, m.valid_from AS valid_from, "
        "m.valid_until AS valid_until, sb.uid AS superseded_by_uid FROM long_term_memories m "
        "LEFT JOIN threads st ON st.id = m.source_thread_id "
        "LEFT JOIN messages sm ON sm.id = m.source_message_id "
        "LEFT JOIN long_term_memories sb ON sb.id = m.superseded_by WHERE m.uid IS NOT NULL"
    ),
)

HISTORY = Spec(
    "sync_history",
    "memory_history",
    ("memory_uid", "event", "old", "new", "at"),
    projection=(
        "SELECT h.uid AS uid, h.memory_uid AS memory_uid, h.event AS event, h.old AS old, h.new AS new, "
        "h.at AS at FROM memory_history h WHERE h.uid IS NOT NULL"
    ),
)

CONFLICTS = Spec(
    "sync_conflicts",
    "memory_conflicts",
    (
        "new_uid",
        "old_uid",
        "relation",
        "similarity",
        "reasons",
        "kind",
        "status",
        "resolution",
        "created_at",
        "resolved_at",
    ),
    lww=frozenset({"status", "resolution", "resolved_at"}),
    projection=(
        "SELECT c.uid AS uid, n.uid AS new_uid, o.uid AS old_uid, c.relation AS relation, "
        "c.similarity AS similarity, c.reasons AS reasons, c.kind AS kind, c.status AS status, "
        "c.resolution AS resolution, c.created_at AS created_at, c.resolved_at AS resolved_at "
        "FROM memory_conflicts c JOIN long_term_memories n ON n.id = c.new_id "
        "JOIN long_term_memories o ON o.id = c.old_id WHERE c.uid IS NOT NULL"
    ),
)

# Parents before children: the order changes are captured, applied and written back in.
ROW_SPECS: tuple[Spec, ...] = (THREADS, MEMORIES, HISTORY, CONFLICTS)
BY_NAME = {s.name: s for s in ROW_SPECS}

MESSAGES = "sync_messages"
WIRE = "sync_wire_messages"
WIRE_COLUMNS = ("uid", "thread_uid", "pos", "role", "content", "external_id", "created_at", "metadata")
PINS = "sync_pins"
ACCESS = "sync_access"
# Tables the Session records (the wire table's rows are built by hand; sync_messages is local bookkeeping).
RECORDED = (*(s.name for s in ROW_SPECS), PINS, ACCESS)
