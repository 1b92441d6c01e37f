"""Managing threads after import: rename, archive (hidden from lists and search, kept whole), delete,
find in a thread, the settings table and data_version (how the TUI notices other processes' writes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from embeddings import FakeEmbedder
from store import Store, ThreadIn
from store.errors import InvalidInputError, NotFoundError
from store.records import MessageIn
from store.search.engine import Filters


def _thread(store: Store, ext: str, title: str, texts: list[str]) -> int:
    t = ThreadIn(
        source="generic",
        external_id=ext,
        title=title,
        messages=[
            MessageIn(role="user" if i % 2 == 0 else "assistant", content=c, external_id=f"{ext}-{i}")
            for i, c in enumerate(texts)
        ],
    )
    return store.write_thread(t).thread_id


def test_archive_hides_a_thread_from_lists_counts_and_search_until_unarchived(store: Store) -> None:
    private = _thread(store, "p", "Private medical chat", ["my zanzibar allergy results", "noted"])
    public = _thread(store, "q", "Trip planning", ["zanzibar flights in May", "ok"])
    assert {r.thread_id for r in store.search("zanzibar", scope="messages", k=10).results} == {
        private,
        public,
    }

    archived = store.archive_thread(private)
    assert archived.archived_at is not None
    assert [t.id for t in store.list_threads()] == [public]
    assert store.count_threads() == 1 and store.count_threads(archived=True) == 1
    assert [t.id for t in store.list_threads(archived=True)] == [private]
    assert {t.id for t in store.list_threads(archived=None)} == {private, public}
    hits = store.search("zanzibar", scope="all", k=10, keyword_only=True).results
    assert {r.thread_id for r in hits} == {public}
    shown = store.search("zanzibar", scope="messages", k=10, filters=Filters(include_archived=True)).results
    assert {r.thread_id for r in shown} == {private, public}
    # Kept whole: messages are still there, and unarchiving brings it back everywhere.
    assert len(store.get_messages(private)) == 2
    assert store.archive_thread(private, False).archived_at is None
    assert store.count_threads() == 2
    assert {r.thread_id for r in store.search("zanzibar", scope="messages", k=10).results} == {
        private,
        public,
    }


def test_a_reimport_keeps_the_archive_flag(store: Store) -> None:
    tid = _thread(store, "a", "Old", ["hello there"])
    store.archive_thread(tid)
    _thread(store, "a", "Old", ["hello there", "a new message"])
    assert store.get_thread(tid).archived_at is not None and store.get_thread(tid).message_count == 2


def test_rename_and_delete(store: Store) -> None:
    tid = _thread(store, "r", "untitled", ["rename me please", "sure"])
    assert store.rename_thread(tid, "  Renamed   thread ").title == "Renamed thread"
    with pytest.raises(InvalidInputError):
        store.rename_thread(tid, "   ")
    with pytest.raises(NotFoundError):
        store.rename_thread(999, "x")
    store.delete_thread(tid)
    with pytest.raises(NotFoundError):
        store.get_thread(tid)
    assert store.search("rename", k=5, keyword_only=True).results == []


def test_find_in_thread_gives_positions_in_order(store: Store) -> None:
    tid = _thread(store, "f", "Find", ["Alpha one", "beta", "ALPHA two", "gamma", "alphabet"])
    assert store.find_in_thread(tid, "alpha") == [0, 2, 4]
    assert store.find_in_thread(tid, "nothing here") == []
    assert store.find_in_thread(tid, "  ") == []


def test_settings_and_data_version_see_another_connection(db_path: Path) -> None:
    a = Store(db_path, embedder=FakeEmbedder())
    b = Store(db_path, embedder=FakeEmbedder())
    try:
        assert a.get_setting("tui.theme") is None
        before = a.data_version()
        assert a.data_version() == before  # nothing written: unchanged (cheap to poll)
        b.set_setting("tui.theme", "nord")
        assert a.data_version() != before
        assert a.get_setting("tui.theme") == "nord"
    finally:
        a.close()
        b.close()


def test_the_source_filter_keeps_messages_and_summaries_of_that_source(store: Store) -> None:
    mine = _thread(store, "c1", "From Claude", ["the zanzibar itinerary", "ok"])
    store.write_thread(
        ThreadIn(
            source="chatgpt",
            external_id="g1",
            title="From ChatGPT",
            messages=[MessageIn("user", "zanzibar again", "x1")],
        )
    )
    assert store.thread_sources() == ["chatgpt", "generic"]
    hits = store.search("zanzibar", k=10, filters=Filters(source="generic")).results
    assert hits and {r.thread_id for r in hits} == {mine}
    with pytest.raises(InvalidInputError):
        store.search("zanzibar", scope="memories", filters=Filters(source="generic"))
