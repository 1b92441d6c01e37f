"""The retrieval evaluation with the real model: hybrid must beat keyword-only and vector-only at k=10.

Runs bench/eval_search.py's own code on bench/eval (32 threads, 400 messages, 86 questions), so the test
and the numbers in the README come from one implementation. The ~400 messages are embedded once per
module.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from embeddings import SentenceTransformerEmbedder
from store import Store

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.model


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("eval_search", ROOT / "bench" / "eval_search.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["eval_search"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return _bench()


@pytest.fixture(scope="module")
def eval_store(
    tmp_path_factory: pytest.TempPathFactory, real_embedder: SentenceTransformerEmbedder, bench: ModuleType
) -> Iterator[Store]:
    store = bench.build_store(tmp_path_factory.mktemp("eval") / "chat.db", embedder=real_embedder)
    yield store
    store.close()


@pytest.fixture(scope="module")
def report(eval_store: Store, bench: ModuleType) -> dict[str, Any]:
    result: dict[str, Any] = bench.evaluate(eval_store)
    return result


def test_eval_set_is_loaded_completely(report: dict[str, Any]) -> None:
    assert report["dataset"] == {"threads": 32, "messages": 400, "questions": 86}
    assert report["model"] == "sentence-transformers/all-MiniLM-L6-v2"


def test_hybrid_beats_both_single_retrievers_at_10(report: dict[str, Any]) -> None:
    hybrid, keyword, vector = report["hybrid"], report["keyword"], report["vector"]
    assert hybrid["recall@10"] > keyword["recall@10"], report
    assert hybrid["recall@10"] > vector["recall@10"], report
    assert hybrid["recall@5"] > max(keyword["recall@5"], vector["recall@5"]), report
    assert hybrid["mrr"] > max(keyword["mrr"], vector["mrr"]), report


def test_chinese_questions_are_answered_by_keyword_despite_an_english_model(report: dict[str, Any]) -> None:
    by_type = report["by_type"]
    assert (
        by_type["hybrid"]["cjk"]["recall@10"]
        >= by_type["keyword"]["cjk"]["recall@10"]
        > (by_type["vector"]["cjk"]["recall@10"])
    )


def test_batch_cli_loads_the_model_once_and_answers_each_line(
    eval_store: Store, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import json

    from app.cli import main

    queries = tmp_path / "q.jsonl"
    queries.write_text(
        '{"query": "Comandante C40 grinder price", "scope": "messages", "k": 3}\n'
        '{"query": "which nut is the user allergic to", "k": 5}\n'
        '{"query": "熊猫基地几点去比较好", "scope": "messages", "k": 2}\n',
        encoding="utf-8",
    )
    code = main(["--db", str(eval_store.path), "search", "--batch", str(queries), "--no-touch"])
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == 0 and len(lines) == 3
    assert [r["external_id"] for r in lines[0]["results"]][0] == "s08-m03"
    assert lines[0]["mode"] == "hybrid" and lines[0]["notice"] is None
    assert len(lines[1]["results"]) == 5
    assert "熊猫基地" in lines[2]["results"][0]["content"]
