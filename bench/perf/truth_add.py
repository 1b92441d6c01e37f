"""What the truth check costs when a memory is added (prints JSON).

    .venv/bin/python -m bench truth_add [--memories N] [--adds N]

A temporary chat.db gets N memories (the texts of bench/eval/truth, repeated with a counter until N),
embedded with the REAL model in batches; then each of ADDS new texts is added with `Store.add_memory`, and, on the
same vectors and the same database in the same run, the two checks are timed apart:
- baseline: the check memapp had before issue 17, one KNN for the nearest memory of the same category
  (merge when cosine >= 0.90);
- truth: `Store.plan_memory`, the KNN for the 6 nearest memories of any category, their rows, and the
  classifier (store.truth) over each.
Also the time to embed one memory (the model is loaded once, before timing), which both paths pay.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from bench.lib.common import emit, machine, timing
from bench.lib.truth_data import fresh_pairs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--memories", type=int, default=2000)
    ap.add_argument("--adds", type=int, default=40)
    args = ap.parse_args()

    from embeddings.embedder import SentenceTransformerEmbedder
    from store import Store

    pairs = fresh_pairs()
    texts = list(dict.fromkeys([p.old for p in pairs] + [p.new for p in pairs]))
    seed = [texts[i % len(texts)] + ("" if i < len(texts) else f" (note {i})") for i in range(args.memories)]
    fresh = [f"{texts[(i * 7) % len(texts)]} — item {i}" for i in range(args.adds)]
    emb = SentenceTransformerEmbedder()
    emb.load()
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "chat.db", embedder=emb)
        t0 = time.perf_counter()
        for i, text in enumerate(seed):  # no model here: the vectors come in batches below
            store.add_memory(text, ("preference", "project", "skill", "fact")[i % 4], embed=False)
        while missing := store.memories_missing_vectors(256):
            store.embed_memories(missing)
        build_s = time.perf_counter() - t0
        vecs = emb.embed_documents(fresh)
        base_ms, truth_ms, embed_ms, add_ms = [], [], [], []
        for i, (text, vec) in enumerate(zip(fresh, vecs, strict=True)):
            category = ("preference", "project", "skill", "fact")[i % 4]
            t0 = time.perf_counter()
            store.vectors.knn_memories(vec, 1, category=category)
            base_ms.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            store.plan_memory(text, category, vec)
            truth_ms.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            emb.embed_documents([text])
            embed_ms.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            store.add_memory(text, category)
            add_ms.append((time.perf_counter() - t0) * 1000)
        store.close()
    result = {
        "machine": machine(),
        "memories": args.memories,
        "adds": args.adds,
        "build_seconds": round(build_s, 1),
        "baseline_check_ms": timing(base_ms),
        "truth_check_ms": timing(truth_ms),
        "embed_one_ms": timing(embed_ms),
        "add_memory_ms": timing(add_ms),
        "truth_minus_baseline_p50_ms": round(statistics.median(truth_ms) - statistics.median(base_ms), 3),
    }
    emit(
        "truth_add",
        result,
        f"add_memory median {result['add_memory_ms']['p50_ms']} ms at {args.memories} memories; truth check "
        f"{result['truth_check_ms']['p50_ms']} ms vs baseline {result['baseline_check_ms']['p50_ms']} ms; "
        f"embedding {result['embed_one_ms']['p50_ms']} ms",
    )


if __name__ == "__main__":
    main()
