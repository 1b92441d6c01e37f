"""A superseded memory never ranks above the memory that superseded it, in a search or a list (issue 27);
`--as-of` still returns it for its time."""

from __future__ import annotations

from store import Store
from store.search.engine import Filters
from store.search.results import SearchResult
from store.search.succession import after_successors


def _hit(mid: int, score: float, superseded_by: int | None = None) -> SearchResult:
    return SearchResult(
        "memory", mid, None, None, None, "fact", f"m{mid}", score, ("keyword",), superseded_by=superseded_by
    )


def test_after_successors_moves_a_superseded_memory_below_its_successor_down_a_chain() -> None:
    # 1 was replaced by 2, 2 by 3; 9 is unrelated; a message with the same id as a memory is left alone
    msg = SearchResult("message", 3, 1, None, "user", None, "x", 0.95, ("keyword",))
    out = after_successors([_hit(1, 0.9, 2), msg, _hit(2, 0.8, 3), _hit(9, 0.7), _hit(3, 0.5)])
    assert [(r.kind, r.id) for r in out] == [
        ("message", 3),
        ("memory", 9),
        ("memory", 3),
        ("memory", 2),
        ("memory", 1),
    ]
    assert [r.score for r in out if r.kind == "memory"] == [0.7, 0.5, 0.5, 0.5]
    # a successor that is not listed moves nothing
    assert [r.id for r in after_successors([_hit(1, 0.9, 5), _hit(2, 0.1)])] == [1, 2]


def test_a_superseded_memory_with_the_stronger_match_still_ranks_below_its_successor(store: Store) -> None:
    old = store.add_memory(
        "Billing runs on Postgres 15: Postgres extensions, Postgres replicas, Postgres backups", "project"
    ).memory
    new = store.add_memory("Billing upgraded to Postgres 17", "project").memory
    assert store.get_memory(old.id).superseded_by == new.id
    hits = store.search("Postgres", scope="memories", touch=False).results
    ids = [h.id for h in hits]
    assert ids.index(new.id) < ids.index(old.id)
    assert hits[ids.index(old.id)].score <= hits[ids.index(new.id)].score
    # the past: as of before the upgrade, the old memory is the answer
    was = store.search(
        "Postgres", scope="memories", touch=False, filters=Filters(as_of=new.created_at - 0.001)
    )
    assert [h.id for h in was.results] == [old.id]
    # lists: current first, whatever the importance
    store.edit_memory(old.id, importance=10)
    assert [m.id for m in store.list_memories()] == [new.id, old.id]
