"""Vectors made ahead of time, served by text, so that a known input set needs no model at all.

Why: the TUI's "load demo" embeds about a thousand texts (message chunks, memories, then the sentences
its summaries and suggestions weigh); even with onnxruntime that is seconds of CPU plus loading the
model, and with torch it was over a minute on a busy machine. The demo ships these vectors beside it
(data/demo.vectors.json: the model's name and dimension, and per text a key and a float16 vector), made
by the same model; `PrecomputedEmbedder` answers from that table and asks the real embedder only for a
text it does not know (loading it only then). The table is used only when its model name and dimension
are the configured model's, so vectors from two models are never mixed.

Keys are the first 16 bytes of the text's sha256 (hex): texts are never stored twice, and a changed
demo simply misses (and is embedded by the model, as before).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from embeddings.embedder import Embedder, Span, _normalise

FORMAT = "memapp-precomputed-vectors"


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


class PrecomputedEmbedder:
    """An Embedder that serves known texts from a table and passes the rest to `inner`."""

    def __init__(self, inner: Embedder, table: dict[str, np.ndarray]) -> None:
        self.inner = inner
        self.table = table
        self.name = inner.name
        self.dimension = inner.dimension
        self.max_tokens = inner.max_tokens
        self.hits = 0
        self.misses = 0

    @property
    def loaded(self) -> bool:
        return True  # nothing to load for the table; `inner` loads itself on its first miss

    def load(self) -> None:
        return None

    def chunk(self, text: str) -> list[Span]:
        return self.inner.chunk(text)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        missing = []
        for i, text in enumerate(texts):
            vec = self.table.get(text_key(text))
            if vec is None:
                missing.append(i)
            else:
                out[i] = vec
        self.hits += len(texts) - len(missing)
        self.misses += len(missing)
        if missing:
            out[missing] = self.inner.embed_documents([texts[i] for i in missing])
        return _normalise(out) if len(texts) else out

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]


def table_model(path: Path) -> str | None:
    """The name of the model that made the vectors in `path`, or None when it cannot be read."""
    try:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return str(data["model"]) if data.get("format") == FORMAT and data.get("model") else None


def read_table(path: Path, name: str, dimension: int) -> dict[str, np.ndarray] | None:
    """The vectors in `path`, or None when it is missing, unreadable, or made by another model."""
    try:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if data.get("format") != FORMAT or data.get("model") != name or data.get("dimension") != dimension:
        return None
    keys = list(data.get("keys") or [])
    raw = base64.b64decode(str(data.get("vectors_f16", "")))
    matrix = np.frombuffer(raw, dtype="<f2")
    if matrix.size != len(keys) * dimension:
        return None
    rows = matrix.reshape(len(keys), dimension).astype(np.float32)
    return dict(zip(keys, rows, strict=True))


def write_table(path: Path, name: str, dimension: int, texts: Sequence[str], vectors: np.ndarray) -> None:
    """Write `texts`' vectors (float16; a cosine of >= 0.9999 to the float32 ones) atomically."""
    keys: dict[str, int] = {}
    for i, text in enumerate(texts):
        keys.setdefault(text_key(text), i)
    order = sorted(keys)
    matrix = np.asarray(vectors, dtype=np.float32)[[keys[k] for k in order]].astype("<f2")
    data = {
        "format": FORMAT,
        "model": name,
        "dimension": int(dimension),
        "keys": order,
        "vectors_f16": base64.b64encode(matrix.tobytes()).decode("ascii"),
    }
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as fp:
        json.dump(data, fp, separators=(",", ":"))
    os.chmod(tmp, 0o644)  # a data file shipped with the app, readable by all
    os.replace(tmp, path)
