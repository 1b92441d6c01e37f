"""The session-start profile: never over its budget (property test), pinned memories first and never
pushed out by others, then by importance and use; what it counts as an access."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from store import InvalidInputError, Store
from store.context.profile import HEADER, build_profile

WORDS = [
    "backup",
    "restic",
    "schedule",
    "红烧肉",
    "京都",
    "🙂",
    "[red]",
    "c++",
    "don't",
    "the",
    "a",
    ".",
    "\n",
    "-",
]

memory = st.tuples(
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=40).map(" ".join),
    st.sampled_from(["preference", "project", "skill", "fact"]),
    st.integers(1, 10),  # importance
    st.booleans(),  # pinned
    st.integers(0, 5),  # accesses
)


def _store(tmp: str, memories: list[tuple[str, str, int, bool, int]]) -> Store:
    s = Store(Path(tmp) / "chat.db", embedder=None)
    for text, category, importance, pinned, uses in memories:
        if not text.strip():
            continue
        m = s.add_memory(text, category, importance=importance, pinned=pinned, force=True).memory
        for _ in range(uses):
            s.touch_memories([m.id])
    return s


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(memories=st.lists(memory, max_size=25), budget=st.integers(0, 400))
def test_never_over_budget_and_pinned_first(
    memories: list[tuple[str, str, int, bool, int]], budget: int
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        s = _store(tmp, memories)
        try:
            p = build_profile(s, budget, touch=False)
            assert p.tokens == s.tokens.count(p.text) <= budget
            pins = [m.pinned for m in p.memories]
            assert pins == sorted(pins, reverse=True)  # every pinned one before any other
            assert p.left_out == len(s.list_memories()) - len(p.memories)
            if p.memories:
                assert p.text.startswith(HEADER) and all(
                    " ".join(m.content.split()) in p.text for m in p.memories
                )
                # The module's claim: costed line by line, the counts add up exactly (no trimming needed).
                lines = p.text.split("\n")
                pieces = [s.tokens.count(x + "\n") for x in lines[:-1]] + [s.tokens.count(lines[-1])]
                assert sum(pieces) == p.tokens
            else:
                assert p.text == "" and p.tokens == 0
            # Unpinned memories never push out a pinned one: the pinned part is what the pinned alone give.
            for m in s.list_memories(pinned=False):
                s.delete_memory(m.id)
            alone = build_profile(s, budget, touch=False)
            assert [m.id for m in p.memories if m.pinned] == [m.id for m in alone.memories]
        finally:
            s.close()


def test_order_is_pinned_then_importance_then_use(store: Store) -> None:
    low = store.add_memory("low importance, much used", "fact", importance=2).memory
    high = store.add_memory("high importance", "fact", importance=8).memory
    used = store.add_memory("high importance, used", "skill", importance=8).memory
    pinned = store.add_memory("pinned but unimportant", "preference", importance=1, pinned=True).memory
    for _ in range(5):
        store.touch_memories([low.id])
    store.touch_memories([used.id])
    p = build_profile(store, 1000)
    assert [m.id for m in p.memories] == [pinned.id, used.id, high.id, low.id]
    assert p.text.splitlines() == [
        HEADER,
        "- (preference, pinned) pinned but unimportant",
        "- (skill) high importance, used",
        "- (fact) high importance",
        "- (fact) low importance, much used",
    ]
    # Inclusion counts as an access (touch=False for a preview does not).
    assert [store.get_memory(i).access_count for i in (pinned.id, used.id, high.id, low.id)] == [1, 2, 1, 6]
    build_profile(store, 1000, touch=False)
    assert store.get_memory(pinned.id).access_count == 1


def test_a_tight_budget_keeps_what_fits_and_says_what_was_left_out(store: Store) -> None:
    store.add_memory(
        "Always answer in British English, with metric units and ISO dates", "preference", pinned=True
    )
    short = store.add_memory("Likes tea", "preference", importance=3, force=True).memory
    trashed = store.add_memory("Used to like coffee", "preference", importance=10, force=True).memory
    store.delete_memory(trashed.id)
    need = store.tokens.count(HEADER + "\n- (preference) Likes tea")
    p = build_profile(store, need)
    assert [m.id for m in p.memories] == [short.id] and p.tokens <= need
    assert (p.left_out, p.pinned_left_out) == (1, 1)  # the trash is not counted
    assert build_profile(store, 0).text == ""
    with pytest.raises(InvalidInputError):
        build_profile(store, -1)


def test_many_memories_stop_early(store: Store) -> None:
    for i in range(600):
        store.add_memory(f"fact number {i} about the user's home lab", "fact", force=True, embed=False)
    p = build_profile(store, 300, touch=False)
    assert p.tokens <= 300 and p.left_out == 600 - len(p.memories) and len(p.memories) > 10
