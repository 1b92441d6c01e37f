"""Store support the MCP tools need: the "conversations" search scope (messages and summaries as one, so k
results come back when k exist) and threads filtered by when they were active."""

from __future__ import annotations

import pytest

from store import InvalidInputError, Store, ThreadIn
from store.extract.summaries import summarize_thread
from store.records import MessageIn
from store.search.engine import Filters

DAY = 86400.0
T0 = 1_700_000_000.0


def _thread(store: Store, key: str, title: str, start: float, n: int) -> int:
    msgs = [
        MessageIn("user", f"{title}: the restic backup timer, part {i}", f"{key}{i}", start + i * 60)
        for i in range(n)
    ]
    return store.write_thread(ThreadIn("generic", key, title, msgs, created_at=start)).thread_id


def test_conversations_scope_returns_k_messages_and_summaries(store: Store) -> None:
    a = _thread(store, "a", "Backups", T0, 6)
    _thread(store, "b", "More backups", T0 + DAY, 6)
    for i in range(10):
        store.add_memory(f"restic backup timer memory {i}", "fact", force=True)  # would crowd out messages
    summarize_thread(store, a, force=True)
    for k in (1, 5, 13):
        resp = store.search("restic backup timer", scope="conversations", k=k)
        assert len(resp.results) == k
        assert {r.kind for r in resp.results} <= {"message", "summary"}
    kinds = {r.kind for r in store.search("restic backup timer", scope="conversations", k=13).results}
    assert kinds == {"message", "summary"}
    only_a = store.search("restic", scope="conversations", k=50, filters=Filters(thread_id=a))
    assert only_a.results and {r.thread_id for r in only_a.results} == {a}
    with pytest.raises(InvalidInputError, match="can match these filters"):
        store.search("x", scope="conversations", filters=Filters(category="fact"))


def test_threads_active_in_a_span(store: Store) -> None:
    old = _thread(store, "old", "Old", T0, 3)  # active T0 .. T0+2min
    long = _thread(store, "long", "Long", T0 + DAY, 2)
    store.write_thread(  # the long thread is continued ten days later
        ThreadIn(
            "generic",
            "long",
            "Long",
            [MessageIn("user", "later", "late", T0 + 10 * DAY)],
            created_at=T0 + DAY,
        )
    )
    new = _thread(store, "new", "New", T0 + 20 * DAY, 2)

    def ids(**kw: float) -> set[int]:
        return {t.id for t in store.list_threads(**kw)}  # type: ignore[arg-type]

    assert ids(since=T0 + 5 * DAY) == {long, new}
    assert ids(until=T0 + 5 * DAY) == {old, long}
    assert ids(since=T0 + 5 * DAY, until=T0 + 15 * DAY) == {long}
    with pytest.raises(InvalidInputError, match="since must be before until"):
        store.list_threads(since=T0 + DAY, until=T0)
