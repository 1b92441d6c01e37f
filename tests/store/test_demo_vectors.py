"""The demo arrives with its vectors: "load demo" embeds nothing when the configured model made them
(issue 19), and ignores them for any other model."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from embeddings import FakeEmbedder
from embeddings.data_files import data_file
from embeddings.onnx_embedder import OnnxEmbedder
from embeddings.precomputed import PrecomputedEmbedder, read_table, text_key, write_table
from store import Store
from store.importing import load_demo
from store.importing.demo import DEMO_VECTORS


class NoModel(OnnxEmbedder):
    """The real model's name, dimension and chunking, but asking it for a vector is an error."""

    def load(self) -> None:
        raise AssertionError("the model was loaded")

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        raise AssertionError(f"the model was asked for {len(texts)} vectors, e.g. {texts[0][:60]!r}")


def test_load_demo_needs_no_model(db_path: Path) -> None:
    emb = NoModel()
    with Store(db_path, embedder=emb) as store:
        report = load_demo(store)
        assert report.ok and report.threads_added >= 5
        assert store.embedder is emb  # the shipped vectors were only borrowed
        chunks = store.scalar("SELECT count(*) FROM message_chunks")
        assert chunks > 0 and store.scalar("SELECT count(*) FROM vec_chunks") == chunks
        memories = store.scalar("SELECT count(*) FROM long_term_memories WHERE deleted_at IS NULL")
        assert store.scalar("SELECT count(*) FROM vec_memories") == memories > 0
        assert store.semantic_state == "not loaded"  # never touched
        details = [str(r[0]) for r in store.con.execute("SELECT details FROM compression_history")]
        assert details and all('"embedding"' in d for d in details)  # summaries used the shipped vectors


def test_shipped_vectors_are_ignored_for_another_model(db_path: Path) -> None:
    path = data_file(DEMO_VECTORS)
    assert path is not None
    assert read_table(path, "sentence-transformers/all-MiniLM-L6-v2 (int8)", 384)  # the default encoder
    assert read_table(path, "sentence-transformers/all-MiniLM-L6-v2", 384) is None  # float32: switches
    assert read_table(path, "fake-hash-embedder", 64) is None
    assert read_table(path, "sentence-transformers/all-MiniLM-L6-v2 (int8)", 768) is None
    fake = FakeEmbedder()
    with Store(db_path, embedder=fake) as store:
        load_demo(store)
        assert fake.calls > 0  # another model: its own vectors, made by it


def test_precomputed_table_round_trip_and_misses(tmp_path: Path) -> None:
    fake = FakeEmbedder()
    texts = ["alpha beta", "gamma", "数据库 backup"]
    vecs = fake.embed_documents(texts)
    path = tmp_path / "v.json"
    write_table(path, fake.name, fake.dimension, texts, vecs)
    table = read_table(path, fake.name, fake.dimension)
    assert table is not None and set(table) == {text_key(t) for t in texts}
    wrapped = PrecomputedEmbedder(fake, table)
    calls = fake.calls
    out = wrapped.embed_documents(["gamma", "not shipped", "alpha beta"])
    assert fake.calls == calls + 1 and (wrapped.hits, wrapped.misses) == (2, 1)  # one call, for the miss
    assert float(out[0] @ vecs[1]) == pytest.approx(1.0, abs=1e-4)  # float16 storage
    np.testing.assert_allclose(out[1], fake.embed_query("not shipped"), atol=1e-6)


@pytest.mark.parametrize("precision", ["float32", "int8"])
def test_a_new_database_takes_the_demos_precision(db_path: Path, precision: str) -> None:
    path = data_file(DEMO_VECTORS)
    assert path is not None
    emb = NoModel(precision=precision)
    with Store(db_path, embedder=emb) as store:
        report = load_demo(store)
        assert report.ok and store.scalar("SELECT count(*) FROM vec_chunks") > 0
        made_by = str(path.read_text(encoding="utf-8")).split('"model":"', 1)[1].split('"', 1)[0]
        assert emb.name == made_by and store.vectors.recorded_model() == (made_by, 384)
