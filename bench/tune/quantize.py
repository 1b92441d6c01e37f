"""Which int8 copy of the model, if any (issue 19): speed per CPU-second, agreement with float32 and the
search evaluation, every variant against float32 in the same run; prints JSON.

    .venv/bin/python -m bench quantize [--plans all,keep-ffn-out] [--threads 20] [--repeat 3]
                                       [--eval tune|test|both|none]

1. The int8 copies (embeddings.onnx_quantize, one per plan) are made from the cached float32 ONNX file
   into bench/.data/quant/.
2. Speed: the chunks an import of bench/perf/importing.py's export stores (`--threads` conversations of 20
   messages), encoded by each variant in this process, round-robin `--repeat` times; CPU seconds
   (user + system, both encoder threads) per pass, median and min-max. Two ways of batching: `batch32`
   (length-sorted batches of 32, what float32 does) and `single` (one text per call, what int8 does so
   that a text's vector does not depend on its batch).
3. Agreement: cosine of each variant's vector with float32's for every chunk (mean, 1st percentile,
   min), and for `batch32` how far a text alone is from the same text inside its batch.
4. `--eval`: bench/quality/eval_longmem.py's retrievers on databases built with each variant (cached in
   bench/.data/ under the variant's name): recall@10 of the shipped hybrid and of vector-only beside
   float32's. Choose on `tune`; report `test` only for the choice. An eval plan `mix:PLAN` searches the
   float32 databases with PLAN's int8 query vectors (what mixing the two would cost).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.lib.common import DATA, MODEL_NAME, emit
from embeddings.embedder import default_model_dir
from embeddings.onnx_embedder import OnnxEmbedder
from embeddings.onnx_export import ensure_onnx, model_hash
from embeddings.onnx_quantize import PLANS, quantize


def chunk_texts(n_threads: int) -> list[str]:
    """The chunk texts an import of bench/perf/importing.py's export of `n_threads` conversations embeds."""
    from bench.perf import importing

    path = DATA / "quant" / f"export-{n_threads}.json"
    if not path.exists():
        importing.export(path, n_threads)
    emb = OnnxEmbedder()
    out = []
    for conv in json.loads(path.read_text()):
        node = conv["current_node"]
        mapping = conv["mapping"]
        while node and mapping[node]["message"] is not None:
            parts = mapping[node]["message"]["content"]["parts"]
            text = parts[0] if parts else ""
            if text.strip():
                out += [text[a:b] for a, b in emb.chunk(text)]
            node = mapping[node]["parent"]
    return out


def variant_file(plan: str) -> Path:
    model_dir = default_model_dir()
    assert model_dir is not None
    src = ensure_onnx(model_dir)
    if plan == "float32":
        return src
    dest = DATA / "quant" / f"{model_hash(model_dir)[:16]}-int8-{plan}.onnx"
    if not dest.exists():
        t0 = time.perf_counter()
        kept = quantize(src, dest, PLANS[plan], model_dir)
        print(
            f"quantized {plan} in {time.perf_counter() - t0:.1f} s, float32 kept: {len(kept)}",
            file=sys.stderr,
        )
    return dest


MODES = {"batch32": (32, 2), "single": (1, 2), "batch32-t1": (32, 1), "single-t1": (1, 1)}


def fused_file() -> Path:
    """float32 through onnxruntime's offline transformer optimizer (attention, LayerNorm, GELU fusions)."""
    src = variant_file("float32")
    dest = DATA / "quant" / f"{src.stem}-fused.onnx"
    if not dest.exists():
        from onnxruntime.transformers.optimizer import optimize_model

        opt = optimize_model(str(src), model_type="bert", num_heads=12, hidden_size=384, opt_level=1)
        print(f"fusions: {opt.get_fused_operator_statistics()}", file=sys.stderr)
        opt.save_model_to_file(str(dest))
    return dest


def embedder(plan: str, batch_size: int, threads: int = 2) -> OnnxEmbedder:
    path = fused_file() if plan == "float32-fused" else variant_file(plan)
    emb = OnnxEmbedder(onnx_file=path, batch_size=batch_size, bulk_threads=threads)
    emb.load()
    assert emb.backend == "onnx", emb.backend_problem
    if plan == "float32-fused":
        emb.name = f"{MODEL_NAME}#{plan}"  # its own evaluation cache
    elif plan != "float32":
        emb.name = f"{MODEL_NAME}#int8-{plan}"
    return emb


def cpu() -> float:
    t = os.times()
    return t[0] + t[1]


def speed(
    plans: list[str], modes: list[str], texts: list[str], repeat: int
) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    runs: dict[str, list[float]] = {}
    vectors: dict[str, np.ndarray] = {}
    embs = {f"{p}/{m}": embedder(p, *MODES[m]) for p in plans for m in modes}
    for _ in range(repeat):
        for key, emb in embs.items():
            c0 = cpu()
            vecs = emb.embed_documents(texts)
            runs.setdefault(key, []).append(cpu() - c0)
            vectors[key] = vecs
    out = {}
    base = statistics.median(runs[f"float32/{modes[0]}"])
    for key, xs in runs.items():
        med = statistics.median(xs)
        out[key] = {
            "cpu_s_median": round(med, 2),
            "cpu_s_min_max": [round(min(xs), 2), round(max(xs), 2)],
            "chunks_per_cpu_s": round(len(texts) / med, 1),
            "speedup_vs_float32": round(base / med, 2),
        }
    return out, vectors


def agreement(vectors: dict[str, np.ndarray], texts: list[str], plans: list[str]) -> dict[str, Any]:
    ref = vectors[next(k for k in vectors if k.startswith("float32/"))]
    out: dict[str, Any] = {}
    for key, vecs in vectors.items():
        cos = (vecs * ref).sum(axis=1)
        out[key] = {
            "cos_mean": round(float(cos.mean()), 4),
            "cos_p1": round(float(np.percentile(cos, 1)), 4),
            "cos_min": round(float(cos.min()), 4),
        }
    for plan in plans:  # a text alone vs the same text inside its length-sorted batch of 32
        if f"{plan}/batch32" not in vectors:
            continue
        emb = embedder(plan, 32)
        idx = np.linspace(0, len(texts) - 1, 24).astype(int)
        alone = np.stack([emb.embed_query(texts[i]) for i in idx])
        out[f"{plan}/batch32"]["alone_vs_batch_cos_min"] = round(
            float((alone * vectors[f"{plan}/batch32"][idx]).sum(axis=1).min()), 4
        )
    return out


def evaluate(plans: list[str], split: str) -> dict[str, Any]:
    from bench.quality import eval_longmem as lm

    questions = lm.load_jsonl(lm.LONGMEM / "questions.jsonl")
    if split != "both":
        questions = [q for q in questions if q["split"] == split]
    kinds = list(dict.fromkeys(q["kind"] for q in questions))
    out = {}
    for plan in plans:
        mixed = plan.startswith("mix:")  # float32 stored vectors searched with int8 query vectors
        emb = embedder(plan.removeprefix("mix:"), 1 if plan.removeprefix("mix:") in PLANS else 32)
        if mixed:
            emb.name = MODEL_NAME  # the float32 databases
        t0 = time.monotonic()
        folder, built = lm.ensure_databases(emb)
        build = time.monotonic() - t0
        res = lm.evaluate(folder, emb, questions)
        splits = lm.summarise(res["results"], kinds)
        out[plan] = {
            "build_s": round(build, 1),
            "built": built,
            "splits": {
                name: {r: s["overall"][r]["recall@10"] for r in ("hybrid", "vector", "keyword")}
                for name, s in splits.items()
            },
        }
        print(f"eval {plan}: {out[plan]['splits']}", file=sys.stderr)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--plans", default=",".join(PLANS), help="int8 plans (embeddings/onnx_quantize.py)")
    ap.add_argument(
        "--threads", type=int, default=20, help="conversations of bench/perf/importing.py's export"
    )
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--eval", choices=("tune", "test", "both", "none"), default="none")
    ap.add_argument("--eval-plans", help="plans to evaluate (default: --plans); float32 is always run")
    ap.add_argument("--no-speed", action="store_true")
    ap.add_argument("--modes", default="batch32,single", help=f"batching/threads: {', '.join(MODES)}")
    a = ap.parse_args()
    plans = ["float32", *[p for p in a.plans.split(",") if p]]
    report: dict[str, Any] = {"plans": plans, "load_average_1_5_15": [round(x, 2) for x in os.getloadavg()]}
    summary = []
    if not a.no_speed:
        texts = chunk_texts(a.threads)
        report["chunks"] = len(texts)
        report["speed"], vectors = speed(plans, a.modes.split(","), texts, a.repeat)
        report["agreement"] = agreement(vectors, texts, plans[1:])
        for key, s in report["speed"].items():
            g = report["agreement"][key]
            summary.append(f"{key} {s['speedup_vs_float32']}x cos {g['cos_mean']}/{g['cos_min']}")
    if a.eval != "none":
        eval_plans = ["float32", *[p for p in (a.eval_plans or a.plans).split(",") if p and p != "float32"]]
        report["eval"] = evaluate(eval_plans, a.eval)
        for plan, e in report["eval"].items():
            summary.append(f"{plan} R@10 {e['splits']}")
    emit("quantize", report, "; ".join(summary))


if __name__ == "__main__":
    main()
