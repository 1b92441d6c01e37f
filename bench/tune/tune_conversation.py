"""Choose the conversation rules' weights on the TUNING half; report both halves of both sets (prints JSON).

    .venv/bin/python -m bench tune_conversation [--out FILE] [--passes 2]

The sets: bench/eval/longmem (twelve archives, one thread per session) and bench/eval/people (four
person-to-person conversations, one thread each, named speakers), the databases bench/quality/eval_search.py
caches (built with the real model). Every question's candidate lists are fetched once (and, for a query
with a date, each retriever's best inside its window); every setting re-ranks them through
`Store.rank_candidates`, the code `Store.search` runs after its retrievers, so a setting's score here is
the shipped search's score with it (checked at the end against `Store.search` itself).

Tuning: coordinate descent from the settings before the conversation rules (every new weight 0), one
knob at a time over its grid, kept when it raises the objective; `--passes` rounds. The objective is the
mean of the two sets' recall@10 on the tune half (answerable questions, the relevance floor off: the
floor is judged apart, on the no-answer questions), so the 280 longmem questions do not drown the 131
person-to-person ones. The test half is scored once, with what tune chose, beside the tune half and
beside the same run's keyword and vector halves; nothing is chosen on it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from bench.lib.common import load_jsonl
from bench.quality.eval_longmem import LONGMEM, PEOPLE, embed_queries, ensure_databases, make_embedder
from store import Store
from store.search.conversation import Cues
from store.search.engine import DEPTH, Filters
from store.search.query import parse_query
from store.search.rank import Fusion

ROOT = Path(__file__).resolve().parents[2]  # the repository: bench/tune/tune_conversation.py

KINDS = ("message",)
NOFILTER = Filters()
OFF = 1e-9
SETS = {"longmem": LONGMEM, "people": PEOPLE}  # the sets with a tune half (langs is scored, never tuned on)
# Before issue 30: the fused lists with neighbour smoothing and the boost (then of the whole thread).
BEFORE = Fusion(
    semantic_weight=1.0,
    neighbours=0.3,
    thread=0.4,
    window=1,
    reply=0.0,
    join_replies=False,
    role=0.0,
    author=0.0,
    date=0.0,
    diverse=0.0,
    per_hit_floor=True,
    floor=OFF,
    keyword_floor=OFF,
)
GRID: dict[str, list[Any]] = {
    "thread": [0.0, 0.2, 0.4, 0.6, 0.8, 1.0],
    "session_gap": [1.0, 3.0, 6.0, 12.0],
    "neighbours": [0.0, 0.15, 0.3, 0.5, 0.75],
    "window": [1, 2, 3],
    "reply": [0.0, 0.3, 0.6, 1.0],
    "reply_plain": [0.0, 0.3, 0.6, 1.0],
    "join_replies": [False, True],
    "role": [0.0, 0.25, 0.5, 1.0],
    "author": [0.0, 0.25, 0.5, 1.0, 2.0, 3.0, 4.0],
    "date": [0.0, 0.5, 1.0, 2.0, 3.0, 4.0, 6.0],
    "diverse": [0.0, 0.05, 0.1, 0.2, 0.3],
    "semantic_weight": [0.5, 0.6, 0.75, 1.0, 1.25],
}


class Question:
    """One question's candidate lists, fetched once."""

    def __init__(self, q: dict[str, Any], set_name: str, store: Store, qvec: Any, ext: dict[int, str]):
        self.q, self.set, self.store, self.qvec, self.ext = q, set_name, store, qvec, ext
        self.answers = set(q["answers"])
        self.parsed = parse_query(q["query"])
        self.cues = store.query_cues(q["query"], KINDS, replace(BEFORE, date=1.0))
        self.kw = store.keyword_hits(self.parsed, KINDS, NOFILTER, DEPTH)
        self.sem = store.semantic_candidates(qvec, KINDS, NOFILTER, DEPTH)
        self.kw_in, self.sem_in = self.kw, self.sem
        if self.cues.window is not None:
            self.kw_in, self.sem_in = store.window_candidates(
                self.kw, self.sem, self.parsed, self.cues.window, NOFILTER, BEFORE, qvec
            )

    def ranked(self, fusion: Fusion, *, floor: bool = False) -> list[str]:
        if not self.parsed.phrases:
            return []
        dated = fusion.date > 0 and self.cues.window is not None
        kw, sem = (self.kw_in, self.sem_in) if dated else (self.kw, self.sem)
        cues = self.cues if dated else Cues(**{**_cue_fields(self.cues), "window": None})
        kept, _ = self.store.rank_candidates(kw, sem, self.parsed, KINDS, NOFILTER, fusion, cues, floor=floor)
        return [self.ext[r.key[1]] for r in kept[:10]]

    def keyword(self) -> list[str]:
        return [self.ext[h.key[1]] for h in self.kw]

    def vector(self) -> list[str]:
        return [self.ext[key[1]] for key, _, _ in self.sem]


def _cue_fields(c: Cues) -> dict[str, Any]:
    return {f: getattr(c, f) for f in ("first_person", "second_person", "names", "listing", "window")}


def recall(ids: Sequence[str], answers: set[str], k: int = 10) -> float:
    return len(set(ids[:k]) & answers) / len(answers)


class Bench:
    def __init__(self, model: str | None = None) -> None:
        embedder = make_embedder(model)
        embedder.load()
        self.stores: list[Store] = []
        self.qs: list[Question] = []
        for set_name, data in SETS.items():
            folder, _ = ensure_databases(embedder, data=data)
            questions = load_jsonl(data / "questions.jsonl")
            qvecs = embed_queries(embedder, [q["query"] for q in questions])
            by_conv: dict[str, list[int]] = defaultdict(list)
            for i, q in enumerate(questions):
                by_conv[q["conversation"]].append(i)
            for cid, idx in sorted(by_conv.items()):
                store = Store(folder / f"{cid}.db", embedder=embedder)
                self.stores.append(store)
                ext = {int(i): str(e) for i, e in store.con.execute("SELECT id, external_id FROM messages")}
                self.qs += [Question(questions[i], set_name, store, qvecs[i], ext) for i in idx]

    def pick(self, split: str, set_name: str | None = None, answerable: bool = True) -> list[Question]:
        return [
            q
            for q in self.qs
            if q.q["split"] == split
            and (set_name is None or q.set == set_name)
            and bool(q.answers) == answerable
        ]

    def objective(self, fusion: Fusion, split: str = "tune") -> float:
        per_set = [
            statistics.fmean(recall(q.ranked(fusion), q.answers) for q in self.pick(split, name))
            for name in SETS
        ]
        return statistics.fmean(per_set)


def descend(bench: Bench, start: Fusion, passes: int) -> tuple[Fusion, list[dict[str, Any]]]:
    best, best_score = start, bench.objective(start)
    log = [{"step": "start", "objective": round(best_score, 4)}]
    for p in range(passes):
        for knob, values in GRID.items():
            for v in values:
                if getattr(best, knob) == v:
                    continue
                trial = replace(best, **{knob: v})
                score = bench.objective(trial)
                if score > best_score + 1e-4:
                    best, best_score = trial, score
                    log.append({"step": f"pass {p + 1}: {knob} = {v}", "objective": round(score, 4)})
    return best, log


def report(bench: Bench, fusion: Fusion, floor_fusion: Fusion) -> dict[str, Any]:
    """Per split and set: recall@10 per kind for the keyword half, the vector half, the hybrid before
    issue 30, the chosen hybrid, the chosen hybrid with its floor; and the no-answer false-hit rate."""
    out: dict[str, Any] = {}
    for split in ("tune", "test"):
        for name in SETS:
            qs = bench.pick(split, name)
            lists = {
                "keyword": [q.keyword() for q in qs],
                "vector": [q.vector() for q in qs],
                "hybrid_before": [q.ranked(BEFORE) for q in qs],
                "hybrid": [q.ranked(fusion) for q in qs],
                "hybrid_with_floor": [
                    q.ranked(replace(floor_fusion, per_hit_floor=True), floor=True) for q in qs
                ],
                "hybrid_query_floor": [
                    q.ranked(replace(floor_fusion, per_hit_floor=False), floor=True) for q in qs
                ],
            }
            block: dict[str, Any] = {}
            for kind in ["all", *sorted({q.q["kind"] for q in qs})]:
                idx = [i for i, q in enumerate(qs) if kind == "all" or q.q["kind"] == kind]
                block[kind] = {"n": len(idx)} | {
                    r: round(statistics.fmean(recall(lists[r][i], qs[i].answers) for i in idx), 4)
                    for r in lists
                }
            none = bench.pick(split, name, answerable=False)
            block["no_answer_returning_anything"] = {
                "n": len(none),
                "keyword": round(statistics.fmean(bool(q.keyword()) for q in none), 4) if none else 0.0,
                "hybrid_with_floor": round(
                    statistics.fmean(
                        bool(q.ranked(replace(floor_fusion, per_hit_floor=True), floor=True)) for q in none
                    ),
                    4,
                )
                if none
                else 0.0,
                "hybrid_query_floor": round(
                    statistics.fmean(
                        bool(q.ranked(replace(floor_fusion, per_hit_floor=False), floor=True)) for q in none
                    ),
                    4,
                )
                if none
                else 0.0,
            }
            out[f"{split}/{name}"] = block
    return out


def ablation(bench: Bench, chosen: Fusion) -> dict[str, float]:
    """The tune objective with one rule taken away at a time."""
    variants = {
        "chosen": chosen,
        "no session boost": replace(chosen, thread=0.0),
        "no neighbour window": replace(chosen, neighbours=0.0),
        "no reply inheritance": replace(chosen, reply=0.0, join_replies=False),
        "no role preference": replace(chosen, role=0.0),
        "no author preference": replace(chosen, author=0.0),
        "no date window": replace(chosen, date=0.0),
        "no variety for lists": replace(chosen, diverse=0.0),
        "before issue 30": BEFORE,
    }
    return {name: round(bench.objective(v), 4) for name, v in variants.items()}


def check_shipped(bench: Bench, fusion: Fusion, n: int = 40) -> float:
    """The share of `n` questions (every n-th) where Store.search returns exactly the list re-ranked here."""
    qs = bench.qs[:: max(1, len(bench.qs) // n)][:n]
    same = 0
    for q in qs:
        resp = q.store.search(
            q.q["query"], scope="messages", k=10, touch=False, query_vector=q.qvec, fusion=fusion
        )
        same += [r.external_id for r in resp.results] == q.ranked(fusion, floor=True)
    return round(same / len(qs), 3)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out")
    parser.add_argument("--passes", type=int, default=2)
    parser.add_argument("--start", help="JSON of Fusion fields to start the descent from (default: before)")
    args = parser.parse_args(argv)
    t0 = time.monotonic()
    bench = Bench()
    load_seconds = time.monotonic() - t0
    start = BEFORE if not args.start else replace(BEFORE, **json.loads(args.start))
    chosen, log = descend(bench, start, args.passes)
    shipped = Fusion()
    floor_fusion = replace(
        chosen, floor=shipped.floor, keyword_floor=shipped.keyword_floor, per_hit_floor=shipped.per_hit_floor
    )
    out = {
        "chosen": {k: v for k, v in asdict(chosen).items() if k in GRID},
        "objective_tune": round(bench.objective(chosen), 4),
        "objective_test": round(bench.objective(chosen, "test"), 4),
        "report": report(bench, chosen, floor_fusion),
        "ablation_tune": ablation(bench, chosen),
        "descent": log,
        "store_search_agrees": check_shipped(bench, floor_fusion),
        "load_seconds": round(load_seconds, 1),
        "seconds": round(time.monotonic() - t0, 1),
    }
    text = json.dumps(out, ensure_ascii=False, indent=1)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    print(
        f"chosen {out['chosen']} | tune {out['objective_tune']} test {out['objective_test']}", file=sys.stderr
    )
    for store in bench.stores:
        store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
