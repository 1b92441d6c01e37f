"""Precision first: a paraphrase read as a change is asked about, never superseded silently.

Each case here was superseded before (probes written like an outsider's pairs, 2026-11-28). The cosines
are all-MiniLM-L6-v2's for the pair, so each call is what `memapp memory add` decides with the default
model; the rules only read the cosine as a number.
"""

from __future__ import annotations

import pytest

from store import Store
from store.truth.classify import classify
from store.truth.numbers import number_term
from store.truth.reading import read


@pytest.mark.parametrize(
    ("old", "new", "cosine"),
    [
        ("Lives in NYC", "Lives in New York City", 0.95),
        ("I live in SF", "I live in San Francisco", 0.90),
        ("Lives in Bombay", "Lives in Mumbai", 0.86),
        ("Lives in Berlin-Kreuzberg", "Lives in Kreuzberg, Berlin", 0.98),
        ("I'm 34", "I'm thirty-four years old", 0.73),
    ],
)
def test_another_name_for_the_same_value_is_never_superseded(old: str, new: str, cosine: float) -> None:
    v = classify(new, old, cosine)
    assert v.action != "supersede", v


@pytest.mark.parametrize(
    ("old", "new", "cosine"),
    [
        ("I live in Berlin", "I live in Lisbon", 0.54),
        ("Lives in Tokyo", "Lives in Osaka", 0.83),
        ("Lives in NYC", "Lives in Boston", 0.65),
        ("My manager is Tom", "My manager is Ana", 0.64),
        ("Lives in New York", "Lives in New Jersey", 0.73),
    ],
)
def test_a_new_value_of_a_one_value_slot_still_supersedes(old: str, new: str, cosine: float) -> None:
    v = classify(new, old, cosine)
    assert (v.relation, v.action) == ("update", "supersede"), v


def test_new_in_a_place_name_is_not_a_change_cue() -> None:
    assert read("Lives in New York City").cues == ()
    assert read("Got a new job at Stripe").cues == ("new",)


@pytest.mark.parametrize(
    ("old", "new", "cosine"),
    [
        ("I like hot showers", "I don't like cold showers", 0.75),
        ("Likes quiet cafes", "Doesn't like noisy cafes", 0.84),
        ("Prefers small teams", "Doesn't enjoy big teams", 0.67),
        ("I'm not a fan of cold weather", "I prefer warm weather", 0.72),
    ],
)
def test_denying_the_opposite_is_the_same_fact_offered_as_a_merge(old: str, new: str, cosine: float) -> None:
    v = classify(new, old, cosine)
    assert (v.relation, v.action) == ("paraphrase", "review"), v


@pytest.mark.parametrize(
    ("old", "new", "cosine"),
    [
        ("I'm allergic to peanuts", "I can't eat peanuts", 0.77),
        ("Vegetarian", "Eats meat", 0.55),
    ],
)
def test_a_denial_in_other_words_without_a_cue_is_asked(old: str, new: str, cosine: float) -> None:
    v = classify(new, old, cosine)
    assert v.action == "review", v


@pytest.mark.parametrize(
    ("old", "new", "cosine"),
    [
        ("I eat meat", "I don't eat meat", 0.80),
        ("Prefers light mode", "Prefers dark mode", 0.85),
        ("I drink coffee every morning", "I don't drink coffee", 0.75),
        ("Likes to work late at night", "I no longer like working late at night", 0.80),
    ],
)
def test_the_same_sentence_turned_round_still_supersedes(old: str, new: str, cosine: float) -> None:
    v = classify(new, old, cosine)
    assert (v.relation, v.action) == ("reversal", "supersede"), v


def test_two_negations_cancel_out() -> None:
    assert "breakfast" not in read("I never skip breakfast").negated
    assert "breakfast" in read("I skip breakfast").negated
    assert "berlin" not in read("Never left Berlin").negated


@pytest.mark.parametrize("text", ["I rarely drink", "I hardly ever drink", "I almost never drink"])
def test_not_often_is_neither_yes_nor_no(text: str) -> None:
    r = read(text)
    assert "drink" in r.hedged and "drink" not in r.negated


@pytest.mark.parametrize(
    ("old", "new", "cosine"),
    [
        ("I seldom watch TV", "I almost never watch television", 0.84),
        ("I rarely drink", "I hardly ever drink alcohol", 0.79),
    ],
)
def test_rarely_and_almost_never_are_a_paraphrase(old: str, new: str, cosine: float) -> None:
    v = classify(new, old, cosine)
    assert v.relation == "paraphrase" and v.action in ("merge", "review"), v


@pytest.mark.parametrize(("word", "value"), [("thirty-four", "34"), ("ninety-nine", "99"), ("sixteen", "16")])
def test_number_words_are_read_as_numbers(word: str, value: str) -> None:
    assert number_term(word) == value


def test_left_handed_is_not_leaving_a_job() -> None:
    assert read("Is left-handed").slot("employer") is None
    assert read("Left Google in May").slot("employer") is not None


def test_an_alias_added_through_the_store_keeps_the_old_memory_current(store: Store) -> None:
    """The whole path, as `memapp memory add` runs it: the old memory stays current and the pair is
    queued for the user."""
    first = store.add_memory("I live in SF", "fact")
    second = store.add_memory("I live in San Francisco", "fact")
    assert store.get_memory(first.memory.id).valid_until is None
    assert second.memory.id == first.memory.id or store.get_memory(second.memory.id).valid_until is None


@pytest.mark.parametrize(
    ("old", "new", "cosine"),
    [
        ("I used to live in Paris", "I live in Berlin", 0.46),
        ("I work at Google", "I worked at Microsoft before that", 0.41),
        ("Grew up in Ohio", "Lives in Austin, Texas", 0.30),
    ],
)
def test_a_fact_about_the_past_stands_beside_the_present(old: str, new: str, cosine: float) -> None:
    v = classify(new, old, cosine)
    assert v.action == "add", v


def test_having_worked_somewhere_for_years_is_the_present() -> None:
    assert "past" not in read("I've worked at Google for 5 years").qualifiers
    assert "past" in read("I worked at Google for 5 years").qualifiers


@pytest.mark.parametrize(
    ("old", "new", "cosine"),
    [
        ("Our backend runs on Python 3.12", "Our deploy scripts still use Python 3.9", 0.61),
        ("The API uses Postgres 16", "The API uses Postgres 15", 0.95),
    ],
)
def test_an_older_version_without_a_cue_is_asked(old: str, new: str, cosine: float) -> None:
    v = classify(new, old, cosine)
    assert v.action == "review", v


@pytest.mark.parametrize(
    ("old", "new", "cosine", "action"),
    [
        ("I teach math", "I teach physics too", 0.76, "add"),
        ("I work at Google", "I also work at a startup on Fridays", 0.30, "review"),
        ("My partner is Sam", "My business partner is Lee", 0.55, "add"),
    ],
)
def test_one_more_is_never_in_the_old_ones_place(old: str, new: str, cosine: float, action: str) -> None:
    v = classify(new, old, cosine)
    assert v.action == action, v
