"""Numbers that name things are not versions, and a "1" written in digits is a value (found by the
writers-at-once reliability test: "handler 0 remembers fact 1" merged silently into "… fact 0", and
"Server 2 runs Postgres" superseded "Server 1 runs Postgres" as "a new version of server")."""

from __future__ import annotations

import pytest

from store import Store
from store.truth.classify import classify


@pytest.mark.parametrize(
    ("new", "old"),
    [
        ("Server 2 runs Postgres", "Server 1 runs Postgres"),
        ("Team 3 owns the billing service", "Team 4 owns the billing service"),
        ("Floor 2 has the quiet room", "Floor 5 has the quiet room"),
    ],
)
def test_a_capitalised_word_and_another_whole_number_is_asked_never_superseded(new: str, old: str) -> None:
    v = classify(new, old, 0.97)
    assert v.action == "review", v


@pytest.mark.parametrize(
    ("new", "old"),
    [
        ("The API uses Python 3.12", "The API uses Python 3.11"),
        ("We upgraded to Postgres 16", "We run Postgres 15"),
    ],
)
def test_a_dotted_version_or_a_said_change_still_supersedes(new: str, old: str) -> None:
    v = classify(new, old, 0.95)
    assert (v.relation, v.action) == ("update", "supersede"), v


def test_a_digit_one_is_a_value_never_merged_away(store: Store) -> None:
    texts = [f"handler {n} remembers fact {i} about the garden" for n in range(2) for i in range(3)]
    for text in texts:
        store.add_memory(text, "fact")
    current = {m.content for m in store.list_memories(limit=100) if m.valid_until is None}
    assert current == set(texts)


def test_one_as_a_word_is_still_an_article() -> None:
    assert classify("I have one cat", "I have a cat", 0.97).action == "merge"


@pytest.mark.parametrize(
    ("new", "old"),
    [
        ("after the snapshot", "before the snapshot"),
        ("Standup is after lunch", "Standup is before lunch"),
        ("The alert fires above 90 percent", "The alert fires below 90 percent"),
    ],
)
def test_before_and_after_are_never_merged(new: str, old: str) -> None:
    """Found by the checkpoints test: "after the snapshot" merged into "before the snapshot" (the order
    words are stopwords to the rest of the reading)."""
    v = classify(new, old, 0.9)
    assert v.action in ("review", "add"), v  # asked, or two facts: never merged, never superseded
