"""Answer VERIFICATION signals for the answer floor, measured on the evaluation's tuning half (prints JSON).

    .venv/bin/python -m bench verify_answer [--out FILE] [--tops 1,3,5,10] [--set NAME] [--tune-only]

The answer floor's retrieval signals (store.search.answer, fitted by bench/tune/fit_answer.py) barely separate
near-topic no-answer questions ("what is my cat called" in an archive about a dog) from answerable ones:
every retrieval score says "close". This script asks instead whether each content word of the query is
*supported* by the best results, with the one model we ship (all-MiniLM-L6-v2, int8 ONNX), three ways:

1. counterfactual ablation: embed the query with each content word removed in turn and compare its cosine
   with the top results' stored vectors to the full query's (a supported word's removal lowers it; an
   unsupported one leaves it flat or raises it). No passage is re-encoded.
2. late interaction: the model's token vectors (before mean pooling) for the query and the top results;
   per query content word, the best cosine over the results' tokens (ColBERT-style MaxSim; the model was
   not trained for it).
3. word presence: per content word, whether a top result contains it (the keyword index's own stemming),
   or a word whose single-word embedding is close to it.

Each question's candidate lists and ranking are bench/tune/fit_answer.py's (same cached databases, shipped
ranking and per-hit floor); the signals are computed against its best k results, for each k of --tops.
Then, on TUNE only: each signal's AUC (answerable vs no-answer, over the questions the per-hit floor lets
through; also per answerable kind), small sets (with and without today's retrieval signals) scored
leave-one-archive-out; the (k, set) with the best out-of-sample AUC is refitted on tune and its threshold
chosen under the issue's cost rule. The test half is scored only with what tune chose, and the whole curve
is printed for both halves beside today's model ("+agreement+uncovered", refitted in the same run). Cost
per search is CPU time measured here (median over the tune questions).

What it found (docs/guide/search.md, 2026-11-25): no verification signal separates. Alone each has an AUC of
0.40-0.58 on tune, the ablation's "unsupported word leaves the cosine flat" included; per kind, single-fact
questions against no-answer ones 0.47-0.56. Why: conversational answers rarely repeat the question's words
("what is the name of Maya's dog" -> "he's called Biscuit"), so about 90% of the answerable questions
have a word their best result does not contain, as do 96% of the no-answer ones (`every_word_in_results`,
k = 1), while the no-answer questions' results do hold their words in another relation ("what is the name
of my cat" -> "the cat next door comes to the window"). Added to today's signals, the ablation raises the
out-of-sample AUC from 0.60 to 0.69 (k = 5), through a weight that runs against the hypothesis (a large
mean drop means "no answer"); at the tune pick it answers 85% of the no-answer questions on test (today:
100%) but loses 0.054 recall@10 there. Not shipped.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from bench.lib.word_support import Timing, Tokens, verify
from bench.tune import fit_answer as fa
from bench.tune.tune_search import KINDS, NOFILTER, Bench
from embeddings.onnx_embedder import make_embedder
from store.search.answer import TOP
from store.search.engine import DEPTH
from store.search.query import parse_query
from store.search.rank import Fusion, order

ROOT = Path(__file__).resolve().parents[2]  # the repository: bench/tune/verify_answer.py

TODAY = "+agreement+uncovered"


# -- the study -------------------------------------------------------------------------------------------


def add_signals(bench: Bench, fusion: Fusion, rows: list[fa.Row], nonsense: list[fa.Row], k: int) -> Timing:
    """The verification signals of every question (and nonsense query) the per-hit floor lets through."""
    embedder = make_embedder()
    embedder.load()
    tokens = Tokens(embedder)
    timing = Timing([], [], [], [], [])
    for q, row in zip(bench.qs, rows, strict=True):
        if not q.parsed.phrases or not row.returned:
            continue
        cid = q.q["conversation"]
        ranked, _ = fa.ranked_for(q.kw[(fusion.b, fusion.k1)], q.sem, q.parsed, fusion, bench.context[cid])
        top = [r.key[1] for r in order(ranked)[:TOP] if r.key[0] == "message"]
        row.sig.update(
            verify(q.q["query"], q.parsed.phrases, top, bench.stores[cid].con, embedder, tokens, k, timing)
        )
    pairs = itertools.product(bench.nonsense, bench.stores.items())
    for ((text, vec), (cid, store)), row in zip(pairs, nonsense, strict=True):
        parsed = parse_query(text)
        if not row.returned:
            continue
        kw = store.keyword_hits(parsed, KINDS, NOFILTER, DEPTH, fusion)
        sem = [(key, c) for key, c, _ in store.semantic_candidates(vec, KINDS, NOFILTER, DEPTH)]
        ranked, _ = fa.ranked_for(kw, sem, parsed, fusion, bench.context[cid])
        top = [r.key[1] for r in order(ranked)[:TOP] if r.key[0] == "message"]
        row.sig.update(
            verify(text, parsed.phrases, top, store.con, embedder, tokens, k, Timing([], [], [], [], []))
        )
    return timing


ABLATION_ALL = [
    "abl_min",
    "abl_idfmin",
    "abl_mean",
    "abl_joint",
    "abl_joint_idf",
    "abl_win_joint",
    "abl_win_joint_idf",
]
LATE_ALL = ["li_min", "li_idfmin", "li_mean", "li_joint", "li_joint_idf"]
NEW = [*ABLATION_ALL, *LATE_ALL, "syn_min", "syn_joint", "syn_unsup6", "miss_share", "miss_idf"]
ABLATION = ["abl_joint", "abl_joint_idf", "abl_min", "abl_mean"]
LATE = ["li_joint", "li_joint_idf", "li_min", "li_mean"]
SYNONYMS = ["syn_joint", "syn_min", "syn_unsup6"]
PRESENCE = ["miss_share", "miss_idf"]
SIGNAL_SETS = {
    "today": fa.SETS[TODAY],
    "ablation": ABLATION,
    "late": LATE,
    "synonyms": SYNONYMS,
    "presence": PRESENCE,
    "verify": [*ABLATION, *LATE, *SYNONYMS, *PRESENCE],
    "today+ablation": [*fa.SETS[TODAY], *ABLATION],
    "today+late": [*fa.SETS[TODAY], *LATE],
    "today+verify": [*fa.SETS[TODAY], *ABLATION, *LATE, *SYNONYMS, *PRESENCE],
}
KIND_SIGNALS = [
    "conc",
    "kwz",
    "uncovered",
    "abl_joint",
    "abl_min",
    "li_joint",
    "li_min",
    "syn_joint",
    "syn_min",
]


def ms(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    return {
        "median": round(statistics.median(values) * 1000, 2),
        "min": round(min(values) * 1000, 2),
        "max": round(max(values) * 1000, 2),
    }


def tune_study(rows: list[fa.Row], nonsense: list[fa.Row], timing: Timing, k: int) -> dict[str, Any]:
    """Signal AUCs (overall and per answerable kind against the no-answer questions) and the sets
    leave-one-archive-out, all on tune, for one `k`."""
    tune = [r for r in rows if r.split == "tune"]
    ret = [r for r in tune if r.returned]
    y_ret = np.array([1.0 * r.answerable for r in ret])
    none = [r for r in ret if not r.answerable]
    per_embed = statistics.median(t / n for t, n in zip(timing.ablation, timing.embeds, strict=True))
    n_syn = statistics.median(timing.synonym_embeds)
    sets = {}
    for name, feats in SIGNAL_SETS.items():
        p = fa.loco(tune, feats, 1.0)
        sets[name] = {"loco_auc": fa.auc(p[[r.returned for r in tune]], y_ret)} | fa.best_point(
            tune, p, None, nonsense
        )
    return {
        "top": k,
        "questions_tune_returned": len(ret),
        "no_answer_tune_returned": len(none),
        "cost_cpu_ms": {
            "ablation": ms(timing.ablation),
            "late_interaction": ms(timing.late),
            "presence": ms(timing.presence),
            "one_query_embedding": round(per_embed * 1000, 2),
            "synonyms_single_word_embeddings": n_syn,
            "synonyms_uncached_estimate": round(n_syn * per_embed * 1000, 1),
        },
        "signal_auc_tune": {n: fa.auc(fa.matrix(ret, [n])[:, 0], y_ret) for n in [*fa.SETS["all"], *NEW]},
        "signal_auc_tune_by_kind": {
            kind: {
                n: fa.auc(fa.matrix(sel + none, [n])[:, 0], np.array([1.0] * len(sel) + [0.0] * len(none)))
                for n in KIND_SIGNALS
            }
            for kind in sorted({r.kind for r in ret if r.answerable})
            for sel in [[r for r in ret if r.kind == kind]]
        },
        "sets_loco_tune": sets,
        # share of the questions whose top k hold every query word (the index's stemming): the check passes
        "every_word_in_results": {
            "answerable": round(
                float(np.mean([r.sig.get("miss_share", 1.0) == 0 for r in ret if r.answerable])), 3
            ),
            "no_answer": round(float(np.mean([r.sig.get("miss_share", 1.0) == 0 for r in none])), 3),
        },
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    fusion = Fusion()
    bench = Bench(ROOT / "bench" / "eval" / "longmem", [fusion.b], [fusion.k1])
    base, base_nonsense = fa.rows_for(bench, fusion)
    per_k: dict[int, tuple[list[fa.Row], list[fa.Row]]] = {}
    studies = []
    for k in (int(x) for x in args.tops.split(",")):
        rows = [replace(r, sig=dict(r.sig)) for r in base]
        nonsense = [replace(r, sig=dict(r.sig)) for r in base_nonsense]
        timing = add_signals(bench, fusion, rows, nonsense, k)
        per_k[k] = rows, nonsense
        studies.append(tune_study(rows, nonsense, timing, k))
    # the (k, set) with the best leave-one-archive-out AUC on tune
    best = max(
        ((s, n) for s in studies for n in SIGNAL_SETS if n != "today" and (not args.set or n == args.set)),
        key=lambda p: p[0]["sets_loco_tune"][p[1]]["loco_auc"],
    )
    out: dict[str, Any] = {"studies": studies, "chosen": {"top": best[0]["top"], "set": best[1]}}
    if not args.tune_only:
        rows, nonsense = per_k[best[0]["top"]]
        tune = [r for r in rows if r.split == "tune"]
        test = [r for r in rows if r.split == "test"]
        out["curves"] = {n: curve(tune, test, nonsense, SIGNAL_SETS[n]) for n in ("today", best[1])}
    for store in bench.stores.values():
        store.close()
    return out


def curve(tune: list[fa.Row], test: list[fa.Row], nonsense: list[fa.Row], feats: list[str]) -> dict[str, Any]:
    """The set refitted on all of tune; its tune pick (the issue's cost rule) and the curve on both halves."""
    ret = [r for r in tune if r.returned]
    bias, coef = fa.fit(
        fa.matrix(ret, feats), np.array([1.0 * r.answerable for r in ret]), fa.weights_of(ret), 1.0
    )
    p_tune, p_test = fa.prob(bias, coef, fa.matrix(tune, feats)), fa.prob(bias, coef, fa.matrix(test, feats))
    p_non = fa.prob(bias, coef, fa.matrix(nonsense, feats))
    pick = fa.best_point(tune, p_tune, p_non, nonsense)
    pts = []
    for th in sorted({0.0, *np.linspace(0.1, 0.9, 17).round(3).tolist(), pick["threshold"]}):
        a, b = fa.point(tune, p_tune, th), fa.point(test, p_test, th)
        pts.append(
            {
                "answer_floor": th,
                "tune_fh": a["false_hit_rate"],
                "tune_r10": a["recall@10_above_floor"],
                "test_fh": b["false_hit_rate"],
                "test_r10": b["recall@10_above_floor"],
                "nonsense_answered": int(
                    sum(1 for r, q in zip(nonsense, p_non, strict=True) if r.returned and q >= th)
                ),
            }
        )
    return {
        "model": {
            "bias": round(bias, 6),
            "weights": {n: round(float(c), 6) for n, c in zip(feats, coef, strict=True)},
        },
        "test_auc": fa.auc(
            p_test[[r.returned for r in test]], np.array([1.0 * r.answerable for r in test if r.returned])
        ),
        "tune_pick": pick,
        "test_at_pick": fa.point(test, p_test, pick["threshold"]),
        "curve": pts,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out")
    parser.add_argument(
        "--tops", default="1,3,5,10", help="how many of the best results verify the query (tried)"
    )
    parser.add_argument("--tune-only", action="store_true", help="signals and sets on tune; no curves")
    parser.add_argument("--set", help="the signal set to curve (default: best leave-one-archive-out AUC)")
    args = parser.parse_args(argv)
    report = run(args)
    text = json.dumps(report, indent=1)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
