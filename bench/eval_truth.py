"""Same, update or contradiction: the memory classifier (store.truth) on bench/eval/truth (prints JSON).

    .venv/bin/python bench/eval_truth.py [--half tune|test|both] [--errors]

Every pair of bench/eval/truth/pairs.tsv (old memory, new memory, label written by hand) is embedded with
the REAL model (all-MiniLM-L6-v2, offline; one batch), its cosine computed, and `store.truth.classify`
asked what adding the new memory next to the old one should do. Pairs alternate between the tune half and
the test half within each label (the 1st, 3rd, 5th… of a label tune, the 2nd, 4th… test); thresholds were
only ever looked at on the tune half.

What is reported, per half:
- per gold label: how many pairs; what the classifier did (merge / supersede / review / add);
- per action: precision and recall against the expected action (reversal and update -> supersede,
  paraphrase -> merge, same_topic and unrelated -> add);
- the targets: reversals/updates caught (superseded or sent to review; `strict`: superseded), reversals/
  updates merged silently (must be 0), paraphrases offered as merge, unrelated pairs flagged (anything but
  add), and the baseline beside them: the cosine-only rule memapp had before (merge at >= 0.90, else add).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from store.truth.classify import classify  # noqa: E402

PAIRS = ROOT / "bench" / "eval" / "truth" / "pairs.tsv"
HOLDOUT = ROOT / "bench" / "eval" / "truth" / "holdout.tsv"
LABELS = ("reversal", "update", "paraphrase", "same_topic", "unrelated")
EXPECTED = {
    "reversal": "supersede",
    "update": "supersede",
    "paraphrase": "merge",
    "same_topic": "add",
    "unrelated": "add",
}
ACTIONS = ("merge", "supersede", "review", "add")
BASELINE_MERGE = 0.90


def load() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    seen: Counter[str] = Counter()
    for path in (PAIRS, HOLDOUT):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip() or line.startswith("#"):
                continue
            label, old, new = line.split("\t")
            if label not in LABELS:
                raise SystemExit(f"{path}:{n}: unknown label {label!r}")
            if path == HOLDOUT:
                half = "holdout"
            else:
                half = "tune" if seen[label] % 2 == 0 else "test"
                seen[label] += 1
            rows.append({"line": f"{path.name}:{n}", "label": label, "old": old, "new": new, "half": half})
    return rows


def similarities(rows: list[dict[str, Any]]) -> list[float]:
    from embeddings.embedder import SentenceTransformerEmbedder

    emb = SentenceTransformerEmbedder()
    vecs = emb.embed_documents([r["old"] for r in rows] + [r["new"] for r in rows])
    n = len(rows)
    return [float(vecs[i] @ vecs[n + i]) for i in range(n)]


def score(rows: list[dict[str, Any]], key: str) -> dict[str, Any]:
    by_label: dict[str, Counter[str]] = {label: Counter() for label in LABELS}
    for r in rows:
        by_label[r["label"]][r[key]] += 1
    per_action = {}
    for action in ACTIONS:
        predicted = sum(1 for r in rows if r[key] == action)
        gold = sum(1 for r in rows if EXPECTED[r["label"]] == action)
        right = sum(1 for r in rows if r[key] == action and EXPECTED[r["label"]] == action)
        per_action[action] = {
            "precision": round(right / predicted, 3) if predicted else None,
            "recall": round(right / gold, 3) if gold else None,
            "predicted": predicted,
            "expected": gold,
        }
    changes = [r for r in rows if r["label"] in ("reversal", "update")]
    para = [r for r in rows if r["label"] == "paraphrase"]
    unrelated = [r for r in rows if r["label"] == "unrelated"]
    same = [r for r in rows if r["label"] == "same_topic"]
    return {
        "pairs": len(rows),
        "by_label": {label: dict(c) for label, c in by_label.items()},
        "per_action": per_action,
        "targets": {
            "reversal_update_caught": round(
                sum(r[key] in ("supersede", "review") for r in changes) / len(changes), 3
            ),
            "reversal_update_superseded": round(
                sum(r[key] == "supersede" for r in changes) / len(changes), 3
            ),
            "reversal_update_merged_silently": sum(r[key] == "merge" for r in changes),
            "paraphrase_offered_merge": round(sum(r[key] == "merge" for r in para) / len(para), 3),
            "unrelated_flagged": round(sum(r[key] != "add" for r in unrelated) / len(unrelated), 3),
            "same_topic_flagged": round(sum(r[key] != "add" for r in same) / len(same), 3),
            "same_topic_merged": sum(r[key] == "merge" for r in same),
        },
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--half", choices=("tune", "test", "holdout", "all"), default="all")
    ap.add_argument(
        "--errors", action="store_true", help="list the pairs where the action is not the expected one"
    )
    args = ap.parse_args()
    rows = load()
    t0 = time.perf_counter()
    sims = similarities(rows)
    embed_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    for r, sim in zip(rows, sims, strict=True):
        v = classify(r["new"], r["old"], sim)
        r.update(similarity=round(sim, 4), relation=v.relation, action=v.action, reasons=list(v.reasons))
        r["baseline"] = "merge" if sim >= BASELINE_MERGE else "add"
    classify_ms = (time.perf_counter() - t0) * 1000 / len(rows)
    halves = ("tune", "test", "holdout") if args.half == "all" else (args.half,)
    out: dict[str, Any] = {
        "pairs_file": str(PAIRS.relative_to(ROOT)),
        "model": "all-MiniLM-L6-v2",
        "classify_ms_per_pair": round(classify_ms, 3),
        "embed_seconds_all_pairs": round(embed_s, 2),
    }
    for half in halves:
        part = [r for r in rows if r["half"] == half]
        out[half] = {"classifier": score(part, "action"), "baseline_cosine_only": score(part, "baseline")}
        if args.errors:
            out[half]["errors"] = [
                {k: r[k] for k in ("line", "label", "relation", "similarity", "reasons", "old", "new")}
                for r in part
                if r["action"] != EXPECTED[r["label"]]
            ]
    print(json.dumps(out, ensure_ascii=False, indent=2))
    shown = "test" if "test" in halves else halves[-1]
    t = out[shown]["classifier"]["targets"]
    print(
        f"{shown} half: reversals/updates caught {t['reversal_update_caught']:.2f} "
        f"(merged silently {t['reversal_update_merged_silently']}), paraphrases merged "
        f"{t['paraphrase_offered_merge']:.2f}, unrelated flagged {t['unrelated_flagged']:.2f}",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
