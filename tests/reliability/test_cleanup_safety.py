"""Promise 6: cleanup never eats what matters.

- Pinned memories survive any cleanup and any purge, whatever the memories, thresholds and times
  (hypothesis over all three, through store.cleanup and Store.purge_trash).
- Every destructive step is previewable and reversible until purge: the preview lists exactly what
  --apply trashes, and restoring brings each memory back exactly as it was.
- memory_history records every change with old and new values: a random sequence of every operation
  (add, merge, edit, recategorise, importance, pin, delete, restore, cleanup, purge) replays from the
  history to exactly the rows, after every step.
"""

from __future__ import annotations

import contextlib
import io
import json
import tempfile
import time
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from app.cli import main
from embeddings import FakeEmbedder
from store import Store
from store.cleanup import Thresholds, apply_cleanup, find_candidates, restore
from store.errors import DuplicateMemoryError
from store.records import CATEGORIES
from tests.reliability.invariants import history_problems
from tests.reliability.processes import no_embed_config

DAY = 86400.0
NOW = time.time()

_memory = st.fixed_dictionaries(
    {
        "importance": st.integers(1, 10),
        "access_count": st.integers(0, 4),
        "created_days_ago": st.floats(0, 400),
        "accessed_days_ago": st.none() | st.floats(0, 400),
        "pinned": st.booleans(),
        "trashed_days_ago": st.none() | st.floats(0, 100),
    }
)
_thresholds = st.builds(
    Thresholds,
    min_access=st.integers(0, 6),
    max_importance=st.integers(0, 11),
    older_than_days=st.floats(0, 400),
)


def _populate(store: Store, specs: list[dict[str, Any]]) -> list[int]:
    ids = []
    with store.con:
        for i, spec in enumerate(specs):
            m = store.add_memory(
                f"memory {i}: fact number {i * 7919 % 1000}",
                CATEGORIES[i % 4],
                importance=spec["importance"],
                pinned=spec["pinned"],
                created_at=NOW - spec["created_days_ago"] * DAY,
                force=True,
            ).memory
            accessed = spec["accessed_days_ago"]
            # Counters and times set directly: the test travels in time, the store has no API for that.
            store.con.execute(
                "UPDATE long_term_memories SET access_count = ?, last_accessed = ? WHERE id = ?",
                (spec["access_count"], None if accessed is None else NOW - accessed * DAY, m.id),
            )
            if spec["trashed_days_ago"] is not None:
                store.delete_memory(m.id)
                store.con.execute(
                    "UPDATE long_term_memories SET deleted_at = ? WHERE id = ?",
                    (NOW - spec["trashed_days_ago"] * DAY, m.id),
                )
            ids.append(m.id)
    return ids


def _is_candidate(m: Any, t: Thresholds, at: float) -> bool:
    last = m.last_accessed if m.last_accessed is not None else m.created_at
    return (
        m.deleted_at is None
        and not m.pinned
        and m.importance < t.max_importance
        and m.access_count < t.min_access
        and last < at - t.older_than_days * DAY
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    specs=st.lists(_memory, max_size=25),
    thresholds=_thresholds,
    at_days=st.floats(-10, 400),
    purge_days=st.floats(0, 120),
)
def test_cleanup_and_purge_never_touch_pinned(
    specs: list[dict[str, Any]], thresholds: Thresholds, at_days: float, purge_days: float
) -> None:
    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "chat.db", embedder=FakeEmbedder()) as store:
        ids = _populate(store, specs)
        before = {i: store.get_memory(i) for i in ids}
        pinned = {i for i, m in before.items() if m.pinned}
        at = NOW + at_days * DAY

        preview = find_candidates(store, thresholds, at=at)
        assert {c.memory.id for c in preview} == {
            i for i, m in before.items() if _is_candidate(m, thresholds, at)
        }
        assert {i: store.get_memory(i) for i in ids} == before, "the preview changed something"

        applied = apply_cleanup(store, thresholds, at=at)
        assert [c.memory.id for c in applied] == [c.memory.id for c in preview]
        for i in ids:
            now_m, was = store.get_memory(i), before[i]
            if i in {c.memory.id for c in applied}:
                assert now_m.deleted_at is not None and not was.pinned
                event = store.memory_history(i)[-1]
                assert event.event == "cleanup" and event.new and event.new["reason"]
            else:
                assert now_m == was, "cleanup touched a memory it did not list"

        after_cleanup = {i: store.get_memory(i) for i in ids}
        purged = store.purge_trash(older_than_days=purge_days)
        assert not pinned & set(purged), "purge removed a pinned memory"
        for i in pinned:
            assert store.get_memory(i).pinned
        cutoff = time.time() - purge_days * DAY
        for i in ids:
            m = after_cleanup[i]
            old_trash = m.deleted_at is not None and m.deleted_at <= cutoff and not m.pinned
            assert (i in purged) == old_trash, f"memory {i}: purged={i in purged}, expected {old_trash}"
        assert history_problems(store) == []


@settings(max_examples=25, deadline=None)
@given(specs=st.lists(_memory, min_size=1, max_size=15), thresholds=_thresholds)
def test_cleanup_is_reversible_exactly(specs: list[dict[str, Any]], thresholds: Thresholds) -> None:
    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "chat.db", embedder=FakeEmbedder()) as store:
        ids = _populate(store, specs)
        before = {i: store.get_memory(i) for i in ids}
        applied = apply_cleanup(store, thresholds)
        restored, not_in_trash = restore(store, [c.memory.id for c in applied])
        assert not not_in_trash
        assert {i: store.get_memory(i) for i in ids} == before, "restore did not bring back the same memories"
        assert store.check_indexes() == []
        assert history_problems(store) == []


def _cli(db: Path, config: Path, *args: str) -> Any:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["--db", str(db), "--config", str(config), *args, "--json"])
    assert code == 0 and "Traceback" not in err.getvalue(), err.getvalue()
    return json.loads(out.getvalue())


def test_cli_preview_apply_restore_purge(tmp_path: Path) -> None:
    """The whole path a person takes: preview (changes nothing), apply (exactly the preview), trash
    restore (exactly as before), purge (never the pinned memory in the trash)."""
    db, config = tmp_path / "chat.db", no_embed_config(tmp_path)
    with Store(db, embedder=None) as store:
        old = NOW - 200 * DAY
        faded = [
            store.add_memory(f"faded {i}", "fact", importance=1, created_at=old).memory.id for i in range(5)
        ]
        kept = store.add_memory(
            "pinned and faded", "fact", importance=1, pinned=True, created_at=old
        ).memory.id
        store.add_memory("important", "fact", importance=9, created_at=old)
        store.delete_memory(kept)  # a pinned memory can be trashed by hand; purge must still keep it
        with store.con:
            store.con.execute("UPDATE long_term_memories SET deleted_at = ? WHERE id = ?", (old, kept))
        before = {i: store.get_memory(i) for i in faded}

    preview = _cli(db, config, "cleanup")
    assert [c["id"] for c in preview["candidates"]] == faded and not preview["applied"]
    assert all(c["reason"].startswith("importance 1 (below 3)") for c in preview["candidates"])
    assert _cli(db, config, "trash")["trash"][0]["id"] == kept  # nothing moved by the preview

    applied = _cli(db, config, "cleanup", "--apply")
    assert [c["id"] for c in applied["candidates"]] == faded and applied["applied"]
    assert _cli(db, config, "cleanup")["candidates"] == []

    restored = _cli(db, config, "trash", "restore", *map(str, faded[:3]))
    assert [m["id"] for m in restored["restored"]] == faded[:3]
    with Store(db, embedder=None) as store:
        assert {i: store.get_memory(i) for i in faded[:3]} == {i: before[i] for i in faded[:3]}

    purged = _cli(db, config, "trash", "purge", "--older-than", "0")
    assert sorted(purged["purged"]) == faded[3:]
    trash = _cli(db, config, "trash")["trash"]
    assert [m["id"] for m in trash] == [kept] and trash[0]["purge_after"] is None
    with Store(db, embedder=None) as store:
        assert [h.event for h in store.memory_history(faded[4])] == ["add", "cleanup", "purge"]
        assert store.memory_history(faded[4])[-1].old["content"] == "faded 4"  # type: ignore[index]  # what was purged, kept
        assert history_problems(store) == []


def test_a_purged_memory_id_is_never_reused(tmp_path: Path) -> None:
    """SQLite gives a new row the largest id + 1, so purging the newest memory freed its id, and the next
    memory inherited its history (add, delete, purge, add: a history no memory had)."""
    with Store(tmp_path / "chat.db", embedder=None) as store:
        store.add_memory("first", "fact")
        gone = store.add_memory("second", "fact").memory.id
        store.delete_memory(gone)
        assert store.purge_trash(older_than_days=0) == [gone]
        new = store.add_memory("third", "fact").memory.id
        assert new != gone
        assert [h.event for h in store.memory_history(new)] == ["add"]
        assert [h.event for h in store.memory_history(gone)] == ["add", "delete", "purge"]
        assert history_problems(store) == []


class MemoryLifecycle(RuleBasedStateMachine):
    """Any sequence of every change a memory can go through; the history must explain the rows."""

    def __init__(self) -> None:
        super().__init__()
        self._dir = tempfile.TemporaryDirectory()
        self.store = Store(Path(self._dir.name) / "chat.db", embedder=FakeEmbedder())
        self.pinned: set[int] = set()

    def teardown(self) -> None:
        self.store.close()
        self._dir.cleanup()

    def _ids(self, trash: bool | None = None) -> list[int]:
        rows = self.store.con.execute(
            "SELECT id FROM long_term_memories"
            + ("" if trash is None else " WHERE deleted_at IS " + ("NOT NULL" if trash else "NULL"))
        )
        return sorted(int(r[0]) for r in rows)

    @rule(
        words=st.lists(
            st.sampled_from(["tea", "coffee", "garden", "rust", "sqlite", "bread", "train"]),
            min_size=1,
            max_size=4,
        ),
        category=st.sampled_from(CATEGORIES),
        importance=st.integers(1, 10),
        pinned=st.booleans(),
    )
    def add(self, words: list[str], category: str, importance: int, pinned: bool) -> None:
        # Similar words merge into an existing memory (a 'merge' event); next to a pinned or hand-edited
        # one the store asks instead (DuplicateMemoryError) and changes nothing.
        with contextlib.suppress(DuplicateMemoryError):
            self.store.add_memory("I like " + " ".join(words), category, importance=importance, pinned=pinned)

    @precondition(lambda self: self._ids(trash=False))
    @rule(
        data=st.data(),
        content=st.none() | st.text(min_size=1, max_size=20).filter(str.strip),
        category=st.none() | st.sampled_from(CATEGORIES),
        importance=st.none() | st.integers(1, 10),
        pinned=st.none() | st.booleans(),
    )
    def edit(
        self,
        data: st.DataObject,
        content: str | None,
        category: str | None,
        importance: int | None,
        pinned: bool | None,
    ) -> None:
        mid = data.draw(st.sampled_from(self._ids(trash=False)))
        self.store.edit_memory(mid, content=content, category=category, importance=importance, pinned=pinned)

    @precondition(lambda self: self._ids(trash=False))
    @rule(data=st.data())
    def delete(self, data: st.DataObject) -> None:
        self.store.delete_memory(data.draw(st.sampled_from(self._ids(trash=False))))

    @precondition(lambda self: self._ids(trash=True))
    @rule(data=st.data())
    def restore(self, data: st.DataObject) -> None:
        self.store.restore_memory(data.draw(st.sampled_from(self._ids(trash=True))))

    @rule(thresholds=_thresholds, ahead_days=st.floats(0, 500))
    def cleanup(self, thresholds: Thresholds, ahead_days: float) -> None:
        apply_cleanup(self.store, thresholds, at=time.time() + ahead_days * DAY)

    @rule(days=st.sampled_from([0.0, 30.0]))
    def purge(self, days: float) -> None:
        self.store.purge_trash(older_than_days=days)

    @precondition(lambda self: self._ids(trash=False))
    @rule(data=st.data())
    def search_touches(self, data: st.DataObject) -> None:
        self.store.touch_memories(data.draw(st.lists(st.sampled_from(self._ids(trash=False)), max_size=3)))

    @invariant()
    def history_explains_every_row(self) -> None:
        assert history_problems(self.store) == []

    @invariant()
    def pinned_memories_are_never_gone(self) -> None:
        """A memory pinned after the last step still exists after this one: in one step only a purge
        removes anything, and purge never takes a pinned memory (unpinning is an edit, a step of its own)."""
        existing = set(self._ids())
        assert self.pinned <= existing, f"pinned memories {sorted(self.pinned - existing)} are gone"
        self.pinned = {mid for mid in existing if self.store.get_memory(mid).pinned}


MemoryLifecycle.TestCase.settings = settings(max_examples=50, stateful_step_count=30, deadline=None)
test_memory_lifecycle = MemoryLifecycle.TestCase
