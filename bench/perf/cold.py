"""Semantic commands from a cold shell: whole-process CPU of `memapp search` against `--keyword-only`,
and of `memapp memory add` against the same with embedding disabled; prints JSON.

    .venv/bin/python -m bench cold [--runs 5 | --quick] [--old-runs 2]

Each command is a fresh process (`memapp ...` as a user types it), timed by the CPU seconds (user + sys)
the OS charged to it, which a busy shared machine disturbs far less than wall time; peak RSS beside it.
The pairs alternate (search, keyword-only, search, ...) after one warm-up of each (disk caches, the
bytecode, and the model's ONNX copy, made once per model). The chat.db is built once through the store's
write paths (bench/lib/search_data.py's builder: synthetic 384-d vectors recorded as all-MiniLM-L6-v2's, so
the real model's query vector searches them): 5,000 memories and 40,000 message chunks.

Also, as the baseline the issue measured: the same semantic search through the old path
(MEMAPP_EMBED_BACKEND=sentence-transformers: torch + transformers), `--old-runs` times.

Also: the TUI's "load demo" into a new chat.db, in a fresh process, with the vectors shipped beside the
demo and with the model embedding it.

Targets (issue 19): search CPU <= 2.5x keyword-only; memory add <= 2.5x with embedding disabled; load
demo <= 5 s.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench.lib.common import data_file, emit

MEMAPP = str(Path(sys.executable).with_name("memapp"))
QUERY = "what did we say about backup scripts"
N_MEM, N_CHUNKS = 5_000, 40_000
BUILD = 1


def run(argv: list[str], env: dict[str, str] | None = None) -> dict[str, float]:
    """One fresh `memapp` process: its CPU seconds, wall seconds and peak RSS (MiB)."""
    import time

    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [MEMAPP, *argv], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env={**os.environ, **(env or {})}
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode() if proc.stderr else ""
    if status != 0:
        raise SystemExit(f"memapp {' '.join(argv)} failed ({status}): {err[-500:]}")
    return {"cpu_s": usage.ru_utime + usage.ru_stime, "wall_s": wall, "rss_mib": usage.ru_maxrss / 1024}


DEMO = (
    "import sys, tempfile, pathlib\n"
    "from store.store import Store\n"
    "from store.importing import load_demo\n"
    "with tempfile.TemporaryDirectory() as d, Store(pathlib.Path(d) / 'chat.db') as s:\n"
    "    r = load_demo(s, use_shipped_vectors=sys.argv[1] == 'shipped')\n"
    "    assert r.ok and s.stats()['embedded_chunks'] > 0\n"
    "    print('torch' in sys.modules, s.semantic_state.replace(' ', '_'))\n"
)


def demo_load(kind: str) -> dict[str, Any]:
    """`load demo` (the TUI's) into a new chat.db in a fresh process: with the shipped vectors, or
    embedding everything with the model (onnxruntime)."""
    import time

    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", DEMO, kind], stdout=subprocess.PIPE, text=True)
    out = proc.stdout.read() if proc.stdout else ""
    _, status, usage = os.wait4(proc.pid, 0)
    if status != 0:
        raise SystemExit(f"demo load ({kind}) failed")
    torch, state = out.split()[:2]
    return {
        "wall_s": round(time.perf_counter() - t0, 2),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
        "torch_imported": torch == "True",
        "model": state,
    }


def stats(runs: list[dict[str, float]]) -> dict[str, Any]:
    out: dict[str, Any] = {"n": len(runs)}
    for key in ("cpu_s", "wall_s", "rss_mib"):
        vals = [r[key] for r in runs]
        out[key] = {
            "median": round(statistics.median(vals), 3),
            "min": round(min(vals), 3),
            "max": round(max(vals), 3),
        }
    return out


def ratio(a: dict[str, Any], b: dict[str, Any]) -> float:
    return round(a["cpu_s"]["median"] / b["cpu_s"]["median"], 2)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--old-runs", type=int, default=2, help="cold searches through sentence-transformers")
    ap.add_argument("--quick", action="store_true", help="3 runs of each, 1 of the old path")
    a = ap.parse_args()
    if a.quick:
        a.runs, a.old_runs = 3, 1
    from bench.lib.search_data import build, populations

    db = data_file(f"cold-{N_MEM}-{N_CHUNKS}-b{BUILD}.db", stale="cold-")
    if not db.exists():
        build(db, *populations(N_MEM, N_CHUNKS))
    from store import db as store_db

    store_db.connect(db).close()  # a file cached by an older schema is upgraded here, not in a timed run
    work = db.with_name("cold-work.db")  # memory add writes: a copy
    shutil.copy(db, work)
    off = db.with_name("cold-no-embedding.toml")
    off.write_text("[embedding]\nenabled = false\n")
    no_cfg = {"MEMAPP_CONFIG": str(db.with_name("cold-no-config.toml"))}
    search = ["--db", str(db), "search", QUERY, "--no-touch", "--json"]
    add = ["--db", str(work), "memory", "add", "--category", "fact", "--json"]
    load = os.getloadavg()
    # Warm-up: disk caches, bytecode, and the ONNX copy of the model (made once, outside the timings).
    run(["--db", str(db), "embed", "--prepare"], no_cfg)
    run(search, no_cfg)
    run([*search, "--keyword-only"], no_cfg)
    series: dict[str, list[dict[str, float]]] = {
        k: [] for k in ("search", "keyword", "add", "add_off", "old")
    }
    for i in range(a.runs):
        series["search"].append(run(search, no_cfg))
        series["keyword"].append(run([*search, "--keyword-only"], no_cfg))
        series["add"].append(run([*add, f"the nightly backup script number {i} runs at 3am"], no_cfg))
        series["add_off"].append(
            run([*add, f"the weekly backup script number {i} runs on sunday"], {"MEMAPP_CONFIG": str(off)})
        )
    for _ in range(a.old_runs):
        series["old"].append(run(search, {**no_cfg, "MEMAPP_EMBED_BACKEND": "sentence-transformers"}))
    demo = {"shipped_vectors": demo_load("shipped"), "embedded_by_the_model": demo_load("model")}
    s = {k: stats(v) for k, v in series.items() if v}
    ratios = {
        "search_vs_keyword_only": ratio(s["search"], s["keyword"]),
        "memory_add_vs_embedding_disabled": ratio(s["add"], s["add_off"]),
    }
    if "old" in s:
        ratios["old_path_search_vs_new"] = ratio(s["old"], s["search"])
    targets = {
        "search_le_2.5x_keyword": ratios["search_vs_keyword_only"] <= 2.5,
        "memory_add_le_2.5x_disabled": ratios["memory_add_vs_embedding_disabled"] <= 2.5,
        "demo_load_le_5s": demo["shipped_vectors"]["wall_s"] <= 5,
    }
    summary = (
        f"cold shell: search {s['search']['cpu_s']['median']:.2f} s CPU vs keyword-only "
        f"{s['keyword']['cpu_s']['median']:.2f} ({ratios['search_vs_keyword_only']:.2f}x); memory add "
        f"{s['add']['cpu_s']['median']:.2f} vs {s['add_off']['cpu_s']['median']:.2f} "
        f"({ratios['memory_add_vs_embedding_disabled']:.2f}x)"
        + (
            f"; old path search {s['old']['cpu_s']['median']:.2f} s CPU, "
            f"{s['old']['rss_mib']['median']:.0f} MiB"
            if "old" in s
            else ""
        )
        + f"; load demo {demo['shipped_vectors']['wall_s']:.1f} s ({demo['shipped_vectors']['cpu_s']:.1f} s CPU) "
        f"with its shipped vectors vs {demo['embedded_by_the_model']['wall_s']:.1f} s embedding it"
        + f"; load average {load[0]:.1f}; targets "
        + ("met" if all(targets.values()) else "MISSED: " + ", ".join(k for k, v in targets.items() if not v))
    )
    emit(
        "cold",
        {
            "db": {"memories": N_MEM, "chunks": N_CHUNKS},
            "query": QUERY,
            "runs": s,
            "ratios": ratios,
            "demo_load": demo,
            "load_average_1_5_15": [round(x, 2) for x in load],
            "targets": targets,
        },
        summary,
    )


if __name__ == "__main__":
    main()
