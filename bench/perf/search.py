"""Vector and hybrid search at scale, side by side with the exact numpy scan; prints JSON.

    .venv/bin/python -m bench search [--quick | --full] [--queries 200] [--cpu] [--hybrid-only]
        [--sizes 10000,100000] [--scaling-only]

Builds (once, cached in bench/.data/) a chat.db with 100,000 memories and 200,000 message chunks (about
143,000 messages in 10,000 threads, a summary each) through the store's own write paths, with synthetic
384-d vectors and text (bench/lib/common.py says why they behave like real ones). Then, in one process:

- vector top-10 per table (bench/perf/search_vector.py): `store.vectors.knn_memories` / `knn_chunks` and the
  vectors held in process against `X @ q` + argpartition over the generator's float32 vectors (checked to
  be the rows the database holds as float16): p50/p95, and recall@10 against the exact answer; also with a
  filter (category; role; date range; one thread). Timed in alternating blocks. Then float16 against
  float32 re-scoring of the same candidates, and the bytes per 1,000 messages (bench/lib/float16.py;
  "before" too when the cached file predates float16).
- hybrid (bench/perf/search_hybrid.py): `Store.search(text, query_vector=q)` (FTS + vectors + fusion +
  hydration + the access-count update) against vector-only `semantic_candidates(q, n=10)` and
  keyword-only `keyword_candidates`, all without embedding the query, each on the wall clock and in CPU
  seconds of the process (`--hybrid-only` runs just this, vectors held and through sqlite-vec).
- the query embedding, timed on its own with the real model in a child process (`query_embedding`).
- scaling (bench/perf/search_vector.py): memory tables of 10k and 100k rows (and 1M with --full: 0.9 GB on
  disk with float16 rows, 1.5 GB of RAM for the numpy side, about 95 s to build). `--scaling-only` runs
  just these, for the sizes given with `--sizes`.

This file is the command: arguments, the order things run in, the targets, the summary line and the JSON
(bench/out/search.json, which `python -m bench report` turns into the table in docs/benchmarks/summary.md).
The databases come from bench/lib/search_data.py.

Targets (issue 7): vector p50 <= 1.5x numpy with recall@10 >= 0.95; hybrid p50 <= 2x vector-only p50.
Issue 19, vectors held in process: <= 1.0x numpy at 10k rows, <= 0.3x above, recall@10 >= 0.98; hybrid
p50 <= 2x vector-only and <= 30 ms, judged on each clock; float16 re-scoring within 0.002 of float32.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from functools import partial
from typing import Any

import numpy as np

from bench.lib import common
from bench.lib.common import ROOT, Population, Precomputed, Words, emit, timed, timing
from bench.lib.float16 import footprint, footprint_before_upgrade
from bench.lib.search_data import populations, search_db
from bench.perf.search_hybrid import held_clocks, held_targets, hybrid_only, hybrid_series
from bench.perf.search_vector import scaling, scaling_only_rows, vector_series
from store import Store
from store.migrations import LATEST


def query_embedding(chunks: Population, n: int = 50) -> dict[str, Any]:
    """Timed in a child process: torch's and numpy's thread pools spinning in one process slow each other
    down (a 12 ms query took 500 ms right after the numpy scans), which would measure the bench, not us."""
    argv = [sys.executable, "-m", "bench.perf.search", "--embed-only", str(chunks.n), str(n)]
    return dict(json.loads(subprocess.run(argv, check=True, capture_output=True, text=True, cwd=ROOT).stdout))


def _embed_only(chunks: Population, n: int) -> dict[str, Any]:
    """The child of `query_embedding`: load the default embedder, then time n queries one at a time."""
    from embeddings.onnx_embedder import make_embedder

    words = Words()
    rng = np.random.default_rng(11)
    texts = [words.query(chunks, int(h), rng) for h in chunks.threads[rng.integers(0, chunks.n, n)]]
    emb = make_embedder()  # the default: onnxruntime, one thread per query
    load_ms, _ = timed(emb.load)
    emb.embed_query("warm up")
    return {
        "model_load_s": round(load_ms / 1000, 2),
        **timing([timed(partial(emb.embed_query, t))[0] for t in texts]),
    }


def _worst(vec: dict[str, Any], f16: dict[str, Any]) -> dict[str, float]:
    """The figures the targets and the summary judge by: the lowest recall@10 over every vector series
    and over the held ones, the held paths' lowest float16 recall@10, and the most any path's float16
    re-scoring loses against float32 re-scoring of the same candidates."""
    return {
        "recall": min(v["recall_at_10"] for v in vec.values() if isinstance(v, dict)),
        "ip_recall": min(v["recall_at_10"] for k, v in vec.items() if k.endswith("_in_process")),
        "f16_recall": min(v["recall_at_10_float16"] for k, v in f16.items() if k.endswith("_in_process")),
        "f16_loss": max(-v["difference"] for v in f16.values()),
    }


def _targets(
    vec: dict[str, Any], hyb: dict[str, Any], f16: dict[str, Any], scale: list[dict[str, Any]]
) -> dict[str, bool]:
    """search.json's "targets", each named for its bound (issue 7, then issue 19's held path)."""
    w = _worst(vec, f16)
    # recall >= 0.98 is the held path's target (the sqlite-vec path's is 0.95, above); float16 may lose
    # at most 0.002 against float32 re-scoring of the same candidates on every path
    f16_recall, f16_loss, ip_recall = w["f16_recall"], w["f16_loss"], w["ip_recall"]
    targets = {
        "vector_p50_le_1.5x_numpy": max(vec["memories"]["ratio_p50"], vec["chunks"]["ratio_p50"]) <= 1.5,
        "recall_at_10_ge_0.95": w["recall"] >= 0.95,
        "hybrid_p50_le_2x_vector": hyb["all"]["ratio_p50"] <= 2.0,
        # issue 19, the in-process path: <= 1.0x numpy at 10k, <= 0.3x above; recall >= 0.98
        "in_process_recall_at_10_ge_0.98": ip_recall >= 0.98,
        # hybrid <= 2x vector-only and <= 30 ms, on the CPU clock and on the wall clock
        **held_targets(hyb["in_process"]),
        # issue 19, float16 re-scoring rows: held recall@10 >= 0.98, every path within 0.002 of float32
        "float16_recall_at_10_ge_0.98_and_within_0.002_of_float32": f16_recall >= 0.98 and f16_loss <= 0.002,
    }
    for row in scale:
        if "in_process" in row:
            limit = 1.0 if row["rows"] <= 10_000 else 0.3
            targets[f"in_process_{row['rows']}_le_{limit}x_numpy"] = row["in_process"]["ratio_p50"] <= limit
    return targets


def _summary(
    rows: tuple[int, int],
    vec: dict[str, Any],
    hyb: dict[str, Any],
    f16: dict[str, Any],
    scale: list[dict[str, Any]],
    foot: dict[str, Any],
    before: dict[str, Any] | None,
    emb: dict[str, Any],
    load: tuple[float, float, float],
    targets: dict[str, bool],
) -> str:
    n_mem, n_chunks = rows
    w = _worst(vec, f16)
    recall, ip_recall, f16_recall, f16_loss = w["recall"], w["ip_recall"], w["f16_recall"], w["f16_loss"]
    missed = [k for k, v in targets.items() if not v]
    return (
        f"search: {n_mem // 1000}k memories {vec['memories']['ours']['p50_ms']:.1f} ms vs numpy "
        f"{vec['memories']['numpy']['p50_ms']:.1f} ms ({vec['memories']['ratio_p50']:.2f}x), "
        f"{n_chunks // 1000}k chunks {vec['chunks']['ours']['p50_ms']:.1f} vs "
        f"{vec['chunks']['numpy']['p50_ms']:.1f} ms ({vec['chunks']['ratio_p50']:.2f}x); min recall@10 "
        f"{recall:.3f}; hybrid {hyb['all']['hybrid']['p50_ms']:.1f} ms = {hyb['all']['ratio_p50']:.2f}x "
        f"vector-only; in process: memories {vec['memories_in_process']['ratio_p50']:.2f}x numpy, chunks "
        f"{vec['chunks_in_process']['ratio_p50']:.2f}x, min recall@10 {ip_recall:.3f}, hybrid "
        f"{held_clocks(hyb['in_process'])}; scaling "
        + ", ".join(
            f"{r['rows'] // 1000}k {r['in_process']['ratio_p50']:.2f}x (recall "
            f"{r['in_process']['recall_at_10']:.3f})"
            for r in scale
            if "in_process" in r
        )
        + f"; float16 rows: held recall@10 >= {f16_recall:.3f}, at most {f16_loss:.4f} below float32 "
        "re-scoring, "
        f"{foot['mb_per_1k_messages']:.2f} MB per 1k messages"
        + (f" (float32 rows: {before['mb_per_1k_messages']:.2f} MB)" if before else "")
        + f"; query embedding {emb['p50_ms']:.1f} ms; load average {load[0]:.1f}; targets "
        f"{'met' if not missed else 'MISSED: ' + ', '.join(missed)}"
    )


def _arguments() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    size = ap.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="10k memories, 20k chunks (for iterating)")
    size.add_argument("--full", action="store_true", help="also the 1M-row scaling point")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--sizes", help="scaling points, comma-separated (default 10000,100000; --full adds 1M)")
    ap.add_argument("--scaling-only", action="store_true", help="only the scaling points (with --sizes)")
    ap.add_argument(
        "--hybrid-only",
        action="store_true",
        help="only hybrid vs vector-only vs keyword-only search, vectors held in process (wall and CPU)",
    )
    ap.add_argument(
        "--cpu",
        action="store_true",
        help="time CPU seconds of the process (all threads) instead of wall time: steadier on a busy machine",
    )
    ap.add_argument("--embed-only", nargs=2, type=int, help=argparse.SUPPRESS)
    return ap.parse_args()


def main() -> None:
    a = _arguments()
    if a.embed_only:
        print(json.dumps(_embed_only(populations(10, a.embed_only[0])[1], a.embed_only[1])))
        return
    n_mem, n_chunks = (10_000, 20_000) if a.quick else (100_000, 200_000)
    sizes = [10_000] if a.quick else [10_000, 100_000] + ([1_000_000] if a.full else [])
    if a.sizes:
        sizes = [int(x) for x in a.sizes.split(",")]
    load = os.getloadavg()
    if a.cpu:
        common.CLOCK[0] = time.process_time
    if a.scaling_only:  # only the memories-only scaling points (vec0 and in process against numpy)
        result = {
            "scaling": scaling_only_rows(sizes, a.queries),
            "clock": "cpu" if a.cpu else "wall",
            "load_average_1_5_15": [round(x, 2) for x in load],
        }
        print(json.dumps(result, indent=2))
        return
    path, mem, chunks, build_s = search_db(n_mem, n_chunks)
    before = footprint_before_upgrade(path, LATEST)  # a cached file from before float16 rows
    t_open = time.process_time()
    store = Store(path, embedder=Precomputed())
    upgrade_cpu_s = round(time.process_time() - t_open, 1) if before else None
    if a.hybrid_only:
        hybrid_only(store, chunks, a.queries, (n_mem, n_chunks), load)
        return
    vec = vector_series(store, mem, chunks, a.queries)
    f16 = vec.pop("float16_rescoring")
    hyb = hybrid_series(store, chunks, a.queries)
    hyb["in_process"] = hybrid_series(store, chunks, a.queries, in_process=True)
    hyb["in_process_fts5_keywords"] = hybrid_series(
        store, chunks, a.queries, in_process=True, keywords="fts5"
    )
    emb = query_embedding(chunks)
    scale = scaling(sizes, vec, n_mem, a.queries, f16["memories_in_process"])
    foot = footprint(store.con)
    store.close()
    targets = _targets(vec, hyb, f16, scale)
    emit(
        "search",
        {
            "rows": {"memories": n_mem, "chunks": n_chunks, "messages": foot["messages"]},
            "footprint": foot,
            "footprint_before_upgrade": before,  # the same file before migration 7, when it was cached
            "upgrade_cpu_s": upgrade_cpu_s,
            "float16_rescoring": f16,
            "build_s": build_s,
            "queries": a.queries,
            "vector": vec,
            "hybrid": hyb,
            "query_embedding": emb,
            "scaling": scale,
            "load_average_1_5_15": [round(x, 2) for x in load],
            "clock": "cpu" if a.cpu else "wall",  # of the vector series and scaling (hybrid: both)
            "targets": targets,
        },
        _summary((n_mem, n_chunks), vec, hyb, f16, scale, foot, before, emb, load, targets),
    )


if __name__ == "__main__":
    main()
