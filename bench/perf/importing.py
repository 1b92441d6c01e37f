"""Import throughput against the model's own speed, and the footprint it leaves; prints JSON.

    .venv/bin/python -m bench importing [--quick | --threads 100 | --full] [--runs 3] [--no-embed-threads 2000]

Generates a ChatGPT export (`conversations.json`: a `mapping` tree per conversation walked back from
`current_node`, a hidden system root, regenerated answers on side branches) with 20 messages per thread
of realistic lengths (user turns ~35 words, answers ~200, long tails), then, each in a fresh process so
neither warms up the other:

1. `store.importing.pipeline.import_paths` with embedding (the model is loaded first and timed apart),
2. the encoder alone on the very chunks that import stored (read back from chat.db), in one call: the
   runtime's raw rate, the limit for the embedding import,
2b. the same import through the old path (sentence-transformers + torch, MEMAPP_EMBED_BACKEND), for the
   new-vs-old ratio in messages per CPU-second (issue 19: >= 3x; `--no-old` skips it),
   (1, 2 and 2b run `--runs` interleaved rounds; each figure is the median round, with min-max beside it)
3. `import_paths(embed=False)` of the 2,000-thread / 40,000-message export (token counts come from a
   helper process, embeddings/token_worker.py; `cpu_s` / `helper_cpu_s` are the CPU seconds of the
   import's process and of that helper, steadier than wall time on a busy machine).

4. summaries (issue 28.25): `memapp import --no-embed` of 500 threads of 40 messages (20,000 messages, every
   thread long enough to be summarised), three ways, each a fresh `memapp` process on a fresh chat.db: plain
   (a big import hands its summaries to a background `memapp summarize --due`), `--no-summarize` (the
   baseline) and `--summarize-now` (what plain did before); then how long the background process takes
   to finish, and that it made every summary, the same as `--summarize-now`'s. `--summaries-only` runs
   just this part.

Targets (issue 7, 19): embedding import >= 0.8x the raw encode rate (messages per CPU-second); --no-embed >= 5,000
messages/s; (28.25) a plain import's summaries cost at most half the import's own time: plain <= 1.5x the
--no-summarize baseline, wall and CPU. Also reported: chat.db bytes per 1,000 messages with and without vectors and each import's
peak RSS. The embedding run defaults to 100 threads (2,000 messages): on 2 cores the model encodes about
20-30 chunks a second, so the full 40,000 messages take about an hour per pass; `--full` runs it anyway.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.lib.common import DATA_VERSION, ROOT, Words, data_file, emit, remove_db

PER_THREAD = 20
EXPORT = 1  # bump when export() changes what it writes


def export(path: Path, n_threads: int, seed: int = 3) -> dict[str, int]:
    """Write a ChatGPT-format conversations.json; returns what is on the active paths."""
    words = Words(seed)
    rng = np.random.default_rng(seed)
    convs, n_messages, n_words = [], 0, 0
    t = 1.65e9
    for h in range(n_threads):
        t += float(rng.exponential(40_000))
        mapping: dict[str, Any] = {
            "root": {"id": "root", "message": None, "parent": None, "children": ["sys"]}
        }
        mapping["sys"] = _node("sys", "root", "system", "", None, hidden=True)
        parent, when = "sys", t
        for i in range(PER_THREAD):
            role = "user" if i % 2 == 0 else "assistant"
            median, sigma, hi = (35, 0.9, 600) if role == "user" else (200, 0.7, 1500)
            n = int(np.clip(rng.lognormal(np.log(median), sigma), 3, hi))
            text = words.text(rng, n, h % 40, h % 400, h)
            node = f"{h:05d}-{i:02d}"
            when += float(rng.uniform(20, 300))
            mapping[node] = _node(node, parent, role, text, when)
            mapping[parent]["children"].append(node)
            if role == "assistant" and rng.random() < 0.05:  # a regenerated answer the person did not keep
                alt = node + "-alt"
                mapping[alt] = _node(alt, parent, role, words.text(rng, n, h % 40, h % 400, h), when)
                mapping[parent]["children"].insert(0, alt)
            parent = node
            n_messages += 1
            n_words += n
        convs.append(
            {
                "id": f"conv-{h}",
                "conversation_id": f"conv-{h}",
                "title": f"Conversation {h}",
                "create_time": t,
                "update_time": when,
                "current_node": parent,
                "mapping": mapping,
                "default_model_slug": "gpt-4o",
            }
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(convs))
    return {"threads": n_threads, "messages": n_messages, "words": n_words}


def _node(
    node: str, parent: str, role: str, text: str, when: float | None, hidden: bool = False
) -> dict[str, Any]:
    meta = {"is_visually_hidden_from_conversation": True} if hidden else {}
    return {
        "id": node,
        "parent": parent,
        "children": [],
        "message": {
            "id": node,
            "author": {"role": role, "name": None, "metadata": {}},
            "create_time": when,
            "update_time": None,
            "content": {"content_type": "text", "parts": [text]},
            "status": "finished_successfully",
            "end_turn": True,
            "weight": 0.0 if hidden else 1.0,
            "metadata": meta,
            "recipient": "all",
        },
    }


def child(argv: list[str], backend: str = "onnx") -> tuple[dict[str, Any], float]:
    """Run this script in a fresh process with the given encoder; its JSON answer and peak RSS (MiB)."""
    env = dict(os.environ, MEMAPP_EMBED_BACKEND=backend)
    proc = subprocess.Popen(
        [sys.executable, "-m", "bench.perf.importing", "--child", *argv],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
    )
    out = proc.stdout.read() if proc.stdout else ""
    _, status, usage = os.wait4(proc.pid, 0)
    if status != 0:
        raise SystemExit(f"bench/perf/importing.py {' '.join(argv)} failed ({status})")
    return json.loads(out), round(usage.ru_maxrss / 1024, 1)


# -- the child processes -------------------------------------------------------------------------------


def run_import(db: str, export_path: str, embed: bool) -> dict[str, Any]:
    from store import Store
    from store.importing.pipeline import import_paths

    remove_db(Path(db))
    store = Store(db)
    t0 = time.perf_counter()
    if embed:
        store.load_model()
    load_s = time.perf_counter() - t0
    t0, cpu0 = time.perf_counter(), os.times()
    report = import_paths(store, [export_path], embed=embed)
    seconds = time.perf_counter() - t0
    cpu = [round(b - a, 2) for a, b in zip(cpu0, os.times(), strict=False)]
    chunks = store.scalar("SELECT count(*) FROM message_chunks")
    messages = report.messages_added
    problems = store.check_indexes()
    store.close()
    cpu_s = cpu[0] + cpu[1]
    return {
        "backend": getattr(store.embedder, "backend", None) or "sentence-transformers",
        "seconds": round(seconds, 2),
        "model_load_s": round(load_s, 2),
        "messages": messages,
        "messages_per_cpu_s": round(messages / max(cpu_s, 1e-9), 1),
        "threads": report.threads_added,
        "chunks": chunks,
        "errors": len(report.errors),
        "messages_per_s": round(messages / seconds, 1),
        "db_bytes": Path(db).stat().st_size,
        "index_problems": problems,
        # CPU seconds of this process and of the helpers it waited for (the token-counting process):
        # on a busy machine they move less than `seconds` does.
        "cpu_s": round(cpu[0] + cpu[1], 2),
        "helper_cpu_s": round(cpu[2] + cpu[3], 2),
    }


def run_encode(db: str) -> dict[str, Any]:
    from store import Store

    store = Store(db)
    rows: list[Any] = store.con.execute(
        "SELECT m.content, c.start_char, c.end_char FROM message_chunks c "
        "JOIN messages m ON m.id = c.message_id ORDER BY c.id"
    ).fetchall()
    messages = store.scalar("SELECT count(DISTINCT message_id) FROM message_chunks")
    texts = [content[a:b] for content, a, b in rows]
    embedder = store.embedder
    assert embedder is not None
    embedder.load()  # type: ignore[attr-defined]
    batch = store.config.embedding.batch_size
    t0, cpu0 = time.perf_counter(), os.times()
    # The runtime alone, in one call: onnxruntime through the embedder's own batching (tokenize, sort by
    # length, two threads), or SentenceTransformer.encode for the old path.
    embedder.embed_documents(texts)
    seconds = time.perf_counter() - t0
    cpu = [b - a for a, b in zip(cpu0, os.times(), strict=False)]
    cpu_s = cpu[0] + cpu[1]
    backend = getattr(embedder, "backend", None) or "sentence-transformers"
    store.close()
    return {
        "backend": backend,
        "seconds": round(seconds, 2),
        "cpu_s": round(cpu_s, 2),
        "chunks": len(texts),
        "messages": messages,
        "batch_size": batch,
        "chunks_per_s": round(len(texts) / seconds, 1),
        "messages_per_s": round(messages / seconds, 1),
        "messages_per_cpu_s": round(messages / max(cpu_s, 1e-9), 1),
    }


# -- the run ---------------------------------------------------------------------------------------------


def _cli(db: Path, *args: str) -> tuple[dict[str, Any], float, float]:
    """`memapp --db DB import ...` in a fresh process: its JSON report, wall seconds and CPU seconds."""
    env = dict(os.environ, MEMAPP_CONFIG=str(db.with_suffix(".toml")))
    db.with_suffix(".toml").write_text("[embedding]\nenabled = false\n")
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "app", "--db", str(db), "import", *args, "--json"],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    out = proc.stdout.read() if proc.stdout else ""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if status != 0:
        raise SystemExit(f"memapp import {' '.join(args)} failed ({status})")
    return json.loads(out), wall, usage.ru_utime + usage.ru_stime


def _summaries_done(db: Path, timeout: float = 3600) -> tuple[float, int, dict[int, str]]:
    """Wait for the background summariser: (seconds waited, threads still behind, summaries by thread)."""
    from store import Store
    from store.importing.pipeline import summaries_due

    t0 = time.perf_counter()
    while True:
        with Store(db, embedder=None) as store:
            behind = len(summaries_due(store))
            if not behind or time.perf_counter() - t0 > timeout:
                rows: list[Any] = store.con.execute(
                    "SELECT thread_id, content FROM thread_summaries"
                ).fetchall()
                return time.perf_counter() - t0, behind, {int(r[0]): str(r[1]) for r in rows}
        time.sleep(0.5)


def summaries_run(threads: int, per_thread: int = 40) -> dict[str, Any]:
    """Part 4 of the module docstring: plain vs --no-summarize vs --summarize-now, same export, same run."""
    key = f"d{DATA_VERSION}-e{EXPORT}-s{per_thread}"
    global PER_THREAD
    path = data_file(f"import-summaries-{threads}-{key}", stale="import-summaries-") / "conversations.json"
    if not path.exists():
        saved, PER_THREAD = PER_THREAD, per_thread
        try:
            export(path, threads)
        finally:
            PER_THREAD = saved
    runs: dict[str, Any] = {}
    for name, flags in (
        ("no_summarize", ["--no-summarize"]),
        ("plain", []),
        ("summarize_now", ["--summarize-now"]),
    ):
        db = data_file(f"import-summaries-{name}.db")
        remove_db(db)
        report, wall, cpu = _cli(db, str(path), "--no-embed", *flags)
        runs[name] = {
            "seconds": round(wall, 2),
            "cpu_s": round(cpu, 2),
            "messages": report["messages_added"],
            "messages_per_s": round(report["messages_added"] / wall, 1),
            "summaries_background": report["summaries_background"],
        }
        if name == "plain":
            waited, behind, made = _summaries_done(db)
            runs[name]["background_done_after_s"] = round(wall + waited, 2)
            runs[name]["threads_left_behind"] = behind
            plain_summaries = made
        if name == "summarize_now":
            _, _, made = _summaries_done(db, timeout=0)
            runs[name]["same_summaries_as_background"] = made == plain_summaries
            runs[name]["summaries"] = len(made)
    base = runs["no_summarize"]
    plain = runs["plain"]
    return {
        "export": {"threads": threads, "messages": threads * per_thread},
        **runs,
        "plain_vs_no_summarize": {
            "wall": round(plain["seconds"] / base["seconds"], 3),
            "cpu": round(plain["cpu_s"] / base["cpu_s"], 3),
        },
        "summarize_now_vs_no_summarize_cpu": round(runs["summarize_now"]["cpu_s"] / base["cpu_s"], 2),
    }


def median_run(runs: list[tuple[dict[str, Any], float]]) -> tuple[dict[str, Any], float]:
    """The run with the median messages per CPU-second, with every run's CPU seconds and rate beside it."""
    ordered = sorted(runs, key=lambda r: r[0]["messages_per_cpu_s"])
    out, rss = ordered[len(ordered) // 2]
    rates = [r[0]["messages_per_cpu_s"] for r in ordered]
    cpus = sorted(r[0]["cpu_s"] for r in ordered)
    return {
        **out,
        "runs": len(runs),
        "rate_min_max": [rates[0], rates[-1]],
        "cpu_s_min_max": [cpus[0], cpus[-1]],
    }, rss


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, default=100, help="threads in the embedding run (default 100)")
    ap.add_argument(
        "--full", action="store_true", help="the embedding run on all 2,000 threads (about 2 hours)"
    )
    ap.add_argument("--no-embed-threads", type=int, default=2000)
    ap.add_argument("--quick", action="store_true", help="20 threads with embeddings, 500 without")
    ap.add_argument("--no-old", action="store_true", help="skip the old (sentence-transformers) import run")
    ap.add_argument("--runs", type=int, default=3, help="rounds of new import, raw encode, old import")
    ap.add_argument("--summaries-only", action="store_true", help="only part 4: summaries vs --no-summarize")
    ap.add_argument("--summary-threads", type=int, default=500, help="threads of 40 messages in part 4")
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.quick:
        a.threads, a.no_embed_threads, a.runs = 20, 500, 1
    if a.child:
        kind, *rest = a.child
        out = run_encode(rest[0]) if kind == "encode" else run_import(rest[0], rest[1], kind == "import")
        print(json.dumps(out))
        return
    if a.quick:
        a.summary_threads = 100
    if a.summaries_only:
        load = os.getloadavg()
        summaries = summaries_run(a.summary_threads)
        summaries["load_average_1_5_15"] = [round(x, 2) for x in load]
        emit("import_summaries", summaries, _summaries_line(summaries))
        return
    n_embed = a.no_embed_threads if a.full else a.threads
    key = f"d{DATA_VERSION}-e{EXPORT}"
    exports = {}
    for n in sorted({n_embed, a.no_embed_threads}):
        path = data_file(f"import-{n}-{key}", stale=f"import-{n}-") / "conversations.json"
        exports[n] = (path, export(path, n) if not path.exists() else None)
    db = str(data_file("import-embed.db"))
    load = os.getloadavg()
    # Interleaved rounds (new import, raw encode of its chunks, old import), so a busy moment of the
    # machine lands on all three alike; each figure is the median round, with the min-max beside it.
    rounds: dict[str, list[tuple[dict[str, Any], float]]] = {"imp": [], "enc": [], "old": []}
    for _ in range(a.runs):
        rounds["imp"].append(child(["import", db, str(exports[n_embed][0])]))
        rounds["enc"].append(child(["encode", db]))
        if not a.no_old:
            rounds["old"].append(child(["import", db, str(exports[n_embed][0])], "sentence-transformers"))
    (imp, imp_rss), (enc, enc_rss) = median_run(rounds["imp"]), median_run(rounds["enc"])
    old, old_rss = median_run(rounds["old"]) if rounds["old"] else (None, None)
    db_plain = str(data_file("import-plain.db"))
    plain, plain_rss = child(["no-embed", db_plain, str(exports[a.no_embed_threads][0])])
    # Per CPU-second (steadier than wall time on a shared machine), each against its baseline in this run.
    ratio = round(imp["messages_per_cpu_s"] / enc["messages_per_cpu_s"], 3)
    new_vs_old = round(imp["messages_per_cpu_s"] / old["messages_per_cpu_s"], 2) if old else None
    per_1k = {
        "with_vectors_mb": round(imp["db_bytes"] / imp["messages"] * 1000 / 1e6, 3),
        "without_vectors_mb": round(plain["db_bytes"] / plain["messages"] * 1000 / 1e6, 3),
    }
    targets = {
        "import_ge_0.8x_raw_encode": ratio >= 0.8,
        "no_embed_ge_5000_msgs_per_s": plain["messages_per_s"] >= 5000,
    }
    if new_vs_old is not None:
        targets["import_ge_3x_old_path_per_cpu_s"] = new_vs_old >= 3
    old_text = (
        f"; old path (sentence-transformers) {old['messages_per_cpu_s']:.1f} msg/CPU-s, new {new_vs_old:.1f}x"
        if old
        else ""
    )
    summary = (
        f"import ({imp['backend']}): {imp['messages']} messages ({imp['chunks']} chunks) at "
        f"{imp['messages_per_cpu_s']:.1f} msg/CPU-s vs raw encode {enc['messages_per_cpu_s']:.1f} msg/CPU-s "
        f"({ratio:.2f}x){old_text}; --no-embed {plain['messages']} messages "
        f"at {plain['messages_per_s']:.0f} msg/s; chat.db {per_1k['with_vectors_mb']:.2f} MB per 1k messages "
        f"with vectors ({per_1k['without_vectors_mb']:.2f} without); peak RSS {imp_rss:.0f} MiB importing "
        f"with the model; targets "
        f"{'met' if all(targets.values()) else 'MISSED: ' + ', '.join(k for k, v in targets.items() if not v)}"
    )
    summaries = summaries_run(a.summary_threads)
    targets["summaries_le_half_the_import"] = summaries["plain_vs_no_summarize"]["wall"] <= 1.5
    summary += "; " + _summaries_line(summaries)
    emit(
        "import",
        {
            "summaries": summaries,
            "export": {str(n): v[1] for n, v in exports.items() if v[1]},
            "embed_import": imp,
            "raw_encode": enc,
            "ratio_import_to_encode": ratio,
            "old_path_import": old,
            "ratio_new_to_old_per_cpu_s": new_vs_old,
            "no_embed_import": plain,
            "load_average_1_5_15": [round(x, 2) for x in load],
            "peak_rss_mib": {
                "import_with_model": imp_rss,
                "raw_encode": enc_rss,
                "import_no_embed": plain_rss,
                "import_old_path": old_rss,
            },
            "db_mb_per_1k_messages": per_1k,
            "targets": targets,
        },
        summary,
    )


def _summaries_line(r: dict[str, Any]) -> str:
    p, b, n = r["plain"], r["no_summarize"], r["summarize_now"]
    return (
        f"summaries ({r['export']['messages']} messages in {r['export']['threads']} long threads, --no-embed): "
        f"plain {p['messages_per_s']:.0f} msg/s ({p['seconds']:.1f} s, {p['cpu_s']:.1f} CPU-s; "
        f"{p['summaries_background']} threads summarised in the background, done after "
        f"{p['background_done_after_s']:.0f} s) vs --no-summarize {b['messages_per_s']:.0f} msg/s "
        f"({b['seconds']:.1f} s, {b['cpu_s']:.1f} CPU-s): {r['plain_vs_no_summarize']['wall']:.2f}x wall; "
        f"--summarize-now {n['messages_per_s']:.0f} msg/s ({n['cpu_s']:.1f} CPU-s, "
        f"{r['summarize_now_vs_no_summarize_cpu']:.1f}x the baseline's CPU)"
    )


if __name__ == "__main__":
    main()
