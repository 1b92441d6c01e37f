"""Can search say "no good match" when every result comes from one conversation? (prints JSON)

    .venv/bin/python -m bench no_answer [--out FILE]

The no-answer questions of bench/eval/longmem and bench/eval/people are the hard form: a real attribute
asked of the wrong person ("What time did Jonas run the 10k in?": Marta ran it), or an attribute the
conversation never mentions. For every question the shipped ranking (Store.rank_candidates, the
configured settings) gives its top 10, and three deciders are scored as classifiers of "the archive
answers this" (answerable = positive):

- the per-hit relevance floor (Fusion.floor / keyword_floor): does the hybrid return anything at all;
- the shipped answer model (store.search.answer.MODEL), with its concentration signal now counted per
  session (per thread it was 1.0 for every question of a one-thread archive);
- the same signals refitted on the TUNE half of both sets (bench/tune/fit_answer.py's weighted logistic fit).

For each: AUC on tune and test, and at a handful of thresholds the no-answer false-hit rate (no-answer
questions still answered) beside the answerable questions kept and their recall@10 (a question held back
scores 0). Nothing is chosen on test.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from bench.tune.fit_answer import auc, fit, prob
from bench.tune.tune_conversation import KINDS, NOFILTER, Bench, Question, recall
from store.search.answer import MODEL, TOP, sessions, signals, uncovered_share
from store.search.rank import Fusion, cjk_lean

ROOT = Path(__file__).resolve().parents[2]  # the repository: bench/tune/no_answer.py

FEATURES = ["cos1", "cov1", "cos_gap10", "kwz", "both10", "conc", "uncovered"]
THRESHOLDS = [0.0, 0.3, 0.5, 0.7, 0.8, 0.85, 0.9, 0.93, 0.95, 0.97]


def row(q: Question, fusion: Fusion) -> dict[str, Any]:
    nofloor = replace(fusion, floor=1e-9, keyword_floor=1e-9)
    top_ids = q.ranked(nofloor)
    floored = q.ranked(fusion, floor=True)
    kept, context = q.store.rank_candidates(
        q.kw, q.sem, q.parsed, KINDS, NOFILTER, nofloor, q.cues, floor=False
    )

    sig = signals(
        q.kw,
        [(key, c) for key, c, _ in q.sem],
        kept[:TOP],
        sessions(context),
        absent=0.0,
        lean=cjk_lean(q.parsed, fusion),
        uncovered=uncovered_share(q.store.con, q.parsed, kept[:TOP]),
    )
    return {
        "set": q.set,
        "split": q.q["split"],
        "answerable": bool(q.answers),
        "r10": recall(top_ids, q.answers) if q.answers else 0.0,
        "floor_returns": bool(floored),
        "sig": sig,
        "p_shipped": MODEL.probability(sig),
    }


def table(rows: list[dict[str, Any]], p: np.ndarray) -> list[dict[str, float]]:
    y = np.array([r["answerable"] for r in rows])
    r10 = np.array([r["r10"] for r in rows])
    out = []
    for t in THRESHOLDS:
        keep = p >= t
        out.append(
            {
                "threshold": t,
                "no_answer_false_hits": round(float(keep[~y].mean()), 3) if (~y).any() else 0.0,
                "answerable_kept": round(float(keep[y].mean()), 3),
                "answerable_recall@10": round(float((r10 * keep)[y].mean()), 3),
            }
        )
    return out


def score(rows: list[dict[str, Any]], p: np.ndarray) -> dict[str, Any]:
    y = np.array([r["answerable"] for r in rows], dtype=float)
    return {"auc": round(auc(p, y), 3), "curve": table(rows, p)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    bench = Bench()
    fusion = bench.stores[0].fusion()
    rows = [row(q, fusion) for q in bench.qs]
    out: dict[str, Any] = {"fusion": {"floor": fusion.floor, "keyword_floor": fusion.keyword_floor}}
    tune = [r for r in rows if r["split"] == "tune"]
    x = np.array([[r["sig"].get(f, 0.0) for f in FEATURES] for r in tune])
    y = np.array([r["answerable"] for r in tune], dtype=float)
    w = np.where(y > 0, 1.0, y.sum() / max(1.0, (1 - y).sum()))
    bias, coef = fit(x, y, w)
    out["refit"] = {
        "bias": round(float(bias), 4),
        **{f: round(float(c), 4) for f, c in zip(FEATURES, coef, strict=True)},
    }
    for name in ("longmem", "people", "all"):
        for split in ("tune", "test"):
            part = [r for r in rows if r["split"] == split and name in ("all", r["set"])]
            if not part:
                continue
            xs = np.array([[r["sig"].get(f, 0.0) for f in FEATURES] for r in part])
            y_part = np.array([r["answerable"] for r in part])
            block: dict[str, Any] = {
                "answerable": int(y_part.sum()),
                "no_answer": int((~y_part).sum()),
                "per_hit_floor": score(part, np.array([float(r["floor_returns"]) for r in part])),
                "shipped_model": score(part, np.array([r["p_shipped"] for r in part])),
                "refit_on_tune": score(part, prob(bias, coef, xs)),
                "single_signal_auc": {
                    f: round(auc(xs[:, i], y_part.astype(float)), 3) for i, f in enumerate(FEATURES)
                },
            }
            block["per_hit_floor"]["curve"] = block["per_hit_floor"]["curve"][1:2]
            out[f"{split}/{name}"] = block
    out["mean_p_shipped_no_answer_vs_answerable"] = {
        s: [
            round(statistics.fmean(r["p_shipped"] for r in rows if r["set"] == s and not r["answerable"]), 3),
            round(statistics.fmean(r["p_shipped"] for r in rows if r["set"] == s and r["answerable"]), 3),
        ]
        for s in ("longmem", "people")
    }
    text = json.dumps(out, indent=1)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    for store in bench.stores:
        store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
