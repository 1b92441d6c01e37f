"""The retrieval evaluations: the long-conversation set is well-formed, its scoring is right, and (real
model) hybrid beats keyword-only and vector-only at k=10 on the small set.

The model tests run bench/quality/eval_search.py's own code on bench/eval (32 threads, 400 messages, 86
questions), so the test and the numbers in the README come from one implementation; the ~400 messages
are embedded once per module. The longmem checks are fast (no model): they validate the committed
bench/eval/longmem files with make.py's own validator, check that the committed files are exactly what
make.py writes from material/, and check the evaluation's plain-BM25 baseline and scoring on tiny data.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from embeddings import SentenceTransformerEmbedder
from store import Store

ROOT = Path(__file__).resolve().parents[2]
LONGMEM = ROOT / "bench" / "eval" / "longmem"


def _load(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _bench() -> ModuleType:
    return importlib.import_module("bench.quality.eval_search")


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return _bench()


@pytest.fixture(scope="module")
def make() -> ModuleType:
    return _load("longmem_make", LONGMEM / "make.py")


@pytest.fixture(scope="module")
def longmem() -> ModuleType:
    return importlib.import_module("bench.quality.eval_longmem")


# -- the long-conversation set: well-formed (fast, no model) ----------------------------------------


def test_longmem_set_is_valid_and_big_enough(make: ModuleType) -> None:
    conversations = make.load_jsonl(LONGMEM / "conversations.jsonl")
    questions = make.load_jsonl(LONGMEM / "questions.jsonl")
    # ids unique, answers exist in their own conversation, every kind in both halves, the paraphrase rule
    stats = make.validate(conversations, questions)
    assert stats["conversations"] >= 12 and stats["turns"] >= 4000 and stats["questions"] >= 600
    for split in ("tune", "test"):
        assert all(n > 0 for n in stats["per_kind"][split].values()), stats
    assert all((q["kind"] == "no-answer") == (not q["answers"]) for q in questions)
    # Split by conversation: each archive's questions are all in one half, and the halves are even.
    split_of: dict[str, set[str]] = {}
    for q in questions:
        split_of.setdefault(q["conversation"], set()).add(q["split"])
    assert all(len(s) == 1 for s in split_of.values()), split_of
    halves = [sum(1 for s in split_of.values() if s == {h}) for h in ("tune", "test")]
    assert halves[0] == halves[1] == len(split_of) // 2


def test_longmem_files_are_what_make_py_writes(make: ModuleType) -> None:
    conversations, questions, warnings = make.build()
    assert not warnings
    assert conversations == make.load_jsonl(LONGMEM / "conversations.jsonl")
    assert questions == make.load_jsonl(LONGMEM / "questions.jsonl")


def test_paraphrase_check_catches_a_shared_stem(make: ModuleType) -> None:
    stem = make.Stemmer()
    shared = stem.content("Where did I go running?") & stem.content("He runs a lot")
    assert shared == {"run"}  # stems are compared, not words
    assert not stem.content("What is my partner's trade?") & stem.content("My boyfriend Owen is a carpenter")
    bad = [
        {
            "id": "x-s01",
            "title": "",
            "created_at": None,
            "messages": [{"id": "x-s01-m001", "role": "user", "content": "I adopted a dog called Biscuit"}],
        }
    ]
    qs = [
        {
            "id": "x-q1",
            "conversation": "x",
            "query": "What is the dog's name?",
            "answers": ["x-s01-m001"],
            "kind": "paraphrase",
            "split": "tune",
        }
    ]
    with pytest.raises(SystemExit, match="shares"):
        make.validate(bad, qs)


def test_plain_bm25_baseline_stems_and_ranks(longmem: ModuleType) -> None:
    msgs = [
        {"id": "a", "content": "We went running along the river"},
        {"id": "b", "content": "The weather was grey"},
        {"id": "c", "content": "He runs every morning and runs again at night"},
    ]
    bm25 = longmem.PlainBM25(msgs)
    assert bm25.search("run") == ["c", "a"]  # porter: runs/running -> run; more matches rank higher
    assert bm25.search("quantum chromodynamics") == []
    assert bm25.search('"') == []


def test_scores_and_false_hit_rate(longmem: ModuleType) -> None:
    s = longmem.scores(["x", "a", "y", "z", "w", "b"], ["a", "b"])
    assert s == {"recall@5": 0.5, "recall@10": 1.0, "mrr": 0.5}
    res = [
        {
            "split": "test",
            "kind": "single",
            "lang": "en",
            "answers": ["a"],
            "returned": dict.fromkeys(longmem.RETRIEVERS, True),
            "scores": {n: {"recall@5": 1.0, "recall@10": 1.0, "mrr": 1.0} for n in longmem.RETRIEVERS},
        },
        {
            "split": "test",
            "kind": "no-answer",
            "lang": "en",
            "answers": [],
            "scores": {},
            "returned": {**dict.fromkeys(longmem.RETRIEVERS, False), "hybrid": True, "vector": True},
        },
        {
            "split": "test",
            "kind": "no-answer",
            "lang": "en",
            "answers": [],
            "scores": {},
            "returned": dict.fromkeys(longmem.RETRIEVERS, False),
        },
    ]
    out = longmem.summarise(res, ["single", "no-answer"])
    assert list(out) == ["test"]
    assert out["test"]["no_answer"]["false_hit_rate"] == 0.5
    assert out["test"]["no_answer"]["false_hit_rate_by_retriever"]["keyword"] == 0.0
    assert out["test"]["overall"]["hybrid"] == {"n": 1, "recall@5": 1.0, "recall@10": 1.0, "mrr": 1.0}
    assert "no-answer" not in out["test"]["by_kind"]


# -- the small set, real model ------------------------------------------------------------------------


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


@pytest.mark.model
def test_eval_set_is_loaded_completely(report: dict[str, Any]) -> None:
    assert report["dataset"] == {"threads": 32, "messages": 400, "questions": 86}
    assert report["model"] == "sentence-transformers/all-MiniLM-L6-v2"


@pytest.mark.model
def test_hybrid_beats_both_single_retrievers_at_10(report: dict[str, Any]) -> None:
    hybrid, keyword, vector = report["hybrid"], report["keyword"], report["vector"]
    assert hybrid["recall@10"] > keyword["recall@10"], report
    assert hybrid["recall@10"] > vector["recall@10"], report
    assert hybrid["recall@5"] > max(keyword["recall@5"], vector["recall@5"]), report
    assert hybrid["mrr"] > max(keyword["mrr"], vector["mrr"]), report


@pytest.mark.model
def test_chinese_questions_are_answered_by_keyword_despite_an_english_model(report: dict[str, Any]) -> None:
    by_type = report["by_type"]
    assert (
        by_type["hybrid"]["cjk"]["recall@10"]
        >= by_type["keyword"]["cjk"]["recall@10"]
        > (by_type["vector"]["cjk"]["recall@10"])
    )


@pytest.mark.model
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


# -- the person-to-person and per-language sets (issue 30): well-formed and what make.py writes ---------


@pytest.mark.parametrize("folder", ["people", "langs"])
def test_people_and_langs_sets_are_what_make_py_writes(folder: str) -> None:
    people_make = _load("people_make", ROOT / "bench" / "eval" / "people" / "make.py")
    data = ROOT / "bench" / "eval" / folder
    threads, questions = people_make.build(data / "material")
    summary = people_make.validate(threads, questions)  # ids, answers in their conversation, kinds
    assert [json.loads(line) for line in (data / "conversations.jsonl").open(encoding="utf-8")] == threads
    assert [json.loads(line) for line in (data / "questions.jsonl").open(encoding="utf-8")] == questions
    if folder == "people":
        assert all(len(t["messages"]) >= 400 for t in threads), summary
        assert all(m.get("name") for t in threads for m in t["messages"])  # every turn names its speaker
        assert len(questions) >= 290 and {q["split"] for q in questions} == {"tune", "test"}
