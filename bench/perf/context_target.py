"""Context build time for a long thread, against its target; prints JSON.

    .venv/bin/python bench/context.py [--quick]

Runs bench/bench_context.py (its author's scenario: a 5,000-message thread with tool output and inline
reasoning, 200 memories, a 16,000-token budget, 50 timed builds after a warm-up, for the latest user
message and for an explicit query) in a fresh process and checks its p50 against the target.

Target (issue 7): p50 <= 50 ms (token counts are stored, not recomputed).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from _common import emit

TARGET_MS = 50.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="20 timed builds instead of 50")
    a = ap.parse_args()
    script = Path(__file__).with_name("bench_context.py")
    argv = [
        sys.executable,
        str(script),
        "--messages",
        "5000",
        "--budget",
        "16000",
        "--runs",
        "20" if a.quick else "50",
    ]
    res = json.loads(subprocess.run(argv, check=True, capture_output=True, text=True).stdout)
    ctx = res["context"]
    worst = max(v["p50_ms"] for v in ctx.values())
    within = all(v["total_tokens"] <= 16000 and v["exact_total"] <= 16000 for v in ctx.values())
    targets = {"p50_le_50ms": worst <= TARGET_MS, "never_over_budget": within}
    summary = (
        f"context: 16k-token context from a {res['messages']}-message thread in "
        f"{ctx['latest_user_message']['p50_ms']:.1f} ms p50 (latest message), "
        f"{ctx['query']['p50_ms']:.1f} ms with a query; targets "
        f"{'met' if all(targets.values()) else 'MISSED: ' + ', '.join(k for k, v in targets.items() if not v)}"
    )
    emit("context", {**res, "targets": targets}, summary)


if __name__ == "__main__":
    main()
