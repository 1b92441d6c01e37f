"""Fit the "does the archive answer this?" model (store.search.answer) on the TUNING half (prints JSON).

    .venv/bin/python -m bench fit_answer [--out FILE]

For every question of bench/eval/longmem the candidate lists are fetched once (bench/tune/tune_search.py's
Bench, same cached databases as bench/quality/eval_search.py), ranked with the shipped settings and each per-hit
floor tried, and turned into the query-level signals the search computes (store.search.answer.signals).
Then, on the tune half only:

1. every signal's own ranking power (AUC: answerable vs no-answer);
2. a few small sets of signals, each a weighted logistic model (numpy, L2), scored by leave-one-archive-
   out on tune: the fewest no-answer questions answered at a recall@10 cost of at most MAX_COST;
3. the chosen set refitted on all of tune, its threshold chosen on tune (fewest no-answer questions
   answered, no nonsense query answered, cost <= MAX_COST).

Weights: an answerable question counts by its recall@10 without any floor (cutting a question whose list
holds no answer costs nothing), the no-answer questions together as much as the answerable ones. The
test half is only scored, with what tune chose, and the whole curve is printed for both halves: per
threshold the no-answer false-hit rate, recall@10 above the floor (weak results count 0) and including
the weak results, and the nonsense queries answered.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from bench.tune.tune_search import KINDS, NOFILTER, OFF, Bench
from store.search.answer import TOP, absent_share, signals, uncovered_share
from store.search.engine import DEPTH
from store.search.query import parse_query
from store.search.rank import SMOOTH_DEPTH, Fusion, cjk_lean, fuse, order, smooth

ROOT = Path(__file__).resolve().parents[2]  # the repository: bench/tune/fit_answer.py

MAX_COST = 0.02  # the bound: answerable questions lose at most this much recall@10 to the floor
SETS = {
    "cos1+cov1": ["cos1", "cov1"],
    "cos1+cov1+absent": ["cos1", "cov1", "absent"],
    "+margins": ["cos1", "cov1", "absent", "cos_gap10", "kwz"],
    "+agreement": ["cos1", "cov1", "absent", "cos_gap10", "kwz", "both10", "conc"],
    "+agreement, no absent": ["cos1", "cov1", "cos_gap10", "kwz", "both10", "conc"],
    "margins+agreement": ["cos_gap10", "kwz", "both10", "conc"],
    "+agreement+uncovered": ["cos1", "cov1", "cos_gap10", "kwz", "both10", "conc", "uncovered"],
    "uncovered+absent": ["uncovered", "absent", "cos1", "cov1"],
    "+lean": ["cos1_en", "cov1", "absent", "cos_gap10", "kwz", "both10", "conc", "lean"],
    "all": [
        "cos1",
        "cos1_en",
        "cos_gap10",
        "cos_gap_mean",
        "cov1",
        "cov_top1",
        "cos_top1",
        "kwz",
        "absent",
        "both10",
        "both1",
        "conc",
        "lean",
        "uncovered",
    ],
}


@dataclass
class Row:
    split: str
    conv: str
    kind: str
    answerable: bool
    r10: float  # recall@10 of the floored list (0 for no-answer)
    r10_nofloor: float
    returned: bool  # the per-hit floor lets something through
    sig: dict[str, float]


def ranked_for(kw: Any, sem: Any, parsed: Any, fusion: Fusion, context: Any) -> Any:
    ranked = fuse(kw, sem, fusion, parsed)
    best = sorted((r for r in ranked.values() if r.key[0] == "message"), key=lambda r: -r.score)[
        :SMOOTH_DEPTH
    ]
    sub = context.subset([r.key[1] for r in best])
    return smooth(ranked, sub, fusion, parsed), sub


def recall(ids: list[str], answers: set[str]) -> float:
    return len(set(ids[:10]) & answers) / len(answers) if answers else 0.0


def rows_for(bench: Bench, fusion: Fusion) -> tuple[list[Row], list[Row]]:
    """Every question, and every (nonsense query, archive) pair, under `fusion` (its per-hit floor)."""
    nofloor = replace(fusion, floor=OFF, keyword_floor=OFF)
    out = []
    for q in bench.qs:
        cid = q.q["conversation"]
        ext, ctx = bench.ext[cid], bench.context[cid]
        kw = q.kw[(fusion.b, fusion.k1)]
        if not q.parsed.phrases:
            out.append(Row(q.q["split"], cid, q.q["kind"], bool(q.answers), 0.0, 0.0, False, {}))
            continue
        ranked, sub = ranked_for(kw, q.sem, q.parsed, fusion, ctx)
        top = order(ranked)[:TOP]
        ranked_nf, _ = ranked_for(kw, q.sem, q.parsed, nofloor, ctx)
        ids_nf = [ext[r.key[1]] for r in order(ranked_nf)[:TOP]]
        absent = bench_absent(bench, cid, q.parsed)
        sig = signals(
            kw,
            q.sem,
            top,
            sub.thread_of,
            absent=absent,
            lean=cjk_lean(q.parsed, fusion),
            uncovered=uncovered_share(bench.stores[cid].con, q.parsed, top),
        )
        out.append(
            Row(
                q.q["split"],
                cid,
                q.q["kind"],
                bool(q.answers),
                recall([ext[r.key[1]] for r in top], q.answers),
                recall(ids_nf, q.answers),
                bool(top),
                sig,
            )
        )
    nonsense = []
    for (text, vec), (cid, store) in itertools.product(bench.nonsense, bench.stores.items()):
        parsed = parse_query(text)
        kw = store.keyword_hits(parsed, KINDS, NOFILTER, DEPTH, fusion)
        sem = [(key, s) for key, s, _ in store.semantic_candidates(vec, KINDS, NOFILTER, DEPTH)]
        ranked, sub = ranked_for(kw, sem, parsed, fusion, bench.context[cid])
        top = order(ranked)[:TOP]
        absent = bench_absent(bench, cid, parsed)
        sig = signals(
            kw,
            sem,
            top,
            sub.thread_of,
            absent=absent,
            lean=cjk_lean(parsed, fusion),
            uncovered=uncovered_share(store.con, parsed, top),
        )
        nonsense.append(Row("nonsense", cid, "nonsense", False, 0.0, 0.0, bool(top), sig))
    return out, nonsense


_ABSENT: dict[tuple[str, str], float] = {}


def bench_absent(bench: Bench, cid: str, parsed: Any) -> float:
    key = (cid, parsed.text)
    if key not in _ABSENT:
        _ABSENT[key] = absent_share(bench.stores[cid].con, parsed, KINDS)
    return _ABSENT[key]


# -- the model ------------------------------------------------------------------------------------------


def matrix(rows: list[Row], names: list[str]) -> np.ndarray:
    return np.array([[r.sig.get(n, 0.0) for n in names] for r in rows], dtype=np.float64).reshape(
        len(rows), -1
    )


def weights_of(rows: list[Row]) -> np.ndarray:
    w = np.array([r.r10_nofloor + 0.05 if r.answerable else 0.0 for r in rows])
    neg = np.array([0.0 if r.answerable else 1.0 for r in rows])
    if neg.sum():
        w = w + neg * (w.sum() / neg.sum())
    return w


def fit(x: np.ndarray, y: np.ndarray, w: np.ndarray, lam: float = 1.0) -> tuple[float, np.ndarray]:
    """Weighted L2 logistic regression by Newton steps; returns (bias, weights) in the raw units."""
    mu, sd = x.mean(0), x.std(0) + 1e-9
    z = np.c_[np.ones(len(x)), (x - mu) / sd]
    beta = np.zeros(z.shape[1])
    reg = np.eye(z.shape[1]) * lam
    reg[0, 0] = 0.0
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-np.clip(z @ beta, -50, 50)))
        grad = z.T @ (w * (p - y)) + reg @ beta
        hess = z.T @ (z * (w * p * (1 - p))[:, None]) + reg + 1e-9 * np.eye(len(beta))
        step = np.linalg.solve(hess, grad)
        beta -= step
        if np.abs(step).max() < 1e-8:
            break
    coef = beta[1:] / sd
    return float(beta[0] - (beta[1:] * mu / sd).sum()), coef


def prob(bias: float, coef: np.ndarray, x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(bias + x @ coef, -50, 50)))


def auc(scores: np.ndarray, y: np.ndarray) -> float:
    pos, neg = scores[y == 1], scores[y == 0]
    if not len(pos) or not len(neg):
        return float("nan")
    greater = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return round(float(greater / (len(pos) * len(neg))), 4)


def point(rows: list[Row], p: np.ndarray, t: float) -> dict[str, float]:
    """One operating point: threshold t on p (rows whose floored list is empty stay empty)."""
    acc = np.array([r.returned for r in rows]) & (p >= t)
    ans = [i for i, r in enumerate(rows) if r.answerable]
    none = [i for i, r in enumerate(rows) if not r.answerable]
    base = float(np.mean([rows[i].r10_nofloor for i in ans])) if ans else 0.0
    above = float(np.mean([rows[i].r10 * acc[i] for i in ans])) if ans else 0.0
    weak = float(np.mean([rows[i].r10 for i in ans])) if ans else 0.0
    return {
        "threshold": round(t, 4),
        "false_hit_rate": round(float(np.mean([acc[i] for i in none])), 4) if none else 0.0,
        "recall@10_above_floor": round(above, 4),
        "recall@10_with_weak": round(weak, 4),
        "recall@10_no_floor": round(base, 4),
        "cost": round(base - above, 4),
        "answerable_cut": round(float(np.mean([not acc[i] for i in ans])), 4) if ans else 0.0,
    }


def best_point(
    rows: list[Row], p: np.ndarray, nonsense_p: np.ndarray | None, nonsense: list[Row]
) -> dict[str, Any]:
    """The threshold with the fewest no-answer questions answered at cost <= MAX_COST (and no nonsense)."""
    cands = sorted({0.0, *np.round(p, 6).tolist()})
    best: dict[str, Any] | None = None
    for t in cands:
        pt = point(rows, p, t)
        if pt["cost"] > MAX_COST + 1e-9:
            continue
        if nonsense_p is not None:
            pt["nonsense_answered"] = int(
                sum(1 for r, q in zip(nonsense, nonsense_p, strict=True) if r.returned and q >= t)
            )
        key = (pt["false_hit_rate"], pt.get("nonsense_answered", 0), pt["cost"])
        if best is None or key < (best["false_hit_rate"], best.get("nonsense_answered", 0), best["cost"]):
            best = pt
    return best or point(rows, p, 0.0)


def loco(rows: list[Row], names: list[str], lam: float) -> np.ndarray:
    """Leave-one-archive-out probabilities over the tune rows."""
    p = np.zeros(len(rows))
    convs = sorted({r.conv for r in rows})
    for c in convs:
        train = [r for r in rows if r.conv != c and r.returned]
        test_idx = [i for i, r in enumerate(rows) if r.conv == c]
        bias, coef = fit(
            matrix(train, names), np.array([1.0 * r.answerable for r in train]), weights_of(train), lam
        )
        p[test_idx] = prob(bias, coef, matrix([rows[i] for i in test_idx], names))
    return p


def study(bench: Bench, fusion: Fusion) -> dict[str, Any]:
    rows, nonsense = rows_for(bench, fusion)
    tune = [r for r in rows if r.split == "tune"]
    test = [r for r in rows if r.split == "test"]
    y_tune = np.array([1.0 * r.answerable for r in tune])
    ret = [r for r in tune if r.returned]
    y_ret = np.array([1.0 * r.answerable for r in ret])
    names = SETS["all"]
    out: dict[str, Any] = {
        "floor": fusion.floor,
        "keyword_floor": fusion.keyword_floor,
        "no_model": {
            "tune": point(tune, np.ones(len(tune)), 0.0),
            "test": point(test, np.ones(len(test)), 0.0),
        },
        "nonsense_answered_no_model": int(sum(r.returned for r in nonsense)),
        "signal_auc_tune": {n: auc(matrix(ret, [n])[:, 0], y_ret) for n in names},
        "sets": {},
    }
    for lam in (0.3, 3.0):
        for name, feats in SETS.items():
            p = loco(tune, feats, lam)
            pt = best_point(tune, p, None, nonsense)
            out["sets"][f"{name} lam={lam}"] = {"loco_auc": auc(p[[r.returned for r in tune]], y_ret), **pt}
    return out | {"_rows": (rows, nonsense, tune, test, y_tune)}


def final(study_out: dict[str, Any], feats: list[str], lam: float) -> dict[str, Any]:
    rows, nonsense, tune, test, _ = study_out["_rows"]
    ret = [r for r in tune if r.returned]
    bias, coef = fit(matrix(ret, feats), np.array([1.0 * r.answerable for r in ret]), weights_of(ret), lam)
    p_tune, p_test = prob(bias, coef, matrix(tune, feats)), prob(bias, coef, matrix(test, feats))
    p_non = prob(bias, coef, matrix(nonsense, feats))
    chosen = best_point(tune, p_tune, p_non, nonsense)
    t = chosen["threshold"]
    curve = []
    for th in [0.0, *np.linspace(0.05, 0.95, 19).round(3).tolist(), t]:
        curve.append(
            {
                "tune": point(tune, p_tune, th),
                "test": point(test, p_test, th),
                "nonsense_answered": int(
                    sum(1 for r, q in zip(nonsense, p_non, strict=True) if r.returned and q >= th)
                ),
            }
        )
    by_kind = {}
    for kind in sorted({r.kind for r in test}):
        sel = [i for i, r in enumerate(test) if r.kind == kind]
        by_kind[kind] = point([test[i] for i in sel], p_test[sel], t)
    return {
        "signals": feats,
        "lambda": lam,
        "model": {
            "bias": round(bias, 6),
            "weights": {n: round(float(c), 6) for n, c in zip(feats, coef, strict=True)},
        },
        "threshold": t,
        "tune": point(tune, p_tune, t),
        "test": point(test, p_test, t),
        "test_by_kind": by_kind,
        "nonsense_answered": int(
            sum(1 for r, q in zip(nonsense, p_non, strict=True) if r.returned and q >= t)
        ),
        "nonsense_pairs": len(nonsense),
        "curve": sorted(curve, key=lambda c: c["tune"]["threshold"]),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out")
    parser.add_argument("--floors", default="0.3:0.6", help="per-hit floors to try, cosine:keyword,...")
    parser.add_argument("--set", default="+agreement", help="the signal set to fit finally")
    parser.add_argument("--lam", type=float, default=1.0)
    args = parser.parse_args(argv)
    fusion = Fusion()
    bench = Bench(ROOT / "bench" / "eval" / "longmem", [fusion.b], [fusion.k1])
    report: dict[str, Any] = {"studies": []}
    for spec in args.floors.split(","):
        fl, kf = (float(x) for x in spec.split(":"))
        s = study(bench, replace(fusion, floor=fl, keyword_floor=kf))
        s["final"] = final(s, SETS[args.set], args.lam)
        s.pop("_rows")
        report["studies"].append(s)
    text = json.dumps(report, indent=1)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    for s in report["studies"]:
        f = s["final"]
        print(
            f"floor {s['floor']}/{s['keyword_floor']}: tune {f['tune']} | test {f['test']} | nonsense {f['nonsense_answered']}",
            file=sys.stderr,
        )
    for store in bench.stores.values():
        store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
