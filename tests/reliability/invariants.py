"""What must hold in chat.db at any moment, even right after a SIGKILL: the reliability tests' invariants.

Why apart from the processes that break things (processes.py): every crash, concurrency, fuzz and
cleanup test ends by asking the same questions of the database it left behind, whatever did the damage:
the integrity check, the derived indexes in step with the canonical rows, thread counts and message
sequences whole, and memory_history replaying to exactly the memory rows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from store import Store


def checked_store(db: Path) -> Store:
    """Open chat.db after a kill (this recovers the WAL) and assert the invariants that always hold."""
    store = Store(db, embedder=None)
    problems = database_problems(store) + history_problems(store)
    if problems:
        store.close()
        raise AssertionError("\n".join(problems[:20]))
    return store


def database_problems(store: Store) -> list[str]:
    """Everything that must hold in chat.db at any moment, even right after a SIGKILL."""
    problems = []
    integrity = store.integrity_check()
    if integrity != "ok":
        problems.append(f"integrity_check: {integrity}")
    problems += store.check_indexes()
    bad = store.con.execute(
        "SELECT t.id, t.message_count, count(m.id), t.token_count, coalesce(sum(m.token_count), 0) "
        "FROM threads t LEFT JOIN messages m ON m.thread_id = t.id GROUP BY t.id "
        "HAVING t.message_count != count(m.id) OR t.token_count != coalesce(sum(m.token_count), 0)"
    ).fetchall()
    problems += [
        f"thread {r[0]}: message_count {r[1]} but {r[2]} messages; token_count {r[3]} vs {r[4]}" for r in bad
    ]
    gaps = store.con.execute(
        "SELECT thread_id FROM messages GROUP BY thread_id HAVING max(seq) - min(seq) + 1 != count(*) "
        "OR min(seq) != 0"
    ).fetchall()
    problems += [f"thread {r[0]}: message seqs are not 0..n-1" for r in gaps]
    for fts, table, key in (
        ("fts_messages", "messages", "id"),
        ("fts_memories", "long_term_memories", "id"),
        ("fts_summaries", "thread_summaries", "thread_id"),
    ):
        stray = store.con.execute(  # type: ignore[index]
            f"SELECT count(*) FROM {fts} WHERE rowid NOT IN (SELECT {key} FROM {table})"
        ).fetchone()[0]
        if stray:
            problems.append(f"{fts} has {stray} rows for no {table} row")
    if store.scalar("SELECT count(*) FROM sqlite_master WHERE name = 'vec_chunks'"):
        odd = store.con.execute(  # type: ignore[index]
            "SELECT (SELECT count(*) FROM vec_chunks WHERE chunk_id NOT IN (SELECT id FROM message_chunks)) + "
            "(SELECT count(*) FROM message_chunks WHERE id NOT IN (SELECT chunk_id FROM vec_chunks))"
        ).fetchone()[0]
        if odd:
            problems.append(f"{odd} chunk rows and chunk vectors do not pair up")
    unchunked = store.con.execute(  # type: ignore[index]
        "SELECT count(*) FROM message_chunks c LEFT JOIN messages m ON m.id = c.message_id WHERE m.id IS NULL"
    ).fetchone()[0]
    if unchunked:
        problems.append(f"{unchunked} message chunks point at no message")
    return problems


def thread_contents(store: Store, source: str) -> dict[str, list[str]]:
    """external_id -> message texts in order, for every thread of `source`."""
    out: dict[str, list[str]] = {}
    rows = store.con.execute(
        "SELECT t.external_id, m.content FROM threads t JOIN messages m ON m.thread_id = t.id "
        "WHERE t.source = ? ORDER BY t.id, m.seq",
        (source,),
    )
    for ext, content in rows:
        out.setdefault(ext, []).append(content)
    empty = store.con.execute(
        "SELECT external_id FROM threads t WHERE source = ? AND NOT EXISTS "
        "(SELECT 1 FROM messages m WHERE m.thread_id = t.id)",
        (source,),
    )
    for (ext,) in empty:
        out[ext] = []
    return out


# -- memory history -----------------------------------------------------------------------------------

TRACKED = ("content", "category", "importance", "pinned", "deleted")


def memory_state(store: Store, memory_id: int) -> dict[str, Any] | None:
    row = store.con.execute(
        "SELECT content, category, importance, pinned, deleted_at IS NOT NULL "
        "FROM long_term_memories WHERE id = ?",
        (memory_id,),
    ).fetchone()
    return (
        None
        if row is None
        else dict(zip(TRACKED, (row[0], row[1], row[2], bool(row[3]), bool(row[4])), strict=True))
    )


def apply_edit(state: dict[str, Any], op: str, value: Any) -> dict[str, Any]:
    """A memory_state after one step of cli_runner's edit loop."""
    changed = dict(state)
    if op in ("edit", "importance", "pin"):
        changed[{"edit": "content", "importance": "importance", "pin": "pinned"}[op]] = value
    elif op in ("rm", "restore"):
        changed["deleted"] = op == "rm"
    return changed


def history_problems(store: Store) -> list[str]:
    """Replay memory_history for every memory: each event's old values must be the state before it, and
    the replayed state must be the row as it is (or gone, after a purge). So every change is recorded
    with its old and new values, and nothing changed a memory without a history row."""
    problems: list[str] = []
    ids = {
        int(r[0])
        for r in store.con.execute(
            "SELECT id FROM long_term_memories UNION SELECT memory_id FROM memory_history"
        )
    }
    for mid in sorted(ids):
        state: dict[str, Any] | None = None
        for ev in store.memory_history(mid):
            old, new = ev.old or {}, ev.new or {}
            if ev.event == "add":
                if state is not None:
                    problems.append(f"memory {mid}: 'add' event for an id already in use")
                state = {
                    "content": new.get("content"),
                    "category": new.get("category"),
                    "importance": new.get("importance"),
                    "pinned": bool(new.get("pinned")),
                    "deleted": False,
                }
                continue
            if state is None:
                problems.append(f"memory {mid}: {ev.event} event before it was added")
                break
            if ev.event == "purge":
                if not state["deleted"] or state["pinned"]:
                    problems.append(f"memory {mid}: purged while {'pinned' if state['pinned'] else 'active'}")
                state = None
                continue
            for key, value in old.items():
                field_ = "deleted" if key == "deleted_at" else key
                before = value is not None if key == "deleted_at" else value
                if field_ in state and state[field_] != before:
                    problems.append(
                        f"memory {mid}: {ev.event} says old {key}={value!r}, but it was {state[field_]!r}"
                    )
            for key, value in new.items():
                if key == "deleted_at":
                    state["deleted"] = value is not None
                elif key in state:
                    state[key] = bool(value) if key == "pinned" else value
        actual = memory_state(store, mid)
        if actual != state:
            problems.append(f"memory {mid}: history replays to {state}, but the row is {actual}")
    return problems
