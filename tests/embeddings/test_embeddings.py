"""The real all-MiniLM-L6-v2 loads from the installed package with the network refused, and means something."""

from __future__ import annotations

import numpy as np
import pytest

from embeddings import FakeEmbedder, SentenceTransformerEmbedder
from embeddings.embedder import windows


def test_facts_read_without_loading_torch() -> None:
    emb = SentenceTransformerEmbedder()
    assert (emb.name, emb.dimension, emb.max_tokens) == ("sentence-transformers/all-MiniLM-L6-v2", 384, 256)


@pytest.mark.model
def test_real_model_embeds_offline_and_similar_scores_higher(
    real_embedder: SentenceTransformerEmbedder,
) -> None:
    vecs = real_embedder.embed_documents(
        [
            "How do I back up my photos to an external drive?",
            "What is the best way to make a backup copy of my pictures on a USB disk?",
            "The recipe needs two eggs and a cup of flour.",
        ]
    )
    assert vecs.dtype == np.float32 and vecs.shape == (3, 384)
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    similar = float(vecs[0] @ vecs[1])
    unrelated = float(vecs[0] @ vecs[2])
    assert similar > 0.6 and unrelated < 0.2 and similar > unrelated + 0.4
    q = real_embedder.embed_query("backing up pictures")
    assert q.shape == (384,) and float(q @ vecs[1]) > float(q @ vecs[2])


def test_long_text_is_chunked_within_the_model_input(real_embedder: SentenceTransformerEmbedder) -> None:
    text = " ".join(f"sentence number {i} talks about topic {i % 7}." for i in range(300))
    spans = real_embedder.chunk(text)
    assert len(spans) > 3
    assert spans[0][0] == 0 and spans[-1][1] == len(text)
    tok = real_embedder._word_pieces()
    for (a, b), nxt in zip(spans, spans[1:] + [None], strict=True):
        assert len(tok.encode(text[a:b], add_special_tokens=False).ids) <= real_embedder.chunk_tokens + 2
        if nxt is not None:
            assert nxt[0] < b  # overlap: the next chunk starts before this one ends
    assert real_embedder.chunk("short text") == [(0, 10)]
    assert real_embedder.chunk("   ") == []


def test_windows_cover_everything_with_overlap() -> None:
    assert windows(5, 10, 2) == [(0, 5)]
    w = windows(25, 10, 2)
    assert w[0] == (0, 10) and w[-1][1] == 25
    assert all(b[0] < a[1] for a, b in zip(w, w[1:], strict=False))


def test_fake_embedder_is_deterministic_and_meaningful() -> None:
    e = FakeEmbedder()
    a, b, c = e.embed_documents(["red apples and pears", "red apples and pears!", "tax law in Norway"])
    assert np.array_equal(a, FakeEmbedder().embed_query("red apples and pears"))
    assert float(a @ b) > 0.99 and float(a @ c) < 0.5
