"""Keeping memories true (issue 17): supersede instead of merge, the conflicts queue, time, provenance.

Mechanics run on the real chat.db with the fake embedder (its cosine is a bag-of-words overlap, so a
swapped sentence is as close as a duplicate: exactly the case the rules must catch). The thresholds are
checked with the real model in test_truth_model.py.
"""

from __future__ import annotations

import datetime as dt

import pytest

from store import Store
from store.context.builder import build_context
from store.errors import DuplicateMemoryError, InvalidInputError
from store.export import export_json, markdown_files, restore_json
from store.records import MessageIn, ThreadIn
from store.search.engine import Filters
from store.truth.classify import classify
from store.truth.conflicts import count_open, get_conflict, list_conflicts, resolve_conflict


def events(store: Store, memory_id: int) -> list[str]:
    return [h.event for h in store.memory_history(memory_id)]


# -- the classifier on its own ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "sim", "relation"),
    [
        (
            "I prefer uv over pip for Python projects",
            "I prefer pip over uv for Python projects",
            0.937,
            "reversal",
        ),
        (
            "I prefer uv over pip for Python projects",
            "I stopped using uv; I went back to plain pip",
            0.80,
            "reversal",
        ),
        ("Lives in Lisbon", "Moved to Porto", 0.55, "update"),
        (
            "Uses Postgres 15 for the billing service",
            "Upgraded the billing service to Postgres 17",
            0.85,
            "update",
        ),
        ("My PIN is 1234", "My PIN is 9876", 0.95, "unsure"),  # one value, but nothing says it changed: ask
        (
            "Prefers open-source tools that can be scripted from cron or systemd (chose restic over borg).",
            "I prefer open-source tools I can script from cron or systemd.",
            0.84,
            "paraphrase",
        ),
        ("I drink coffee every morning", "I drink coffee every morning.", 0.99, "duplicate"),
        ("My dog is called Rex", "Prefers pytest over unittest", 0.1, "unrelated"),
        ("我更喜欢用 uv 而不是 pip", "我更喜欢用 pip 而不是 uv", 0.99, "reversal"),
        ("我住在上海", "我搬到北京了", 0.66, "update"),
        ("我在腾讯工作", "我的狗叫旺财", 0.99, "unrelated"),  # the model's Chinese cosine says nothing
    ],
)
def test_classify_cases_from_the_issue(old: str, new: str, sim: float, relation: str) -> None:
    assert classify(new, old, sim).relation == relation


def test_turning_down_what_the_old_memory_ranked_lower_is_not_a_reversal() -> None:
    old = "I prefer pip over uv for Python projects"
    assert classify("I stopped using uv; I went back to plain pip", old, 0.8).action == "review"
    assert classify("I stopped using pip; I went back to uv", old, 0.8).relation == "reversal"


def test_texts_whose_numbers_or_names_differ_never_merge() -> None:
    for old, new in [
        ("My PIN is 1234", "My PIN is 9876"),
        ("The standup is at 9:30", "The standup is at 10:00"),
        ("Meeting with Anna on Friday", "Meeting with Maria on Friday"),
        ("Born in 1990", "Born in 1991"),
    ]:
        assert classify(new, old, 0.999).action != "merge", (old, new)


# -- supersede on add ------------------------------------------------------------------------------------


def test_a_reversal_is_added_and_supersedes_instead_of_merging(store: Store) -> None:
    old = store.add_memory("I prefer uv over pip for Python projects", "preference").memory
    res = store.add_memory("I prefer pip over uv for Python projects", "preference")
    assert res.action == "added" and res.memory.id != old.id
    assert res.superseded == (old.id,)
    kept = store.get_memory(old.id)
    assert kept.content == "I prefer uv over pip for Python projects"  # never rewritten, never deleted
    assert kept.deleted_at is None
    assert kept.superseded_by == res.memory.id
    assert kept.valid_until == pytest.approx(res.memory.valid_from)
    assert events(store, old.id) == ["add", "supersede"]
    sup = store.memory_history(old.id)[-1].new
    assert (
        sup is not None
        and sup["relation"] == "reversal"
        and "the preference is the other way round" in sup["reasons"]
    )
    # listed, resolved, and undoable: the automatic decision is in the queue's history
    auto = list_conflicts(store, status="resolved")
    assert [(c.new_id, c.old_id, c.resolution) for c in auto] == [(res.memory.id, old.id, "new")]
    assert count_open(store) == 0


def test_a_paraphrase_still_merges(store: Store) -> None:
    old = store.add_memory("I drink coffee every morning", "fact").memory
    res = store.add_memory("I drink coffee every morning!", "fact")
    assert (res.action, res.memory.id, res.superseded) == ("merged", old.id, ())


def test_superseded_memories_rank_below_current_ones_and_as_of_finds_the_past(store: Store) -> None:
    old = store.add_memory("I prefer uv over pip for Python projects", "preference").memory
    new = store.add_memory("I prefer pip over uv for Python projects", "preference").memory
    hits = store.search("uv pip python projects", scope="memories", touch=False).results
    assert [h.id for h in hits] == [new.id, old.id]
    assert hits[1].superseded_by == new.id and hits[1].to_json()["superseded_by"] == new.id
    assert hits[0].to_json()["source"] == {"origin": "manual", "thread_id": None, "message_id": None}
    # as of a moment before the reversal: only the old one was true
    before = old.created_at + (new.created_at - old.created_at) / 2
    was = store.search("uv pip python", scope="memories", touch=False, filters=Filters(as_of=before)).results
    assert [h.id for h in was] == [old.id]
    now = store.search(
        "uv pip python",
        scope="memories",
        touch=False,
        filters=Filters(as_of=(new.valid_from or new.created_at) + 1),
    )
    assert [h.id for h in now.results] == [new.id]
    assert [m.id for m in store.list_memories(state="current")] == [new.id]
    assert [m.id for m in store.list_memories(state="superseded")] == [old.id]


def test_context_uses_only_current_memories(store: Store) -> None:
    tid = store.write_thread(
        ThreadIn("test", "t1", "Python tooling", [MessageIn("user", "Which Python installer should I use?")])
    ).thread_id
    old = store.add_memory("I prefer uv over pip for Python projects", "preference", pinned=True).memory
    store.add_memory("I prefer pip over uv for Python projects", "preference", pinned=True)
    # a pinned memory is never superseded automatically: it waits for the user
    assert store.get_memory(old.id).valid_until is None
    [c] = list_conflicts(store)
    assert (c.old_id, c.relation, c.suggested) == (old.id, "reversal", "new")
    resolve_conflict(store, c.id, "new")
    ctx = build_context(store, tid, 2000, query="python installer uv pip", touch=False)
    assert old.id not in ctx.memory_ids
    assert "I prefer pip over uv" in ctx.to_json()["messages"][0]["content"]
    assert "I prefer uv over pip" not in ctx.to_json()["messages"][0]["content"]


# -- the conflicts queue ---------------------------------------------------------------------------------


def _conflict(store: Store) -> tuple[int, int, int]:
    """A pinned memory and a reversal of it: queued, nothing changed yet."""
    old = store.add_memory("Prefers light mode in the editor", "preference", pinned=True).memory
    res = store.add_memory("Prefers dark mode in the editor", "preference")
    assert res.superseded == () and len(res.conflicts) == 1
    assert store.get_memory(old.id).valid_until is None
    return res.conflicts[0], res.memory.id, old.id


def test_resolve_keep_new_supersedes_and_writes_history(store: Store) -> None:
    cid, new_id, old_id = _conflict(store)
    c = resolve_conflict(store, cid, "new")
    assert (c.status, c.resolution) == ("resolved", "new")
    assert store.get_memory(old_id).superseded_by == new_id
    assert events(store, old_id)[-2:] == ["supersede", "resolve"]
    assert events(store, new_id)[-1] == "resolve"
    assert count_open(store) == 0


def test_resolve_keep_old_trashes_the_new_one(store: Store) -> None:
    cid, new_id, old_id = _conflict(store)
    resolve_conflict(store, cid, "old")
    assert store.get_memory(new_id).deleted_at is not None
    assert store.get_memory(old_id).valid_until is None
    assert store.restore_memory(new_id).deleted_at is None  # restorable, as every delete


def test_resolve_both_undoes_an_automatic_supersede(store: Store) -> None:
    old = store.add_memory("I prefer uv over pip for Python projects", "preference").memory
    store.add_memory("I prefer pip over uv for Python projects", "preference")
    [auto] = list_conflicts(store, status="resolved")
    resolve_conflict(store, auto.id, "both")
    assert store.get_memory(old.id).valid_until is None
    assert events(store, old.id)[-2:] == ["reinstate", "resolve"]


def test_resolve_merge_keeps_one_memory_with_the_new_wording(store: Store) -> None:
    cid, new_id, old_id = _conflict(store)
    resolve_conflict(store, cid, "merge")
    merged = store.get_memory(old_id)
    assert merged.content == "Prefers dark mode in the editor" and merged.pinned
    assert store.get_memory(new_id).deleted_at is not None
    assert [h.id for h in store.search("dark mode", scope="memories", touch=False).results] == [old_id]


def test_resolve_rejects_unknown_choices_and_ids(store: Store) -> None:
    cid, _, _ = _conflict(store)
    with pytest.raises(InvalidInputError):
        resolve_conflict(store, cid, "maybe")
    with pytest.raises(Exception, match="no conflict"):
        get_conflict(store, 999)
    assert count_open(store) == 1


def test_a_paraphrase_of_a_pinned_memory_still_asks_first(store: Store) -> None:
    store.add_memory("I drink coffee every morning", "fact", pinned=True)
    with pytest.raises(DuplicateMemoryError):
        store.add_memory("I drink coffee every morning!", "fact")


def test_an_edit_that_contradicts_another_memory_supersedes_it(store: Store) -> None:
    old = store.add_memory("Prefers tabs over spaces for indentation", "preference").memory
    other = store.add_memory("Uses GitHub Actions for CI", "project").memory
    store.edit_memory(other.id, content="Prefers spaces over tabs for indentation")
    assert store.get_memory(old.id).superseded_by == other.id


# -- time in the export ---------------------------------------------------------------------------------


def test_export_round_trip_keeps_validity_links_and_conflicts(store: Store, tmp_path, fake_embedder) -> None:  # type: ignore[no-untyped-def]
    old = store.add_memory("I prefer uv over pip for Python projects", "preference").memory
    new = store.add_memory("I prefer pip over uv for Python projects", "preference").memory
    _conflict(store)
    data = export_json(store)
    md = dict(markdown_files(store))["memories.md"]
    assert (
        f"~~I prefer uv over pip for Python projects~~ _(importance 5, used 0×, #{old.id}, superseded by #{new.id})_"
        in md
    )
    row = next(r for r in data["tables"]["long_term_memories"] if r["id"] == old.id)
    assert row["superseded_by"] == new.id and row["valid_until"] is not None
    restored = Store(tmp_path / "restored.db", embedder=fake_embedder)
    try:
        restore_json(restored, data)
        again = restored.get_memory(old.id)
        assert (again.superseded_by, again.valid_until) == (new.id, store.get_memory(old.id).valid_until)
        assert len(list_conflicts(restored)) == 1 and len(list_conflicts(restored, status="resolved")) == 1
    finally:
        restored.close()


def test_an_imported_older_statement_is_the_one_superseded(store: Store) -> None:
    recent = store.add_memory("I prefer pip over uv for Python projects", "preference").memory
    then = dt.datetime(2020, 1, 1, tzinfo=dt.UTC).timestamp()
    res = store.add_memory(
        "I prefer uv over pip for Python projects", "preference", origin="import", created_at=then
    )
    assert res.superseded == (res.memory.id,)
    assert store.get_memory(res.memory.id).superseded_by == recent.id
    assert store.get_memory(recent.id).valid_until is None


# -- provenance -----------------------------------------------------------------------------------------


def test_a_chatgpt_bio_memory_links_the_message_that_led_to_it(store: Store) -> None:
    from store.importing.pipeline import import_paths
    from tests.store.importing.formats.import_helpers import FIXTURES

    import_paths(store, [FIXTURES / "chatgpt" / "conversations.json"])
    [m] = store.list_memories()
    assert m.origin == "chatgpt-bio"
    msg = store.get_message(m.source_message_id or -1)
    assert (msg.external_id, msg.role, msg.content) == ("u2", "user", "Remember that I like my eggs soft.")
    assert m.source_thread_id == msg.thread_id
    src = store.memory_source(m)
    assert (src.thread_id, src.message_id, src.message_role) == (msg.thread_id, msg.id, "user")
    assert "Remember that I like my eggs soft." in (src.message_excerpt or "")
    hit = store.search("soft-boiled eggs", scope="memories", touch=False).results[0]
    assert hit.to_json()["source"] == {
        "origin": "chatgpt-bio",
        "thread_id": msg.thread_id,
        "message_id": msg.id,
    }


def test_an_imported_memory_without_a_message_names_its_file(store: Store, tmp_path) -> None:  # type: ignore[no-untyped-def]
    import json

    from store.importing.pipeline import import_paths

    path = tmp_path / "memories.json"
    path.write_text(json.dumps([{"conversations_memory": "- Prefers metric units", "project_memories": {}}]))
    import_paths(store, [path])
    [m] = store.list_memories()
    assert m.source_message_id is None and m.source_note is not None and "memories.json" in m.source_note
    assert "memories.json" in store.memory_source(m).describe()


def test_an_old_database_gets_validity_from_creation_and_the_new_history_events(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import shutil
    from pathlib import Path

    from embeddings.embedder import FakeEmbedder

    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "chat-v1.db"
    db = tmp_path / "chat.db"
    shutil.copy(fixture, db)
    s = Store(db, embedder=FakeEmbedder())
    try:
        old = s.list_memories()
        assert old and all(m.valid_from == m.created_at and m.valid_until is None for m in old)
        s.supersede_memory(old[0].id, s.add_memory("a newer memory after the upgrade", "fact").memory.id)
        assert events(s, old[0].id)[-1] == "supersede"
        assert s.reinstate_memory(old[0].id).valid_until is None
    finally:
        s.close()


def test_re_resolving_a_merge_with_keep_old_brings_the_old_wording_back(store: Store) -> None:
    """Issue 31.10: after `--keep merge`, `--keep old` said "kept old" but kept the new wording."""
    cid, new_id, old_id = _conflict(store)
    resolve_conflict(store, cid, "merge")
    c = resolve_conflict(store, cid, "old")
    assert c.resolution == "old"
    assert store.get_memory(old_id).content == "Prefers light mode in the editor"
    assert store.get_memory(new_id).deleted_at is not None
    hits = store.search("light mode editor", scope="memories", touch=False).results
    assert [h.id for h in hits] == [old_id]
    # and back again: merge, then both (the new memory comes back from the trash, each with its words)
    resolve_conflict(store, cid, "merge")
    resolve_conflict(store, cid, "both")
    assert store.get_memory(old_id).content == "Prefers light mode in the editor"
    assert store.get_memory(new_id).deleted_at is None
    assert store.get_memory(new_id).content == "Prefers dark mode in the editor"


def test_repeating_a_resolve_writes_no_second_history_row(store: Store) -> None:
    """Issue 31.10: the same decision twice duplicated the history rows."""
    cid, new_id, old_id = _conflict(store)
    resolve_conflict(store, cid, "new")
    before = (len(store.memory_history(old_id)), len(store.memory_history(new_id)))
    c = resolve_conflict(store, cid, "new")
    assert c.resolution == "new"
    assert (len(store.memory_history(old_id)), len(store.memory_history(new_id))) == before


def test_a_clock_set_back_never_makes_the_older_memory_win(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 31.14: the order of addition decides which memory is newer, not the wall clock."""
    import store.memories as memories_module
    import store.memory_rows as rows_module
    import store.truth.timeline as timeline_module

    old = store.add_memory("I live in Berlin.", "fact").memory
    earlier = old.created_at - 86_400.0  # the clock went back a day
    for module in (memories_module, rows_module, timeline_module):
        monkeypatch.setattr(module, "now", lambda: earlier)
    res = store.add_memory("I moved to Lisbon last month.", "fact")
    assert res.superseded == (old.id,)
    kept, new = store.get_memory(old.id), store.get_memory(res.memory.id)
    assert kept.superseded_by == new.id and new.valid_until is None
    assert kept.valid_until is not None and kept.valid_until >= (kept.valid_from or kept.created_at)


def test_an_import_dated_before_its_neighbour_is_the_one_superseded(store: Store) -> None:
    """Only a memory that carries its own date can be older than one added before it."""
    new = store.add_memory("I live in Lisbon.", "fact").memory
    old = store.add_memory("I live in Berlin.", "fact", origin="import", created_at=new.created_at - 86_400)
    assert store.get_memory(old.memory.id).superseded_by == new.id
    assert store.get_memory(new.id).valid_until is None


def test_restating_a_superseded_value_makes_it_current_again(store: Store) -> None:
    """Issue 27: "My manager is Ana" after "Tom is my manager now" answered `exists`, the profile kept Tom."""
    ana = store.add_memory("My manager is Ana.", "fact").memory
    tom = store.add_memory("Tom is my manager now.", "fact").memory
    assert store.get_memory(ana.id).superseded_by == tom.id
    res = store.add_memory("My manager is Ana.", "fact")
    assert res.action == "added" and res.memory.id not in (ana.id, tom.id)
    assert res.superseded == (tom.id,)
    assert store.get_memory(tom.id).superseded_by == res.memory.id
    current = [m.content for m in store.list_memories(state="current")]
    assert current == ["My manager is Ana."]
    # history kept: the first Ana is still there, superseded, and the new one says what it restates
    assert store.get_memory(ana.id).valid_until is not None
    add = store.memory_history(res.memory.id)[0]
    assert add.new is not None and add.new["restates"] == ana.id
    # the same words once more: it is current now, so nothing happens
    assert store.add_memory("My manager is Ana.", "fact").action == "exists"
