"""The demo's vectors, shipped beside it (data/demo.vectors.json), so "load demo" needs no model.

`load_demo` wraps the store's embedder in an embeddings.precomputed.PrecomputedEmbedder over this file
while it imports, summarises and finds suggestions; the file is used only when it was made by the
configured model (same name and dimension). Regenerate it after changing data/demo.json or the way
summaries/suggestions pick sentences (tests/store/test_demo_vectors.py says when it is stale):

    .venv/bin/python -m store.importing.demo_vectors
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from embeddings.data_files import data_file
from embeddings.embedder import Embedder, Span
from embeddings.precomputed import PrecomputedEmbedder, read_table, table_model, write_table
from store.store import Store

DEMO_VECTORS = "demo.vectors.json"


@contextmanager
def demo_vectors(store: Store) -> Iterator[PrecomputedEmbedder | None]:
    """While inside, the store's embedder answers the demo's texts from the shipped vectors (None when
    there is no usable file or no usable model)."""
    inner = store.embedder
    path = data_file(DEMO_VECTORS)
    table = None
    if inner is not None and path is not None and store.vector_problem is None:
        table = read_table(path, inner.name, inner.dimension)
        switch = getattr(inner, "use_model_of", None)
        made_by = table_model(path) if table is None else None
        # The same model at the other precision (float32 / int8): a database with no vectors yet takes the
        # demo's, so loading the demo still needs no model (store.core says when an embedder switches).
        if made_by and store.vectors.recorded_model() is None and callable(switch) and switch(made_by):
            table = read_table(path, inner.name, inner.dimension)
    if inner is None or table is None:
        yield None
        return
    wrapper = PrecomputedEmbedder(inner, table)
    store.embedder = wrapper
    try:
        yield wrapper
    finally:
        if store.embedder is wrapper:
            store.embedder = inner


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
    from store.importing.pipeline import load_demo

    recorder = _Recorder(embedder or make_embedder())
    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "chat.db", embedder=recorder) as store:
        load_demo(store, use_shipped_vectors=False)
    write_table(dest, recorder.name, recorder.dimension, recorder.texts, np.stack(recorder.vectors))
    return len(set(recorder.texts))


if __name__ == "__main__":
    target = Path(__file__).resolve().parents[2] / "data" / DEMO_VECTORS
    print(f"{write_demo_vectors(target)} texts -> {target}")
