"""The secret detector: how much it catches, how often it destroys text that held no secret, how fast it
is, and what it costs an import; prints JSON (bench/out/redaction.json).

    .venv/bin/python -m bench redaction [--quick] [--no-import] [--rounds 3]

1. Quality on bench/eval/secrets/ (make.py writes it), per half (tune, test): recall (a secret counts
   as caught when no 10-character piece of it is left), recall by kind, false-positive rate (secret-free
   texts changed at all), and how many texts with secrets came out exactly as expected (every secret
   replaced and nothing else). The same for detect-secrets alone (every plugin, default filters, each
   text scanned as a file), the baseline the detector is built on.
2. Speed: microseconds per text on the evaluation texts (code-heavy, most pass the prefilter) and on
   import-like prose (bench/perf/importing.py's text), and detect-secrets' scan_line on the same lines.
3. Import: `import_paths(embed=False)` of a generated ChatGPT export, with `[privacy] redact = "off"`
   and "store", in fresh processes, interleaved rounds; the ratio of CPU seconds (target <= 1.2x). Two
   exports: bench/perf/importing.py's prose, and a coding-transcript one whose messages mix the evaluation's
   texts (with and without secrets) into the prose. --no-embed is the fastest import, so the detector's
   share is largest there; with embedding, the model's seconds dwarf it.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench.lib.common import DATA, ROOT, emit
from bench.perf import importing  # its ChatGPT export generator and prose

EVAL = ROOT / "bench" / "eval" / "secrets"
MARK = "\x00"


def load(split: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (EVAL / f"{split}.jsonl").read_text(encoding="utf-8").splitlines()]


def caught(value: str, text: str, out: str) -> bool:
    """No 10-character piece of `value` is left in `out` (a piece that is also elsewhere in the text,
    outside the secret, does not count)."""
    rest = text.replace(value, MARK)
    n = min(10, len(value))
    return not any(
        value[i : i + n] in out and value[i : i + n] not in rest for i in range(len(value) - n + 1)
    )


def exact(text: str, values: list[str], out: str) -> bool:
    """Every secret replaced by a marker and nothing else changed."""
    import re

    expected = text
    for v in sorted(values, key=len, reverse=True):
        expected = expected.replace(v, MARK)
    return re.sub(r"\[secret: [a-z0-9-]+\]", MARK, out) == re.sub(f"{MARK}+", MARK, expected)


def score(rows: list[dict[str, Any]], redact: Any) -> dict[str, Any]:
    by_kind: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    fp = clean = hits = total = exacts = with_secrets = 0
    misses, false_alarms = [], []
    for r in rows:
        out = redact(r["text"])
        if not r["secrets"]:
            clean += 1
            if out != r["text"]:
                fp += 1
                false_alarms.append(r["id"])
            continue
        with_secrets += 1
        exacts += exact(r["text"], [s["value"] for s in r["secrets"]], out)
        for s in r["secrets"]:
            ok = caught(s["value"], r["text"], out)
            by_kind[s["kind"]][0] += ok
            by_kind[s["kind"]][1] += 1
            hits += ok
            total += 1
            if not ok:
                misses.append(f"{r['id']}:{s['kind']}")
    return {
        "texts_with_secrets": with_secrets,
        "secrets": total,
        "kinds": len(by_kind),
        "recall": round(hits / max(total, 1), 4),
        "secret_free_texts": clean,
        "false_positives": fp,
        "false_positive_rate": round(fp / max(clean, 1), 4),
        "exact_redactions": round(exacts / max(with_secrets, 1), 4),
        "recall_by_kind": {k: round(a / b, 3) for k, (a, b) in sorted(by_kind.items())},
        "misses": misses,
        "false_alarms": false_alarms,
    }


def detect_secrets_redactor(tmp: Path) -> Any:
    """detect-secrets as shipped: every plugin, its default filters, each text scanned as a file."""
    from detect_secrets.core.scan import scan_file
    from detect_secrets.settings import default_settings

    def redact(text: str) -> str:
        path = tmp / "transcript.txt"
        path.write_text(text, encoding="utf-8")
        with default_settings():
            values = {s.secret_value for s in scan_file(str(path)) if s.secret_value}
        for v in sorted(values, key=len, reverse=True):
            text = text.replace(v, "[secret: detect-secrets]")
        return text

    return redact


# -- speed ----------------------------------------------------------------------------------------------


def prose_texts(n: int) -> list[str]:
    import numpy as np

    from bench.lib.common import Words

    words, rng = Words(5), np.random.default_rng(5)
    return [words.text(rng, int(rng.integers(20, 300)), i % 40, i % 400, i) for i in range(n)]


def per_text_us(texts: list[str], fn: Any, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        for t in texts:
            fn(t)
        best = min(best, time.process_time() - t0)
    return round(best / len(texts) * 1e6, 1)


def speed(eval_texts: list[str], quick: bool) -> dict[str, Any]:
    from detect_secrets.core.scan import scan_line
    from detect_secrets.settings import default_settings

    from store.secrets import detector, find_secrets, warm

    warm()
    prose = prose_texts(300 if quick else 2000)
    lines = [line for t in eval_texts for line in t.split("\n")]
    passed = sum(1 for t in prose if detector.worth_a_look(t))
    out: dict[str, Any] = {
        "eval_texts": len(eval_texts),
        "eval_us_per_text": per_text_us(eval_texts, find_secrets),
        "eval_lines": len(lines),
        "eval_us_per_line": round(per_text_us(eval_texts, find_secrets) * len(eval_texts) / len(lines), 1),
        "prose_texts": len(prose),
        "prose_chars_per_text": round(statistics.mean(len(t) for t in prose)),
        "prose_us_per_text": per_text_us(prose, find_secrets),
        "prose_passing_prefilter": round(passed / len(prose), 3),
    }
    sample = lines[:: max(1, len(lines) // (150 if quick else 600))]
    with default_settings():
        t0 = time.process_time()
        for line in sample:
            list(scan_line(line))
        out["detect_secrets_scan_line_us_per_line"] = round((time.process_time() - t0) / len(sample) * 1e6, 1)
    out["speedup_per_line_vs_detect_secrets"] = round(
        out["detect_secrets_scan_line_us_per_line"] / max(out["eval_us_per_line"], 1e-9), 1
    )
    return out


# -- import ---------------------------------------------------------------------------------------------


def coding_export(path: Path, n_threads: int, texts: list[str]) -> int:
    """A ChatGPT export whose messages mix transcript texts (code, configs, some secrets) into prose."""
    importing.export(path, n_threads)
    convs = json.loads(path.read_text())
    rng = random.Random(7)
    n = 0
    for conv in convs:
        for node in conv["mapping"].values():
            msg = node.get("message")
            if msg and msg["content"]["parts"][0] and rng.random() < 0.5:
                msg["content"]["parts"][0] += "\n\n" + rng.choice(texts)
                n += 1
    path.write_text(json.dumps(convs))
    return n


def child_import(db: str, export: str, mode: str) -> dict[str, Any]:
    cfg = Path(db).with_suffix(".toml")
    cfg.write_text(f'[privacy]\nredact = "{mode}"\n[embedding]\nenabled = false\n')
    env = dict(os.environ, MEMAPP_CONFIG=str(cfg))
    proc = subprocess.run(
        [sys.executable, "-m", "bench.perf.redaction", "--child", db, export],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(proc.stdout)


def run_child(db: str, export: str) -> None:
    from store import Store
    from store.config import load_config
    from store.importing.pipeline import import_paths
    from store.locations import config_path

    Path(db).unlink(missing_ok=True)
    store = Store(db, config=load_config(config_path()), embedder=None)
    t0, cpu0 = time.perf_counter(), os.times()
    report = import_paths(store, [export], embed=False, summarize=False)
    seconds = time.perf_counter() - t0
    cpu = [b - a for a, b in zip(cpu0, os.times(), strict=False)]
    markers = store.scalar("SELECT count(*) FROM messages WHERE content LIKE '%[secret: %'")
    store.close()
    print(
        json.dumps(
            {
                "seconds": round(seconds, 3),
                "cpu_s": round(cpu[0] + cpu[1] + cpu[2] + cpu[3], 3),
                "messages": report.messages_added,
                "messages_with_markers": markers,
            }
        )
    )


def import_cost(quick: bool, rounds: int, texts: list[str]) -> dict[str, Any]:
    n = 150 if quick else 1000
    out: dict[str, Any] = {"threads": n, "rounds": rounds}
    DATA.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=DATA) as tmp:
        exports = {"prose": Path(tmp) / "prose.json", "coding": Path(tmp) / "coding.json"}
        importing.export(exports["prose"], n)
        out["coding_messages_with_transcript_text"] = coding_export(exports["coding"], n, texts)
        for name, path in exports.items():
            runs: dict[str, list[dict[str, Any]]] = {"off": [], "store": []}
            for _ in range(rounds):
                for mode in ("off", "store"):
                    runs[mode].append(child_import(str(Path(tmp) / f"{name}-{mode}.db"), str(path), mode))
            off = statistics.median(r["cpu_s"] for r in runs["off"])
            on = statistics.median(r["cpu_s"] for r in runs["store"])
            out[name] = {
                "messages": runs["off"][0]["messages"],
                "cpu_s_off": round(off, 2),
                "cpu_s_store": round(on, 2),
                "ratio": round(on / off, 3),
                "wall_s_off": statistics.median(r["seconds"] for r in runs["off"]),
                "wall_s_store": statistics.median(r["seconds"] for r in runs["store"]),
                "messages_with_markers_store": runs["store"][0]["messages_with_markers"],
                "messages_with_markers_off": runs["off"][0]["messages_with_markers"],
            }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--no-import", action="store_true")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        run_child(*args.child)
        return
    from store.secrets import redact_text

    splits = {s: load(s) for s in ("tune", "test")}
    result: dict[str, Any] = {"load": os.getloadavg()}
    result["ours"] = {s: score(rows, redact_text) for s, rows in splits.items()}
    with tempfile.TemporaryDirectory() as tmp:
        baseline = detect_secrets_redactor(Path(tmp))
        result["detect_secrets_alone"] = {s: score(rows, baseline) for s, rows in splits.items()}
    for part in result["detect_secrets_alone"].values():
        part.pop("misses")
        part.pop("false_alarms")
    texts = [r["text"] for rows in splits.values() for r in rows]
    result["speed"] = speed(texts, args.quick)
    if not args.no_import:
        result["import"] = import_cost(args.quick, max(1, args.rounds), texts)
    test = result["ours"]["test"]
    summary = (
        f"test half: recall {test['recall']}, false positives {test['false_positive_rate']:.1%}; "
        f"{result['speed']['eval_us_per_line']} us/line"
    )
    if "import" in result:
        summary += f"; import x{result['import']['coding']['ratio']} (coding), x{result['import']['prose']['ratio']} (prose)"
    emit("redaction", result, summary)


if __name__ == "__main__":
    main()
