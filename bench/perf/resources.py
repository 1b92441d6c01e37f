"""Resources over time (issue 20, part 6): does memory stay flat as input grows, and does a long-lived
MCP server stay the same size after thousands of calls?

    .venv/bin/python -m bench resources [--quick]

- import: a generated generic JSONL export of 20 MB and of 200 MB (quick: 5 and 50 MB), each imported by
  `memapp import --no-embed --no-summarize` in its own process; peak RSS of that process (ru_maxrss),
  the ratio big/small is the figure (flat memory: ~1).
- mcp: one `memapp mcp` process (keyword-only config), 2,000 tool calls (search_memory, list_memories,
  add_memory, search_conversations in turn) through the real stdio client; its RSS and open file
  descriptors (from /proc) after the first 100 calls and after all of them.
Prints JSON on stdout (kept in bench/out/resources.json) and a one-line summary on stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.lib.common import OUT, ROOT


def _export(path: Path, megabytes: int) -> int:
    """A generic JSONL export of about `megabytes` MB; returns its message count."""
    words = [f"w{i}" for i in range(5000)]
    n = 0
    with path.open("w", encoding="utf-8") as fh:
        t = 0
        while fh.tell() < megabytes * 1024**2:
            msgs = []
            for i in range(40):
                text = " ".join(words[(t * 131 + i * 17 + j * 7) % 5000] for j in range(70))
                msgs.append(
                    {"id": f"t{t}m{i}", "role": "user" if i % 2 == 0 else "assistant", "content": text}
                )
            fh.write(json.dumps({"id": f"t{t}", "title": f"Thread {t}", "messages": msgs}) + "\n")
            n += 40
            t += 1
    return n


def _env(tmp: Path) -> dict[str, str]:
    cfg = tmp / "config.toml"
    cfg.write_text("[embedding]\nenabled = false\n")
    return {
        **os.environ,
        "MEMAPP_CONFIG": str(cfg),
        "MEMAPP_DB": str(tmp / "chat.db"),
    }


def measure_import(tmp: Path, megabytes: int) -> dict[str, Any]:
    export = tmp / f"export-{megabytes}.jsonl"
    messages = _export(export, megabytes)
    db = tmp / f"import-{megabytes}.db"
    code = (
        "import resource, sys; from app.cli import main; rc = main(sys.argv[1:]); "
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr); sys.exit(rc)"
    )
    started = time.monotonic()
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            code,
            "--db",
            str(db),
            "import",
            str(export),
            "--no-embed",
            "--no-summarize",
            "--json",
        ],
        env=_env(tmp),
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    seconds = time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit(f"import failed: {done.stderr}")
    peak_kib = int(done.stderr.strip().splitlines()[-1])
    return {
        "export_mb": round(export.stat().st_size / 1024**2, 1),
        "messages": messages,
        "peak_rss_mib": round(peak_kib / 1024, 1),
        "seconds": round(seconds, 1),
    }


def _proc(pid: int) -> tuple[float, int]:
    rss = next(
        int(line.split()[1])
        for line in Path(f"/proc/{pid}/status").read_text().splitlines()
        if line.startswith("VmRSS:")
    )
    return round(rss / 1024, 1), len(os.listdir(f"/proc/{pid}/fd"))


async def _mcp_calls(tmp: Path, calls: int) -> dict[str, Any]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    env = _env(tmp)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "app", "mcp", "--create"], env=env, cwd=str(ROOT)
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
        server = next(p for p in pids if _cmdline(p).endswith("-m app mcp --create"))
        plan = [
            ("search_memory", lambda i: {"query": f"note {i % 50} about tea"}),
            ("list_memories", lambda i: {}),
            (
                "add_memory",
                lambda i: {"content": f"note {i % 50} about tea and biscuits", "category": "fact"},
            ),
            ("search_conversations", lambda i: {"query": f"topic {i % 30}"}),
        ]
        marks: dict[str, Any] = {}
        errors = 0
        for i in range(calls):
            name, args = plan[i % len(plan)]
            result = await session.call_tool(name, args(i))
            errors += bool(result.is_error)
            if i + 1 in (100, calls):
                marks[str(i + 1)] = dict(zip(("rss_mib", "open_fds"), _proc(server), strict=True))
        return {"calls": calls, "tool_errors": errors, "after": marks}


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
    except OSError:
        return ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    small, big = (5, 50) if args.quick else (20, 200)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        imports = [measure_import(tmp, small), measure_import(tmp, big)]
        mcp = asyncio.run(_mcp_calls(tmp, 2000))
    report = {
        "load_average": os.getloadavg()[0],
        "import": imports,
        "import_peak_rss_ratio_big_vs_small": round(
            imports[1]["peak_rss_mib"] / imports[0]["peak_rss_mib"], 2
        ),
        "mcp": mcp,
        "mcp_rss_growth_mib": round(mcp["after"]["2000"]["rss_mib"] - mcp["after"]["100"]["rss_mib"], 1),
        "mcp_fd_growth": mcp["after"]["2000"]["open_fds"] - mcp["after"]["100"]["open_fds"],
    }
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "resources.json").write_text(json.dumps(report, indent=1))
    print(json.dumps(report, indent=1))
    print(
        f"resources: import peak RSS {imports[0]['peak_rss_mib']} MiB ({imports[0]['export_mb']} MB) vs "
        f"{imports[1]['peak_rss_mib']} MiB ({imports[1]['export_mb']} MB); MCP after 100/2000 calls: "
        f"{mcp['after']['100']} / {mcp['after']['2000']}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
