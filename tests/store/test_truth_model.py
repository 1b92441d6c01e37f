"""The classifier's thresholds with the real model (all-MiniLM-L6-v2): the issue's cases through the Store,
the demo's missed paraphrase, the labelled set's test half, and the cost of an add (one embedding)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from embeddings.embedder import SentenceTransformerEmbedder
from store import Store
from store.extract.suggestions import list_suggestions
from store.importing import load_demo

pytestmark = pytest.mark.model
ROOT = Path(__file__).resolve().parents[2]


class CountingEmbedder:
    """The real model, counting the texts it is asked to embed."""

    def __init__(self, inner: SentenceTransformerEmbedder) -> None:
        self.inner = inner
        self.name, self.dimension, self.max_tokens = inner.name, inner.dimension, inner.max_tokens
        self.texts = 0

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        self.texts += len(texts)
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> np.ndarray:
        self.texts += 1
        return self.inner.embed_query(text)

    def chunk(self, text: str) -> list[tuple[int, int]]:
        return self.inner.chunk(text)

    @property
    def loaded(self) -> bool:
        return self.inner.loaded

    def load(self) -> None:
        self.inner.load()


@pytest.fixture
def real_store(db_path: Path, real_embedder: SentenceTransformerEmbedder):  # type: ignore[no-untyped-def]
    s = Store(db_path, embedder=CountingEmbedder(real_embedder))  # type: ignore[arg-type]
    yield s
    s.close()


def test_the_reversals_from_the_issue_supersede_and_never_merge(real_store: Store) -> None:
    emb = real_store.embedder
    assert isinstance(emb, CountingEmbedder)
    uv = real_store.add_memory("I prefer uv over pip for Python projects", "preference").memory
    before = emb.texts
    swapped = real_store.add_memory("I prefer pip over uv for Python projects", "preference")
    assert emb.texts - before == 1  # one embedding per add, the classification is free
    assert swapped.action == "added" and swapped.superseded == (uv.id,)
    real_store.reinstate_memory(uv.id)
    real_store.delete_memory(swapped.memory.id)
    again = real_store.add_memory("I stopped using uv; I went back to plain pip", "preference")
    assert again.action == "added" and again.superseded == (uv.id,)
    # Saying the same thing again in other words ("pip over uv" after "stopped using uv") is not a reversal.
    same = real_store.add_memory("I prefer pip over uv for my Python work", "preference")
    assert same.action == "added" and again.memory.id not in same.superseded
    lisbon = real_store.add_memory("Lives in Lisbon", "fact").memory
    porto = real_store.add_memory("Moved to Porto", "fact")
    assert porto.superseded == (lisbon.id,)
    pg = real_store.add_memory("Uses Postgres 15 for the billing service", "project").memory
    assert real_store.add_memory("Upgraded the billing service to Postgres 17", "project").superseded == (
        pg.id,
    )
    pin = real_store.add_memory("My PIN is 1234", "fact").memory
    res = real_store.add_memory("My PIN is 9876", "fact")
    assert res.action == "added" and real_store.get_memory(pin.id).content == "My PIN is 1234"


def test_the_demo_paraphrase_is_offered_as_a_merge(real_store: Store) -> None:
    load_demo(real_store)
    [s] = [s for s in list_suggestions(real_store) if s.content.startswith("I prefer open-source tools")]
    target = real_store.get_memory(s.merge_with or -1)
    assert target.content.startswith("Prefers open-source tools that can be scripted from cron or systemd")


def test_the_issue_examples_and_the_demo_with_the_real_model(real_store: Store) -> None:
    """Issue 27's own examples through the Store with the real model, and the demo raising nothing."""
    berlin = real_store.add_memory("I live in Berlin.", "fact").memory
    assert real_store.add_memory("I moved to Lisbon last month.", "fact").superseded == (berlin.id,)
    guitar = real_store.add_memory("I play the guitar.", "skill").memory
    piano = real_store.add_memory("I play the piano.", "skill")
    assert (
        piano.superseded == ()
        and piano.conflicts == ()
        and real_store.get_memory(guitar.id).valid_until is None
    )
    son = real_store.add_memory("My son is 7 years old.", "fact").memory
    daughter = real_store.add_memory("My daughter is 4 years old.", "fact")
    assert daughter.superseded == () and real_store.get_memory(son.id).valid_until is None
    sugar = real_store.add_memory("I drink my coffee with no sugar.", "preference").memory
    assert real_store.add_memory("I drink my coffee without sugar.", "preference").memory.id == sugar.id
    meat = real_store.add_memory("I eat meat.", "fact").memory
    assert real_store.add_memory("I no longer eat meat.", "fact").superseded == (meat.id,)


def test_the_demo_raises_no_conflict_and_no_supersede(
    db_path: Path, real_embedder: SentenceTransformerEmbedder
) -> None:
    from store.truth.conflicts import list_conflicts

    s = Store(db_path, embedder=real_embedder)
    try:
        load_demo(s)
        assert s.list_memories(state="superseded") == []
        assert list_conflicts(s, status=None) == []
    finally:
        s.close()
