"""The onnxruntime encoder gives sentence-transformers' vectors, keeps its ONNX copy safely, falls back
when it cannot run, and keeps torch out of the CLI process (issue 19)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from embeddings import SentenceTransformerEmbedder
from embeddings import onnx_embedder as onnx_mod
from embeddings.onnx_embedder import OnnxEmbedder, pool, pooling_mode
from embeddings.onnx_export import ensure_onnx, model_hash, onnx_path
from embeddings.onnx_quantize import INT8_PLAN

ROOT = Path(__file__).resolve().parents[2]


def varied_texts() -> list[str]:
    """A few hundred texts of every kind the app embeds: English prose, Chinese, code, single words,
    mixed scripts, punctuation, and inputs far past the model's 256 word pieces."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    paras = [p.strip() for p in readme.split("\n\n") if len(p.strip()) > 40][:150]
    code = []
    for src in sorted((ROOT / "store").glob("*.py"))[:14]:
        lines = [ln for ln in src.read_text(encoding="utf-8").splitlines() if ln.strip()]
        code += ["\n".join(lines[i : i + 6]) for i in range(0, min(len(lines), 60), 6)]
    chinese = [
        "我们决定用 SQLite 存储所有的对话记录。",
        "下一步是把备份脚本改成每天凌晨三点运行。",
        "我更喜欢深色主题，字体大一点。",
        "这个函数的时间复杂度是多少？",
        "记得周五之前把报告发给老板。",
        "向量搜索和关键词搜索结合起来效果更好。",
        "他说明天会下雨，所以我们改在室内开会。",
        "请把这段代码翻译成 Rust。",
    ]
    chinese += [a + b for a, b in zip(chinese, reversed(chinese), strict=True)]
    words = ["backup", "a", "PostgreSQL", "数据库", "🙂", "x", "??", "naïve", "Kubernetes", "TODO", "42", "é"]
    mixed = [
        "Use `pip install onnxruntime` then 运行 the test — it should pass.",
        "Ünïcödé façade: crème brûlée, smörgåsbord, Ελληνικά, русский текст.",
        "SELECT id, content FROM messages WHERE thread_id = ? ORDER BY seq;",
        "def f(x):\n    return {k: v for k, v in x.items() if v}\n",
        "   leading and trailing spaces   ",
        "line one\nline two\n\nline four\ttabbed",
    ]
    long_en = " ".join(paras)
    long_zh = "".join(chinese) * 8
    long_code = "\n".join(code)
    longs = [long_en[i * 3000 : i * 3000 + 4000] for i in range(6)] + [long_zh, long_code[:6000]]
    texts = paras + code + chinese + words + mixed + longs
    return [t for t in texts if t.strip()]


@pytest.fixture(scope="module")
def onnx_embedder() -> OnnxEmbedder:
    emb = OnnxEmbedder()
    emb.load()
    return emb


@pytest.mark.model
def test_onnx_vectors_match_sentence_transformers(
    onnx_embedder: OnnxEmbedder, real_embedder: SentenceTransformerEmbedder
) -> None:
    texts = varied_texts()
    assert len(texts) >= 250
    assert onnx_embedder.backend == "onnx", onnx_embedder.backend_problem
    assert onnx_embedder.name == real_embedder.name and onnx_embedder.dimension == real_embedder.dimension
    # Some inputs are well past the model's input length (truncated the same way by both).
    assert max(len(onnx_embedder.chunk(t)) for t in texts) > 1
    ours = onnx_embedder.embed_documents(texts)
    ref = real_embedder.embed_documents(texts)
    assert ours.dtype == np.float32 and ours.shape == ref.shape == (len(texts), 384)
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    cos = (ours * ref).sum(axis=1)
    worst = int(np.argmin(cos))
    assert cos.min() >= 0.999, (cos.min(), texts[worst][:80])
    # A query alone (one thread, no batch padding) is the same vector as inside a batch.
    for i in (0, len(texts) - 1, texts.index("backup")):
        assert float(onnx_embedder.embed_query(texts[i]) @ ref[i]) >= 0.999


# The int8 encoder is a different function from float32 (int8 weights and activations), so it is not held
# to cosine >= 0.999. What is held here: every text near sentence-transformers' vector, and a text's vector
# the same alone and inside a batch. What int8 costs search is measured on the evaluation by
# bench/tune/quantize.py (README "Benchmarks"), which is what decided that it ships.
INT8_MIN_COS, INT8_MEAN_COS = 0.96, 0.985  # measured: min 0.975 ("数据库"), mean 0.993


@pytest.fixture(scope="module")
def int8_embedder() -> OnnxEmbedder:
    emb = OnnxEmbedder(precision="int8")
    emb.load()
    return emb


@pytest.mark.model
def test_int8_vectors_stay_near_sentence_transformers_and_do_not_depend_on_the_batch(
    int8_embedder: OnnxEmbedder, real_embedder: SentenceTransformerEmbedder
) -> None:
    assert int8_embedder.backend == "onnx", int8_embedder.backend_problem
    assert int8_embedder.name == real_embedder.name + " (int8)"
    texts = varied_texts()
    ours = int8_embedder.embed_documents(texts)
    ref = real_embedder.embed_documents(texts)
    cos = (ours * ref).sum(axis=1)
    worst = int(np.argmin(cos))
    assert cos.min() >= INT8_MIN_COS, (cos.min(), texts[worst][:80])
    assert cos.mean() >= INT8_MEAN_COS, cos.mean()
    assert cos.mean() < 0.9999  # really the int8 model, not the float32 one
    # One text per call: a query embedded alone is the vector the same text got inside a batch.
    for i in (0, len(texts) // 2, len(texts) - 1, texts.index("backup")):
        np.testing.assert_allclose(int8_embedder.embed_query(texts[i]), ours[i], atol=1e-6)
    path = onnx_path(int8_embedder.path, "int8")
    assert path.is_file() and INT8_PLAN in path.name and stat.S_IMODE(path.stat().st_mode) == 0o600


@pytest.mark.model
def test_onnx_copy_is_cached_by_model_hash_private_and_reused(onnx_embedder: OnnxEmbedder) -> None:
    path = onnx_path(onnx_embedder.path)
    assert path.is_file()
    assert model_hash(onnx_embedder.path)[:16] in path.name
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]  # no half-written copy left
    before = path.stat().st_mtime_ns
    assert ensure_onnx(onnx_embedder.path) == path and path.stat().st_mtime_ns == before  # not redone


def test_model_hash_follows_the_weights_and_is_remembered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMAPP_CACHE_DIR", str(tmp_path / "cache"))
    model = tmp_path / "my-model"
    model.mkdir()
    (model / "config.json").write_text('{"hidden_size": 8}')
    (model / "model.safetensors").write_bytes(b"weights-1")
    first = model_hash(model)
    assert len(first) == 64 and first in {
        p.read_text() for p in (tmp_path / "cache" / "onnx" / "stamps").iterdir()
    }
    assert model_hash(model) == first
    for folder in ("cache", "cache/onnx", "cache/onnx/stamps"):  # made private, whatever the umask
        assert stat.S_IMODE((tmp_path / folder).stat().st_mode) == 0o700, folder
    (model / "model.safetensors").write_bytes(b"weights-22")  # other weights (other size): other hash
    second = model_hash(model)
    assert second != first
    assert onnx_path(model).name.startswith("my-model-" + second[:16])


def test_pooling_modes_and_what_cannot_be_reproduced(tmp_path: Path) -> None:
    tokens = np.array([[[1.0, 0.0], [3.0, 2.0], [100.0, 100.0]]], dtype=np.float32)
    mask = np.array([[1, 1, 0]])
    np.testing.assert_allclose(pool(tokens, mask, "mean"), [[2.0, 1.0]])  # padding ignored
    np.testing.assert_allclose(pool(tokens, mask, "cls"), [[1.0, 0.0]])
    np.testing.assert_allclose(pool(tokens, mask, "max"), [[3.0, 2.0]])
    model = tmp_path / "m"
    (model / "1_Pooling").mkdir(parents=True)
    (model / "1_Pooling" / "config.json").write_text('{"pooling_mode_cls_token": true}')
    assert pooling_mode(model) == "cls"
    (model / "modules.json").write_text(json.dumps([{"type": "sentence_transformers.models.Dense"}]))
    assert pooling_mode(model) is None  # a Dense layer: sentence-transformers runs this model


@pytest.mark.model
def test_a_failed_export_falls_back_to_sentence_transformers(
    monkeypatch: pytest.MonkeyPatch,
    real_embedder: SentenceTransformerEmbedder,
    caplog: pytest.LogCaptureFixture,
) -> None:
    def broken(model_dir: Path, timeout: float = 0, precision: str = "float32") -> Path:
        raise RuntimeError("ONNX export failed: no space left")

    monkeypatch.setattr("embeddings.onnx_export.ensure_onnx", broken)
    monkeypatch.setattr(onnx_mod, "_WARNED", set())
    emb = OnnxEmbedder()
    emb.load()
    assert emb.backend == "sentence-transformers" and "no space left" in (emb.backend_problem or "")
    assert "using sentence-transformers" in caplog.text
    v = emb.embed_query("backup scripts")
    assert float(v @ real_embedder.embed_query("backup scripts")) >= 0.9999
    OnnxEmbedder().load()
    assert caplog.text.count("using sentence-transformers") == 1  # said once per model
    # int8 falls back too, and then its vectors are float32 ones: its name says so (store.core refuses
    # them for a database of int8 vectors, tests/store/test_embedding_precision.py).
    emb8 = OnnxEmbedder(precision="int8")
    emb8.load()
    assert (emb8.backend, emb8.precision, emb8.name) == (
        "sentence-transformers",
        "float32",
        real_embedder.name,
    )
    assert emb8.use_model_of(real_embedder.name + " (int8)") is False


@pytest.mark.model
def test_semantic_cli_search_and_memory_add_never_import_torch(
    onnx_embedder: OnnxEmbedder, tmp_path: Path
) -> None:
    db = tmp_path / "chat.db"
    code = (
        "import json, sys\n"
        "from app.cli import main\n"
        f"db = {str(db)!r}\n"
        "main(['--db', db, 'memory', 'add', 'the nightly backup script runs at 3am', '--category', 'fact'])\n"
        "main(['--db', db, 'memory', 'add', 'I prefer dark themes with large fonts', '--category', 'preference'])\n"
        "main(['--db', db, 'search', 'when do backups happen', '--scope', 'memories', '--json'])\n"
        "print(json.dumps({'torch': 'torch' in sys.modules, 'st': 'sentence_transformers' in sys.modules,\n"
        "                  'ort': 'onnxruntime' in sys.modules}))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "MEMAPP_EMBED_BACKEND"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env, check=True
    )
    lines = out.stdout.strip().splitlines()
    assert json.loads(lines[-1]) == {"torch": False, "st": False, "ort": True}
    assert "backup" in out.stdout  # the semantic hit is the backup memory
