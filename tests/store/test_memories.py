"""Memories on a real apsw + sqlite-vec file: every operation keeps FTS and vectors in step and writes history."""

from __future__ import annotations

import pytest

from store import DuplicateMemoryError, InvalidInputError, NotFoundError, Store
from store.text import fts_query


def fts_ids(store: Store, text: str) -> set[int]:
    q = fts_query(text)
    assert q is not None
    return {
        r[0] for r in store.con.execute("SELECT rowid FROM fts_memories WHERE fts_memories MATCH ?", (q,))
    }


def vec_row(store: Store, memory_id: int) -> tuple[str, int] | None:
    row = store.con.execute(
        "SELECT category, deleted FROM vec_memories WHERE memory_id = ?", (memory_id,)
    ).fetchone()
    return None if row is None else (row[0], row[1])


def events(store: Store, memory_id: int) -> list[str]:
    return [h.event for h in store.memory_history(memory_id)]


def in_step(store: Store) -> None:
    assert store.check_indexes() == []


def test_add_indexes_and_records_history(store: Store) -> None:
    res = store.add_memory("I prefer PostgreSQL for side projects", "preference", importance=6)
    m = res.memory
    assert res.action == "added"
    assert (m.category, m.importance, m.pinned, m.access_count) == ("preference", 6, False, 0)
    assert m.token_count > 0
    assert fts_ids(store, "postgresql") == {m.id}
    assert vec_row(store, m.id) == ("preference", 0)
    assert events(store, m.id) == ["add"]
    in_step(store)


def test_exact_repeat_is_a_no_op(store: Store) -> None:
    a = store.add_memory("Uses Neovim", "fact").memory
    b = store.add_memory("  uses   neovim ", "fact")
    assert b.action == "exists" and b.memory.id == a.id
    assert store.stats()["memories"]["active"] == 1


def test_near_duplicate_merges_keeping_newest_wording_and_max_importance(store: Store) -> None:
    a = store.add_memory(
        "I am building a Rust CLI called tidyfs for cleaning disks", "project", importance=4
    ).memory
    res = store.add_memory(
        "I'm building a Rust CLI called tidyfs for cleaning disks", "project", importance=7
    )
    assert res.action == "merged" and res.memory.id == a.id
    assert res.similarity is not None and res.similarity >= 0.9
    m = store.get_memory(a.id)
    assert m.content.startswith("I'm building") and m.importance == 7
    hist = store.memory_history(a.id)
    assert [h.event for h in hist] == ["add", "merge"]
    assert hist[1].old is not None and hist[1].old["importance"] == 4
    assert hist[1].new is not None and hist[1].new["content"].startswith("I'm building")
    assert fts_ids(store, "I'm") == {a.id}
    assert store.stats()["memories"]["active"] == 1
    in_step(store)


def test_same_text_in_another_category_does_not_merge(store: Store) -> None:
    store.add_memory("Knows Kubernetes operators well", "skill")
    res = store.add_memory("Knows Kubernetes operators well", "fact")
    assert res.action == "added"


@pytest.mark.parametrize("protect", ["pin", "edit"])
def test_pinned_or_hand_edited_memory_is_never_merged_automatically(store: Store, protect: str) -> None:
    m = store.add_memory("My laptop is a ThinkPad X1 Carbon gen 11", "fact").memory
    if protect == "pin":
        store.pin_memory(m.id)
    else:
        store.edit_memory(m.id, content="My laptop is a ThinkPad X1 Carbon gen 11 with 32 GB")
    before = store.get_memory(m.id)
    near = before.content + "."
    with pytest.raises(DuplicateMemoryError) as info:
        store.add_memory(near, "fact")
    assert info.value.existing_id == m.id
    assert store.get_memory(m.id) == before
    forced = store.add_memory(near, "fact", force=True)
    assert forced.action == "added" and forced.memory.id != m.id
    in_step(store)


def test_edit_changes_fields_reindexes_and_records_each_change(store: Store) -> None:
    m = store.add_memory("Prefers light roast coffee", "preference").memory
    old_vec = store.con.execute("SELECT embedding FROM vec_memories WHERE memory_id = ?", (m.id,)).fetchone()[  # type: ignore[index]
        0
    ]
    e = store.edit_memory(m.id, content="Prefers dark roast espresso", category="fact", importance=8)
    assert (e.content, e.category, e.importance, e.user_edited) == (
        "Prefers dark roast espresso",
        "fact",
        8,
        True,
    )
    assert fts_ids(store, "espresso") == {m.id}
    assert not any(
        True
        for _ in store.con.execute(
            "SELECT 1 FROM fts_memories WHERE fts_memories MATCH ?", (fts_query("light"),)
        )
    )
    new_vec = store.con.execute("SELECT embedding FROM vec_memories WHERE memory_id = ?", (m.id,)).fetchone()[  # type: ignore[index]
        0
    ]
    assert new_vec != old_vec
    assert vec_row(store, m.id) == ("fact", 0)
    assert events(store, m.id) == ["add", "edit", "recategorise", "importance"]
    in_step(store)


def test_pin_unpin_and_importance_steps(store: Store) -> None:
    m = store.add_memory("Lives in Lisbon", "fact", importance=10).memory
    assert store.pin_memory(m.id).pinned
    assert not store.pin_memory(m.id, False).pinned
    assert store.change_importance(m.id, +1).importance == 10  # capped
    assert store.change_importance(m.id, -3).importance == 7
    assert events(store, m.id) == ["add", "pin", "unpin", "importance"]


def test_trash_and_restore_keep_everything(store: Store) -> None:
    m = store.add_memory("Allergic to peanuts", "fact", importance=9, pinned=True).memory
    store.touch_memories([m.id])
    before = store.get_memory(m.id)
    vec_before = store.con.execute(  # type: ignore[index]
        "SELECT embedding FROM vec_memories WHERE memory_id = ?", (m.id,)
    ).fetchone()[0]
    trashed = store.delete_memory(m.id)
    assert trashed.deleted_at is not None
    assert vec_row(store, m.id) == ("fact", 1)
    assert [x.id for x in store.list_memories()] == []
    assert [x.id for x in store.list_memories(trash=True)] == [m.id]
    restored = store.restore_memory(m.id)
    assert restored == before
    vec_after = store.con.execute(  # type: ignore[index]
        "SELECT embedding FROM vec_memories WHERE memory_id = ?", (m.id,)
    ).fetchone()[0]
    assert vec_after == vec_before and vec_row(store, m.id) == ("fact", 0)
    assert events(store, m.id) == ["add", "delete", "restore"]
    in_step(store)


def test_purge_respects_retention_and_pins(store: Store) -> None:
    old = store.add_memory("old and unused", "fact").memory
    fresh = store.add_memory("recently trashed", "fact").memory
    pinned = store.add_memory("pinned but trashed", "fact", pinned=True).memory
    for m in (old, fresh, pinned):
        store.delete_memory(m.id)
    with store.con:
        store.con.execute(
            "UPDATE long_term_memories SET deleted_at = deleted_at - 40 * 86400 WHERE id IN (?, ?)",
            (old.id, pinned.id),
        )
    assert store.purge_trash() == [old.id]
    with pytest.raises(NotFoundError):
        store.get_memory(old.id)
    assert events(store, old.id)[-1] == "purge"
    assert vec_row(store, old.id) is None
    assert {m.id for m in store.list_memories(trash=True)} == {fresh.id, pinned.id}
    in_step(store)


def test_touch_counts_each_access_once_per_call(store: Store) -> None:
    a = store.add_memory("alpha fact", "fact").memory
    b = store.add_memory("beta fact", "fact").memory
    store.touch_memories([a.id, b.id, a.id])
    store.touch_memories([a.id])
    assert store.get_memory(a.id).access_count == 2
    assert store.get_memory(b.id).access_count == 1
    assert store.get_memory(a.id).last_accessed is not None


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"content": "x", "category": "hobby"}, "unknown category"),
        ({"content": "x", "category": "fact", "importance": 11}, "1-10"),
        ({"content": "   ", "category": "fact"}, "empty"),
    ],
)
def test_bad_input_writes_nothing(store: Store, kwargs: dict, match: str) -> None:
    content = kwargs.pop("content")
    category = kwargs.pop("category")
    with pytest.raises(InvalidInputError, match=match):
        store.add_memory(content, category, **kwargs)
    assert store.stats()["memories"]["active"] == 0
    assert store.con.execute("SELECT count(*) FROM memory_history").fetchone()[0] == 0  # type: ignore[index]


def test_markup_and_control_text_is_stored_literally(store: Store) -> None:
    text = "[red]not markup[/red] [/x] \x1b[31mansi\x1b[0m [link=http://x]y[/link]"
    m = store.add_memory(text, "fact").memory
    assert store.get_memory(m.id).content == text
    in_step(store)


def test_without_a_model_rows_are_written_and_embedded_later(db_path, fake_embedder) -> None:  # type: ignore[no-untyped-def]
    from store import maintenance

    s = Store(db_path, embedder=None)
    m = s.add_memory("written with no model", "fact").memory
    assert s.memories_missing_vectors() and s.memories_missing_vectors()[0].id == m.id
    s.close()
    s2 = Store(db_path, embedder=fake_embedder)
    assert maintenance.embed_missing(s2) == {"messages": 0, "memories": 1}
    assert s2.memories_missing_vectors() == []
    s2.close()


def test_model_mismatch_is_detected_and_vectors_never_mixed(db_path, fake_embedder) -> None:  # type: ignore[no-untyped-def]
    from embeddings import FakeEmbedder
    from store import maintenance

    s = Store(db_path, embedder=fake_embedder)
    s.add_memory("first", "fact")
    s.close()
    other = FakeEmbedder(dimension=32, name="another-model")
    s2 = Store(db_path, embedder=other)
    assert s2.vector_problem is not None and "reindex" in s2.vector_problem
    m = s2.add_memory("second", "fact").memory  # written, without a vector
    assert s2.memories_missing_vectors()[0].id == m.id
    result = maintenance.reindex(s2)
    assert result["memories"] == 2 and s2.vector_problem is None
    dim = s2.con.execute("SELECT value FROM settings WHERE key = 'embedding_dim'").fetchone()[0]
    assert dim == "32"
    s2.close()
