"""Writes the demo's vectors (data/demo.vectors.json, read by store.importing.demo.load_demo) with the
real model. Regenerate it after changing data/demo.json or the way summaries/suggestions pick sentences
(tests/store/test_demo_vectors.py says when it is stale):

    .venv/bin/python -m store.importing.demo_vectors
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from embeddings.embedder import Embedder, Span
from embeddings.precomputed import write_table
from store.importing.demo import DEMO_VECTORS, load_demo
from store.store import Store


class _Recorder:
    """An Embedder that remembers every text it embedded, and its vector."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name, self.dimension, self.max_tokens = inner.name, inner.dimension, inner.max_tokens
        self.texts: list[str] = []
        self.vectors: list[np.ndarray] = []

    @property
    def loaded(self) -> bool:
        return self.inner.loaded

    def load(self) -> None:
        self.inner.load()

    def chunk(self, text: str) -> list[Span]:
        return self.inner.chunk(text)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        out = self.inner.embed_documents(texts)
        self.texts += list(texts)
        self.vectors += list(out)
        return out

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]


def write_demo_vectors(dest: Path, embedder: Embedder | None = None) -> int:
    """Load the demo into a scratch database with the real model, recording every text embedded; write
    their vectors to `dest`. Returns how many texts."""
    from embeddings.onnx_embedder import make_embedder

    recorder = _Recorder(embedder or make_embedder())
    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "chat.db", embedder=recorder) as store:
        load_demo(store, use_shipped_vectors=False)
    write_table(dest, recorder.name, recorder.dimension, recorder.texts, np.stack(recorder.vectors))
    return len(set(recorder.texts))


if __name__ == "__main__":
    target = Path(__file__).resolve().parents[2] / "data" / DEMO_VECTORS
    print(f"{write_demo_vectors(target)} texts -> {target}")
