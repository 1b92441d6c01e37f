"""How many SQL statements the hot write paths run, counted with an apsw exec trace on the Store's
connection (the architecture review's measure): a fact read again and again (the vector layout, the
recorded model, an always-empty chunk lookup for a brand-new message) shows up here long before it shows
in a benchmark. The limits are the issue-13 targets, with the counts before it in the names."""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import apsw

from store.importing import load_demo
from store.records import MessageIn, ThreadIn
from store.store import Store


@contextmanager
def traced(con: apsw.Connection) -> Iterator[list[str]]:
    statements: list[str] = []

    def trace(_cursor: apsw.Cursor, sql: str, _bindings: Any) -> bool:
        statements.append(sql)
        return True

    con.exec_trace = trace
    try:
        yield statements
    finally:
        con.exec_trace = None


def count(store: Store, call: Callable[[], object]) -> Counter[str]:
    with traced(store.con) as statements:
        call()
    return Counter(statements)


def _thread(n: int, ext: str = "count-me") -> ThreadIn:
    return ThreadIn(
        source="generic",
        external_id=ext,
        title="Counting statements",
        messages=[
            MessageIn(
                role="user" if i % 2 == 0 else "assistant",
                content=f"message {i} about restic backups to the NAS, take {i}",
                external_id=f"m{i}",
                metadata={"model": "gpt-x", "n": i},
            )
            for i in range(n)
        ],
    )


def _metadata_reads(stmts: Counter[str]) -> int:
    return sum(n for sql, n in stmts.items() if "sqlite_master" in sql or "FROM settings" in sql)


def test_a_new_20_message_thread_takes_at_most_110_statements_was_175(store: Store) -> None:
    load_demo(store)
    stmts = count(store, lambda: store.write_thread(_thread(20)))
    found = store.find_thread("generic", "count-me")
    assert found is not None and found.message_count == 20
    assert store.check_indexes() == []
    assert sum(stmts.values()) <= 110, stmts.most_common(8)
    # The vector tables and model are read once inside the write (and before it, to decide whether to
    # embed), not per message; brand-new message ids have no chunks to look up.
    assert _metadata_reads(stmts) <= 2, stmts.most_common(8)
    assert not any("FROM message_chunks WHERE message_id IN" in sql for sql in stmts)


def test_re_writing_an_unchanged_thread_reads_it_once_and_writes_nothing(store: Store) -> None:
    store.write_thread(_thread(200))
    stmts = count(store, lambda: store.write_thread(_thread(200)))
    assert sum(stmts.values()) <= 2, stmts  # the thread and its message ids
    assert not any(sql.lstrip().upper().startswith(("INSERT", "UPDATE", "DELETE", "BEGIN")) for sql in stmts)


def test_adding_a_memory_takes_fewer_statements_than_25(store: Store) -> None:
    """22 before the truth check learned to read the cosine of a neighbour found by its words alone (one
    vector read for each such neighbour: two on the demo for this text)."""
    load_demo(store)
    stmts = count(store, lambda: store.add_memory("We back up the NAS with restic every night", "fact"))
    assert store.check_indexes() == []
    assert sum(stmts.values()) < 25, stmts.most_common(8)
    assert _metadata_reads(stmts) <= 2, stmts.most_common(8)


def test_facts_held_in_a_write_are_read_again_after_another_connection_reindexes(store: Store) -> None:
    """The held layout ends with its transaction: a reindex by another connection (another process) in
    between is seen by the next write, which recreates the tables instead of writing into dropped ones."""
    store.write_thread(_thread(3, "first"))
    other = Store(store.path, embedder=store.embedder)
    try:
        other.drop_vectors()
    finally:
        other.close()
    store.write_thread(_thread(3, "second"))
    assert store.check_indexes() == []
    assert store.vectors.tables_exist()
    second = store.find_thread("generic", "second")
    assert second is not None
    chunks = store.scalar(
        "SELECT count(*) FROM message_chunks c JOIN messages m ON m.id = c.message_id WHERE m.thread_id = ?",
        (second.id,),
    )
    assert chunks == 3  # one short message, one chunk


def test_a_savepoint_rolled_back_inside_a_write_leaves_no_stale_layout(store: Store) -> None:
    """A nested `with con:` is a savepoint, and rolling one back fires no hook: the facts it changed
    must not outlive it (the outer transaction goes on writing vectors into the tables that exist)."""
    store.write_thread(_thread(3, "first"))
    with store.con:
        assert store.vectors.tables_exist()
        with contextlib.suppress(RuntimeError), store.con:
            store.vectors.drop_tables()
            assert not store.vectors.tables_exist()
            raise RuntimeError("undo the drop")
        assert store.vectors.tables_exist()
        store.write_thread(_thread(3, "second"))
    assert store.check_indexes() == []
    assert store.scalar("SELECT count(*) FROM vec_chunks") == 6
