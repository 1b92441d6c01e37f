"""Writers at once (issue 31, 1): the two-thread reproduction and a burst of MCP calls, on this code and,
in the same run, on a baseline checkout.

    .venv/bin/python -m bench write_burst [--quick] [--baseline GIT_REF] [--calls N] [--timeout S]

- two threads: A opens a write transaction and does 0.5 s of Python, B writes meanwhile; when each
  committed (seconds from the start), or B's error. Before the write queue (store/writelock.py), A
  committed at B's busy timeout (15 s) and B failed.
- MCP burst: N `add_memory` calls (default 1,000; quick: 100) written at once to one `memapp mcp`
  (keyword-only config, so the model's time is not in it); seconds until every call was answered, how
  many were answered within `--timeout`, and how many were errors.

`--baseline REF` (e.g. the commit before the fix) is extracted with `git archive` into a temporary
folder and measured the same way, in the same run, with this checkout's Python environment. Prints JSON
(kept in bench/out/write_burst.json) and a one-line summary on stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.lib.common import ROOT, emit
from tests.reliability.mcp_burst import McpProcess, add_calls

TWO_THREADS = r"""
import json, os, sys, tempfile, threading, time
from store import db
path = os.path.join(tempfile.mkdtemp(), "chat.db")
con = db.connect(path)
with con:
    con.execute("CREATE TABLE t(x)")
con.close()
began = threading.Event()
out = {}
t0 = time.monotonic()
def a():
    c = db.connect(path)
    with c:
        c.execute("INSERT INTO t VALUES (1)")
        began.set()
        end = time.monotonic() + 0.5
        while time.monotonic() < end:
            sum(range(1000))
    out["a_committed_s"] = round(time.monotonic() - t0, 3)
def b():
    c = db.connect(path)
    began.wait()
    try:
        with c:
            c.execute("INSERT INTO t VALUES (2)")
        out["b_committed_s"] = round(time.monotonic() - t0, 3)
    except Exception as exc:
        out["b_error"] = f"{type(exc).__name__} after {time.monotonic() - t0:.2f} s"
ts = [threading.Thread(target=a), threading.Thread(target=b)]
[t.start() for t in ts]
[t.join() for t in ts]
print(json.dumps(out))
"""


def _env(tmp: Path) -> dict[str, str]:
    """The children run in `root` (this checkout or the baseline's): Python looks in the working directory
    before the venv's editable install, so they import that checkout's app and store."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMAPP_")}
    env["MEMAPP_CONFIG"] = str(tmp / "absent.toml")
    return env


def two_threads(root: Path, tmp: Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", TWO_THREADS],
        cwd=root,
        env=_env(tmp),
        capture_output=True,
        text=True,
        timeout=120,
    )
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1:]}
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def mcp_burst(root: Path, tmp: Path, calls: int, timeout: float) -> dict[str, Any]:
    db = tmp / "burst.db"
    cfg = tmp / "no-model.toml"
    cfg.write_text("[embedding]\nenabled = false\n")
    cmd = [sys.executable, "-m", "app", "--db", str(db), "--config", str(cfg), "mcp", "--create"]
    server = McpProcess(cmd, _env(tmp), root, tmp / "mcp.err")
    try:
        burst = server.burst(add_calls(calls), timeout=timeout)
    finally:
        server.proc.kill()  # a baseline still busy with the burst would take minutes to end
        server.close()
    return burst.to_json()


def measure(root: Path, calls: int, timeout: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        return {"two_threads": two_threads(root, tmp), "mcp_burst": mcp_burst(root, tmp, calls, timeout)}


def baseline_tree(ref: str, into: Path) -> Path:
    archive = subprocess.run(["git", "archive", ref], cwd=ROOT, capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100 calls instead of 1,000")
    parser.add_argument("--calls", type=int, help="MCP calls in the burst")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds to wait for the answers")
    parser.add_argument("--baseline", metavar="GIT_REF", help="also measure this commit, in the same run")
    args = parser.parse_args()
    calls = args.calls or (100 if args.quick else 1000)
    result: dict[str, Any] = {"calls": calls, "timeout_s": args.timeout, "load": os.getloadavg()[0]}
    result["this"] = measure(ROOT, calls, args.timeout)
    if args.baseline:
        with tempfile.TemporaryDirectory() as d:
            result["baseline_ref"] = args.baseline
            result["baseline"] = measure(baseline_tree(args.baseline, Path(d)), calls, args.timeout)
    result["load_after"] = os.getloadavg()[0]
    this = result["this"]
    summary = (
        f"two threads: A {this['two_threads'].get('a_committed_s')} s, B {this['two_threads'].get('b_committed_s')} s; "
        f"MCP burst: {this['mcp_burst']['answered']}/{calls} answered in {this['mcp_burst']['seconds']} s"
    )
    if args.baseline:
        base = result["baseline"]
        summary += (
            f" (baseline: A {base['two_threads'].get('a_committed_s')} s, B "
            f"{base['two_threads'].get('b_committed_s', base['two_threads'].get('b_error'))}; "
            f"{base['mcp_burst']['answered']}/{calls} answered in {base['mcp_burst']['seconds']} s)"
        )
    emit("write_burst", result, summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
