"""Managing threads after import: rename, archive (hidden from lists and search, kept whole), delete,
find in a thread, the settings table and data_version (how the TUI notices other processes' writes)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from embeddings import FakeEmbedder
from store import Store, ThreadIn
from store.errors import InvalidInputError, NotFoundError
from store.importing.pipeline import import_paths
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


def test_a_reimport_keeps_a_rename_unless_the_export_renamed_it(store: Store, tmp_path: Path) -> None:
    """31.6: re-importing an unchanged export undid `threads rename` (README promises the opposite).
    The title the export gave is kept beside the title shown (migration 8): an unchanged export keeps
    the person's title, and writes nothing; a newer export whose own title changed brings that one."""
    path = tmp_path / "t.json"

    def export(title: str, n: int = 2) -> Path:
        msgs = [{"id": f"m{i}", "role": "user", "content": f"message {i}"} for i in range(n)]
        path.write_text(json.dumps([{"id": "x", "title": title, "messages": msgs}]), encoding="utf-8")
        return path

    import_paths(store, [export("Exported title")], embed=False)
    [t] = store.list_threads()
    store.rename_thread(t.id, "My title")
    changes = store.con.total_changes()
    again = import_paths(store, [export("Exported title")], embed=False)
    assert (again.threads_updated, again.threads_unchanged) == (0, 1)
    assert store.get_thread(t.id).title == "My title" and store.con.total_changes() == changes
    grown = import_paths(store, [export("Exported title", 3)], embed=False)  # a newer export, same title
    assert grown.messages_added == 1 and store.get_thread(t.id).title == "My title"
    import_paths(store, [export("Renamed in ChatGPT", 3)], embed=False)
    assert store.get_thread(t.id).title == "Renamed in ChatGPT"
    store.rename_thread(t.id, "Mine again")
    import_paths(store, [export("Renamed in ChatGPT", 3)], embed=False)
    assert store.get_thread(t.id).title == "Mine again"


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
