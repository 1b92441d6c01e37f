"""Retrieval evaluation: our hybrid vs keyword-only vs vector-only vs plain BM25 (prints JSON).

    .venv/bin/python -m bench eval_search [--split tune|test|both] [--rebuild] [--per-question]
        [--answer-floor P] [--out FILE]
    .venv/bin/python -m bench eval_search --set small [--variants] [--out FILE]

Default set, `longmem` (bench/eval/longmem, code in bench/quality/eval_longmem.py): twelve long multi-session
archives, 678 questions of nine kinds, a tuning half and a test half split by conversation. One chat.db
per archive, built with the REAL model and cached in bench/.data/ (first run a few minutes, then
seconds). Reports recall@5, recall@10 and MRR per retriever, per split, per kind and per language, and the
no-answer false-hit rate. Tune only on `tune`; both halves are reported whenever both are run.

`--set small` is the original 86-question set (bench/eval): one temporary chat.db from
bench/eval/conversations.jsonl, keyword / vector / hybrid, recall@5, recall@10, hit@5, hit@10 and MRR,
overall and per question type. `--variants` also scores fusion variants on the same candidate lists.

The last line on stderr is a one-line summary; stdout is JSON only. recall@k: the share of a question's
answer messages found in the top k, averaged over questions. hit@k: the share of questions with at least
one answer in the top k. MRR: 1 / rank of the first answer.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench.lib.common import load_jsonl, write_eval_threads
from store import Store
from store.search.engine import DEPTH, Filters
from store.search.query import parse_query
from store.search.rank import Fusion, fuse, order, smooth

ROOT = Path(__file__).resolve().parents[2]  # the repository: bench/quality/eval_search.py

EVAL = ROOT / "bench" / "eval"
KS = (5, 10)
Ranked = list[str]  # external message ids, best first


def build_store(path: Path, embedder: Any = "auto") -> Store:
    """A chat.db holding every evaluation conversation (embedded with `embedder`)."""
    store = Store(path, embedder=embedder)
    write_eval_threads(store, load_jsonl(EVAL / "conversations.jsonl"))
    return store


def metrics(ranked: Sequence[Ranked], questions: Sequence[dict[str, Any]]) -> dict[str, float]:
    out: dict[str, float] = {}
    for k in KS:
        rec = [
            len(set(r[:k]) & set(q["answers"])) / len(q["answers"])
            for r, q in zip(ranked, questions, strict=True)
        ]
        hit = [1.0 if set(r[:k]) & set(q["answers"]) else 0.0 for r, q in zip(ranked, questions, strict=True)]
        out[f"recall@{k}"] = round(sum(rec) / len(rec), 4)
        out[f"hit@{k}"] = round(sum(hit) / len(hit), 4)
    rr = []
    for r, q in zip(ranked, questions, strict=True):
        ranks = [i for i, ext in enumerate(r, start=1) if ext in q["answers"]]
        rr.append(1.0 / ranks[0] if ranks else 0.0)
    out["mrr"] = round(sum(rr) / len(rr), 4)
    return out


def by_type(ranked: Sequence[Ranked], questions: Sequence[dict[str, Any]]) -> dict[str, dict[str, float]]:
    types = sorted({q["type"] for q in questions})
    out = {}
    for t in types:
        idx = [i for i, q in enumerate(questions) if q["type"] == t]
        m = metrics([ranked[i] for i in idx], [questions[i] for i in idx])
        out[t] = {"n": len(idx), "recall@10": m["recall@10"], "mrr": m["mrr"]}
    return out


def variants(default: Fusion) -> dict[str, Fusion]:
    """The ranking settings we measured (names are what the README table shows)."""
    plain = replace(default, neighbours=0.0, thread=0.0)
    return {
        "z-score, no smoothing, no thread boost": plain,
        "z-score, semantic weight 0.5": replace(default, semantic_weight=0.5),
        "z-score, semantic weight 2": replace(default, semantic_weight=2.0),
        "z-score + neighbours only": replace(default, thread=0.0),
        "z-score + thread boost only": replace(default, neighbours=0.0),
        "shipped default": default,
    }


def evaluate(store: Store, *, with_variants: bool = False) -> dict[str, Any]:
    """Score keyword, vector and the shipped hybrid (and optionally the variants) on every question."""
    questions = load_jsonl(EVAL / "questions.jsonl")
    ext = {int(i): str(e) for i, e in store.con.execute("SELECT id, external_id FROM messages")}
    kinds, nofilter = ("message",), Filters()
    t0 = time.monotonic()
    # One batch for all queries: all-MiniLM-L6-v2 embeds queries and documents alike (no prompts), and
    # 86 single calls cost minutes on a busy 2-core machine. Checked against the single-query path.
    assert store.embedder is not None and store.load_model(), store.vector_problem
    qvecs = store.embedder.embed_documents([q["query"] for q in questions])
    single = store.embed_query(questions[0]["query"])
    assert single is not None and float(single @ qvecs[0]) > 0.9999
    embed_seconds = time.monotonic() - t0
    kw_lists, vec_lists, hybrid, latencies = [], [], [], []
    for q, qvec in zip(questions, qvecs, strict=True):
        kw_lists.append(store.keyword_hits(parse_query(q["query"]), kinds, nofilter, DEPTH))
        vec_lists.append([(key, s) for key, s, _ in store.semantic_candidates(qvec, kinds, nofilter, DEPTH)])
        t = time.monotonic()
        resp = store.search(q["query"], scope="messages", k=10, touch=False, query_vector=qvec)
        latencies.append(time.monotonic() - t)
        hybrid.append([ext[r.id] for r in resp.results])
    elapsed = time.monotonic() - t0

    def ranked(lists: Sequence[Sequence[Any]]) -> list[Ranked]:
        return [[ext[h[0][1] if isinstance(h, tuple) else h.key[1]] for h in hits] for hits in lists]

    report: dict[str, Any] = {
        "dataset": {"threads": store.count_threads(), "messages": len(ext), "questions": len(questions)},
        "model": getattr(store.embedder, "name", None),
        "keyword": metrics(ranked(kw_lists), questions),
        "vector": metrics(ranked(vec_lists), questions),
        "hybrid": metrics(hybrid, questions),
        "by_type": {
            "keyword": by_type(ranked(kw_lists), questions),
            "vector": by_type(ranked(vec_lists), questions),
            "hybrid": by_type(hybrid, questions),
        },
        "query_embedding_ms_each": round(1000 * embed_seconds / len(questions), 1),
        "search_latency_ms_after_embedding": {
            "median": round(1000 * sorted(latencies)[len(latencies) // 2], 1),
            "max": round(1000 * max(latencies), 1),
        },
        "eval_seconds": round(elapsed, 1),
    }
    if with_variants:
        context = store.message_context(list(ext), nofilter)
        report["variants"] = {
            name: metrics(_fused(kw_lists, vec_lists, questions, f, context, ext), questions)
            for name, f in variants(store.fusion()).items()
        }
    return report


def _fused(
    kw_lists: Sequence[Any],
    vec_lists: Sequence[Any],
    questions: Sequence[dict[str, Any]],
    fusion: Fusion,
    context: Any,
    ext: dict[int, str],
) -> list[Ranked]:
    out = []
    for kw, vec, q in zip(kw_lists, vec_lists, questions, strict=True):
        parsed = parse_query(q["query"])
        ranked = smooth(fuse(kw, vec, fusion, parsed), context, fusion, parsed)
        out.append([ext[r.key[1]] for r in order(ranked)[:10]])
    return out


def summary_line(report: dict[str, Any]) -> str:
    def fmt(name: str) -> str:
        m = report[name]
        return f"{name} R@5 {m['recall@5']:.3f} R@10 {m['recall@10']:.3f} MRR {m['mrr']:.3f}"

    return " | ".join(fmt(n) for n in ("keyword", "vector", "hybrid"))


def main(argv: list[str] | None = None, *, emit: Callable[[str], None] = print) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--set",
        choices=("all", "longmem", "people", "langs", "small"),
        default="all",
        help="which evaluation set (all: longmem, people and langs, each reported, and pooled)",
    )
    parser.add_argument("--model", help="longmem/people: all-MiniLM-L6-v2 (default) or multilingual-e5-small")
    parser.add_argument(
        "--split", choices=("tune", "test", "both"), default="both", help="longmem: which half"
    )
    parser.add_argument("--rebuild", action="store_true", help="longmem: rebuild the cached databases")
    parser.add_argument(
        "--per-question", action="store_true", help="longmem: include every question's top 10"
    )
    parser.add_argument(
        "--variants", action="store_true", help="small: also score the fusion variants we tried"
    )
    parser.add_argument(
        "--answer-floor",
        type=float,
        help="longmem: run the hybrid with this answer floor (default: as configured)",
    )
    parser.add_argument("--out", help="also write the JSON to this file")
    args = parser.parse_args(argv)
    if args.set != "small":
        from bench.quality.eval_longmem import run

        report = run(
            split=args.split,
            rebuild=args.rebuild,
            per_question=args.per_question,
            answer_floor=args.answer_floor,
            sets=("longmem", "people", "langs") if args.set == "all" else (args.set,),
            model=args.model,
        )
    else:
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.monotonic()
            store = build_store(Path(tmp) / "chat.db")
            if store.vector_problem:
                print(f"eval_search: no embedding model: {store.vector_problem}", file=sys.stderr)
                return 1
            build = time.monotonic() - t0
            report = {"set": "small", **evaluate(store, with_variants=args.variants)}
            report["build_seconds"] = round(build, 1)
            report["summary"] = summary_line(report)
            store.close()
    text = json.dumps(report, ensure_ascii=False, indent=2)
    emit(text)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    print(report["summary"], file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
