"""The default embedder: the sentence-transformers model run through onnxruntime, with no torch.

Why: loading torch + transformers to embed one query costs about 6 s of CPU and 300 MB; onnxruntime
runs the same weights (an ONNX copy, see embeddings.onnx_export) with the model's own Rust tokenizer in
a tenth of that, giving the same vectors (cosine >= 0.999 per text against sentence-transformers,
tests/embeddings/test_onnx.py). What sentence-transformers does around the transformer is repeated
here: truncation at the model's `max_seq_length` (not the 128 baked into tokenizer.json), padding to the
longest text of a batch, mean pooling over the attention mask, L2 normalisation. A model directory this
code cannot reproduce (pooling other than mean/CLS/max, extra Dense layers) and any failure of
onnxruntime or of the export fall back to sentence-transformers, said once in the log and in
`backend_problem`: the float32 vectors are the same model's either way, so the database never notices.

Precision: the default is the model's int8 copy (embeddings.onnx_quantize), three times float32's
chunks per CPU-second at a measured search cost within 0.01 recall@10. Its vectors are close to
float32's, not equal, so they are recorded under their own name ("... (int8)"), a database keeps the
precision it was embedded with (`use_model_of`, called by store.core when the recorded name is this
model's other precision), and after a fallback to sentence-transformers the name says float32. int8
runs one text per call: its activation scales are per call, so in a batch a vector would depend on its
neighbours.

Threads: a single query runs on one intra-op thread (on a busy shared machine a second thread turned a
15 ms query into 1.2 s of waiting); bulk encoding (imports, `memapp embed`) runs sub-batches on two
threads at once (onnxruntime releases the GIL), over one shared session: one copy of the weights.
Texts are sorted by token length before batching, so a batch pads little.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from embeddings.embedder import SentenceTransformerEmbedder, _normalise, default_model_dir, model_text

log = logging.getLogger(__name__)

BULK_THREADS = 2  # imports: sub-batches encoded on this many threads at once
PRECISIONS = ("float32", "int8")
# float32 batches hold at most this many word pieces (padded): long texts go one per call (no padding, small
# tensors: 1.25x the chunks per CPU-second of batches of 32), short ones share a call (a call per 8-word
# message costs 1.5x). bench/tune/quantize.py measured both.
BATCH_TOKENS = 256
_SESSIONS: dict[str, Any] = {}  # one onnxruntime session per ONNX file per process
_SESSIONS_LOCK = threading.Lock()
_WARNED: set[str] = set()
_SUPPORTED_MODULES = ("models.Transformer", "models.Pooling", "models.Normalize")


def pooling_mode(model_dir: Path) -> str | None:
    """'mean', 'cls' or 'max' when this code can reproduce the model's modules, else None."""
    modules_file = model_dir / "modules.json"
    if modules_file.is_file():
        for module in json.loads(modules_file.read_text()):
            if not str(module.get("type", "")).endswith(_SUPPORTED_MODULES):
                return None
    pools = sorted(model_dir.glob("*_Pooling/config.json"))
    if not pools:
        return "mean"  # sentence-transformers' default for a bare transformer directory
    cfg = json.loads(pools[0].read_text())
    modes = [m for m in ("mean_tokens", "cls_token", "max_tokens") if cfg.get(f"pooling_mode_{m}")]
    other = [
        k
        for k, v in cfg.items()
        if k.startswith("pooling_mode_") and v and k[13:] not in ("mean_tokens", "cls_token", "max_tokens")
    ]
    if len(modes) != 1 or other:
        return None
    return {"mean_tokens": "mean", "cls_token": "cls", "max_tokens": "max"}[modes[0]]


def pool(tokens: np.ndarray, mask: np.ndarray, mode: str) -> np.ndarray:
    """Token embeddings (batch, seq, dim) -> one vector per text, as sentence-transformers pools."""
    if mode == "cls":
        return np.asarray(tokens[:, 0], dtype=np.float32)
    m = mask[:, :, None].astype(np.float32)
    if mode == "max":
        return np.asarray(np.where(m > 0, tokens, -1e9).max(axis=1), dtype=np.float32)
    summed = (tokens * m).sum(axis=1)
    return np.asarray(summed / np.maximum(m.sum(axis=1), 1e-9), dtype=np.float32)


class OnnxEmbedder(SentenceTransformerEmbedder):
    """Same model, name, dimension and chunking as SentenceTransformerEmbedder; encoding by onnxruntime.

    `backend` says which runtime is in use after load(): "onnx" or "sentence-transformers" (fallback).
    """

    def __init__(
        self,
        model_dir: str | Path | None = None,
        *,
        batch_size: int = 32,
        chunk_tokens: int = 200,
        chunk_overlap: int = 40,
        query_threads: int = 1,
        bulk_threads: int = BULK_THREADS,
        precision: str = "float32",
        onnx_file: Path | None = None,
    ) -> None:
        super().__init__(
            model_dir, batch_size=batch_size, chunk_tokens=chunk_tokens, chunk_overlap=chunk_overlap
        )
        self.query_threads = max(1, query_threads)
        self.bulk_threads = max(1, bulk_threads)
        self.backend: str | None = None
        self.backend_problem: str | None = None
        self._session: Any = None
        self._batch_tok: Any = None
        self._pool: ThreadPoolExecutor | None = None
        self._pad_id = 0
        self._mode = pooling_mode(self.path)
        self.onnx_file = onnx_file  # run this ONNX file instead of the cached export (bench/tune/quantize.py)
        self.batch_tokens = BATCH_TOKENS
        if precision not in PRECISIONS:
            raise ValueError(f"embedding precision must be one of {', '.join(PRECISIONS)}, not {precision!r}")
        self.float_name = self.name
        self.precision = precision
        self.name = self.name_for(precision)
        self.configured_name = self.name  # what `memapp reindex` rebuilds with (use_model_of may switch)

    @staticmethod
    def default_dir() -> Path | None:
        """The copy memapp ships (float16 weights, written to ONNX without torch)."""
        return default_model_dir()

    @property
    def loaded(self) -> bool:
        return self._session is not None or self._model is not None

    def load(self) -> None:
        """Make the ONNX copy if needed (a child process, once per model), open it; on any failure use
        sentence-transformers instead. Idempotent, thread-safe."""
        with self._lock:
            if self.loaded:
                return
            try:
                self._session = self._open_session()
                self._batch_tok = self._make_batch_tokenizer()
                self.backend = "onnx"
                return
            except Exception as exc:
                self.backend_problem = f"onnxruntime unavailable ({exc}); using sentence-transformers"
                if str(self.path) not in _WARNED:
                    _WARNED.add(str(self.path))
                    log.warning("%s", self.backend_problem)
                # sentence-transformers computes float32 vectors: say so in the name, so the database's
                # recorded-model check refuses to mix them into int8 vectors (store.core.embed_texts).
                self.precision, self.name = "float32", self.float_name
        super().load()
        self.backend = "sentence-transformers"

    def name_for(self, precision: str) -> str:
        """The model name vectors of this precision are recorded under: int8 vectors are close to
        float32 ones (cosine ~0.99) but not the same, so a database holds one kind only."""
        return self.float_name if precision == "float32" else f"{self.float_name} (int8)"

    def use_model_of(self, recorded: str) -> bool:
        """Switch to the precision a database's vectors were made with, when they are this model's
        (float32 or int8); False when they are not, or when that precision cannot run here (int8 after
        the sentence-transformers fallback). The next encoding opens the other ONNX file."""
        wanted = next((p for p in PRECISIONS if self.name_for(p) == recorded), None)
        if wanted is None:
            return False
        with self._lock:
            if wanted == self.precision:
                return True
            if self._model is not None or self.onnx_file is not None:
                return False  # sentence-transformers is float32 only; an explicit file is what it is
            self.precision, self.name = wanted, recorded
            self._session, self._batch_tok, self.backend = None, None, None
        return True

    def _open_session(self) -> Any:
        if self._mode is None:
            raise RuntimeError("the model has modules other than transformer, pooling and normalize")
        import onnxruntime as ort

        from embeddings.onnx_export import ensure_onnx

        path = self.onnx_file or ensure_onnx(self.path, precision=self.precision)
        with _SESSIONS_LOCK:
            session = _SESSIONS.get(str(path))
            if session is None:
                opts = ort.SessionOptions()
                opts.intra_op_num_threads = self.query_threads
                opts.inter_op_num_threads = 1
                opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
                opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
                opts.log_severity_level = 3
                # Waiting threads sleep instead of spinning: on a shared machine spinning is stolen CPU.
                opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
                opts.add_session_config_entry("session.inter_op.allow_spinning", "0")
                session = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
                _SESSIONS[str(path)] = session
        return session

    def _make_batch_tokenizer(self) -> Any:
        from tokenizers import Tokenizer

        tok = Tokenizer.from_file(str(self.path / "tokenizer.json"))
        # sentence-transformers truncates at max_seq_length and pads to the longest text of a batch,
        # whatever tokenizer.json says (all-MiniLM-L6-v2's says 128 and fixed-length padding). Padding
        # is done here, per batch, after sorting by length.
        tok.enable_truncation(max_length=self.max_tokens)
        tok.no_padding()
        pad_id = tok.token_to_id("[PAD]")
        self._pad_id = 0 if pad_id is None else int(pad_id)
        return tok

    def _run(self, encs: Sequence[Any]) -> np.ndarray:
        width = max(len(e.ids) for e in encs)
        ids = np.full((len(encs), width), self._pad_id, dtype=np.int64)
        mask = np.zeros((len(encs), width), dtype=np.int64)
        types = np.zeros((len(encs), width), dtype=np.int64)
        for row, e in enumerate(encs):
            n = len(e.ids)
            ids[row, :n] = e.ids
            mask[row, :n] = 1
            types[row, :n] = e.type_ids
        (tokens,) = self._session.run(
            None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        )
        assert self._mode is not None
        return pool(tokens, mask, self._mode)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        self.load()
        if self._session is None:  # the sentence-transformers fallback
            return super().embed_documents(texts)
        encs = self._batch_tok.encode_batch([model_text(t, 32 * self.max_tokens) for t in texts])
        # Sorted by length so that each batch pads little; the model sees each text exactly as alone.
        order = np.argsort([len(e.ids) for e in encs], kind="stable")
        # int8: one text per call. Its activation scales are computed per call over the whole input, so
        # inside a batch a text's vector would depend on its neighbours (and on their padding).
        batches: list[list[Any]] = []
        for i in order:
            n = len(encs[i].ids)
            last = batches[-1] if batches else None
            if (
                self.precision == "int8"
                or last is None
                or len(last) >= self.batch_size
                or (len(last) + 1) * max(n, len(last[-1].ids)) > self.batch_tokens
            ):
                batches.append([encs[i]])
            else:
                last.append(encs[i])
        if len(batches) > 1 and self.bulk_threads > 1:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.bulk_threads, thread_name_prefix="memapp-onnx")
            parts = list(self._pool.map(self._run, batches))
        else:
            parts = [self._run(b) for b in batches]
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        out[order] = np.concatenate(parts)
        return _normalise(out)


def make_embedder(
    model_dir: str | Path | None = None,
    *,
    backend: str = "onnx",
    precision: str = "int8",
    batch_size: int = 32,
    chunk_tokens: int = 200,
    chunk_overlap: int = 40,
) -> SentenceTransformerEmbedder:
    """The configured embedder: `backend` "onnx" (default, sentence-transformers as its fallback) or
    "sentence-transformers" (the reference, loads torch; float32 only); `precision` "float32" or "int8"
    (onnx only: embeddings.onnx_quantize). MEMAPP_EMBED_BACKEND overrides the backend."""
    backend = os.environ.get("MEMAPP_EMBED_BACKEND") or backend
    if backend == "sentence-transformers":
        return SentenceTransformerEmbedder(
            model_dir, batch_size=batch_size, chunk_tokens=chunk_tokens, chunk_overlap=chunk_overlap
        )
    return OnnxEmbedder(
        model_dir,
        batch_size=batch_size,
        chunk_tokens=chunk_tokens,
        chunk_overlap=chunk_overlap,
        precision=precision,
    )
