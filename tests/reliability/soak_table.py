"""Print (or write into docs/benchmarks/reliability.md) the table of what the last soak run survived.

    .venv/bin/python tests/reliability/soak_table.py [--write] [--seconds N]

Reads bench/out/soak.json, which the reliability suite writes at the end of a passing run with
MEMAPP_SOAK=1 (tests/reliability/conftest.py), and bench/out/resources.json (bench/perf/resources.py: memory
and file descriptors over time) when it was written after it; `make soak` runs all three. The table
leads with the figures issue 31 asks for (kills per writer, writers at once with no lost update, the
MCP burst, plain copies checked after load), then every series. `--write` replaces the text between
`<!-- soak:start -->` and `<!-- soak:end -->` in docs/benchmarks/reliability.md.

A new kill series (tests/reliability/processes.py: Zygote, kill_at_a_write, count_kills) appears here by
itself: `count_kills(figures, "what", n)` adds a "kills survived (what)" row and counts it in the total.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SOAK_JSON = ROOT / "bench" / "out" / "soak.json"
RESOURCES_JSON = ROOT / "bench" / "out" / "resources.json"
DOC = ROOT / "docs" / "benchmarks" / "reliability.md"
START, END = "<!-- soak:start -->", "<!-- soak:end -->"
HEADLINE = (  # issue 31's figures, in this order, right after the totals
    "writer threads and processes at once",
    "read-modify-writes counted under mixed load",
    "longest write call under mixed load (ms)",
    "MCP calls of one burst, all answered",
    "plain-copy backups checked 2 s after load",
    "restores under a running MCP server",
)


def _total(figures: dict[str, int], prefix: str) -> int:
    return sum(v for k, v in figures.items() if k.startswith(prefix))


def rows(data: dict[str, Any], resources: dict[str, Any] | None) -> list[tuple[str, str]]:
    """(what, figure) in table order: totals, resources, then every series of the run."""
    figures: dict[str, int] = data["figures"]
    kills = {k for k in figures if k.startswith("kills survived (")}
    fuzz = {k for k in figures if k.startswith("fuzz cases (")}
    out = [
        (
            f"**kills survived, all {len(kills)} writers** (SIGKILL at a seeded progress point; each followed by "
            "integrity, index and history checks, then a run to the exact expected state)",
            f"**{_total(figures, 'kills survived ('):,}**",
        ),
        (
            f"**fuzz cases, all {len(fuzz)} formats** (no traceback, every problem reported)",
            f"**{_total(figures, 'fuzz cases ('):,}**",
        ),
        (
            "**lost updates** (acknowledged edits missing, access counts off)",
            f"**{figures.get('lost updates', 0):,}**",
        ),
    ]
    if resources:
        mcp = resources["mcp"]
        small, big = resources["import"][0], resources["import"][-1]
        out += [
            (
                f"RSS growth of an MCP server over {mcp['calls']:,} tool calls (after 100 → after all)",
                f"{resources['mcp_rss_growth_mib']:+.1f} MiB ({mcp['after']['100']['rss_mib']} → "
                f"{mcp['after'][str(mcp['calls'])]['rss_mib']} MiB), open files {resources['mcp_fd_growth']:+d}",
            ),
            (
                f"peak RSS importing a {big['export_mb']:.0f} MB export vs a {small['export_mb']:.0f} MB one",
                f"{big['peak_rss_mib']} vs {small['peak_rss_mib']} MiB "
                f"({resources['import_peak_rss_ratio_big_vs_small']}x)",
            ),
        ]
    kills_by_writer = ", ".join(
        f"{k[len('kills survived (') : -1]} {v:,}" for k, v in sorted(figures.items()) if k in kills
    )
    out.append(("kills per writer", kills_by_writer or "none"))
    out += [(name, f"{figures[name]:,}") for name in HEADLINE if name in figures]
    out += [
        (name, f"{value:,}")
        for name, value in figures.items()
        if name != "lost updates" and name not in HEADLINE and name not in kills
    ]
    return out


def table(data: dict[str, Any], resources: dict[str, Any] | None = None) -> str:
    lines = [
        f"Last soak run: {data['date']}, {data['machine']}, {data.get('minutes', '?')} min (`make soak`).",
        "",
        "| What | Count |",
        "|---|---|",
    ]
    lines += [f"| {what} | {figure} |" for what, figure in rows(data, resources)]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"write the table into {DOC.relative_to(ROOT)}")
    parser.add_argument("--seconds", type=float, help="how long the soak run took (make soak passes it)")
    args = parser.parse_args(argv)
    if not SOAK_JSON.exists():
        print(f"{SOAK_JSON} is missing: run `make soak` first", file=sys.stderr)
        return 1
    data = json.loads(SOAK_JSON.read_text())
    if args.seconds is not None:
        data["minutes"] = round(args.seconds / 60, 1)
        SOAK_JSON.write_text(json.dumps(data, indent=1))
    resources = None
    if RESOURCES_JSON.exists() and RESOURCES_JSON.stat().st_mtime >= SOAK_JSON.stat().st_mtime - 3600:
        resources = json.loads(RESOURCES_JSON.read_text())  # measured with this run (or within its hour)
    text = table(data, resources)
    print(text)
    if args.write:
        body = DOC.read_text(encoding="utf-8")
        if START not in body:
            print(f"{DOC} has no soak markers", file=sys.stderr)
            return 1
        body = re.sub(
            re.escape(START) + ".*?" + re.escape(END), lambda _: f"{START}\n{text}\n{END}", body, flags=re.S
        )
        DOC.write_text(body, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
