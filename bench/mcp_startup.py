"""`memapp mcp` as a client meets it: time to `initialize`, the first `search_memory` (the embedding model
loads then), a warm one, and `get_profile` (first and warm); prints JSON.

    .venv/bin/python bench/mcp_startup.py [--runs 3]

Each run spawns the server over stdio exactly as Claude Desktop would (`memapp --db chat.db mcp`) on a
chat.db of 300 memories embedded with the real model (built once under bench/.data/). Beside it, measured
in the same runs, alternating:
- `minimal`: a bare MCPServer of the same SDK with one trivial tool, spawned and initialised the same way
  (the SDK's own floor: what our server adds on top is the difference);
- `cli_search`: `memapp search --scope memories QUERY` as one process (the same model load, no server),
  the baseline for the first search;
- with `--old DIR` (e.g. `git archive main | tar -x -C DIR`), an earlier memapp's server on the same file.
Target (issue 19): initialize <= 1 s and first search_memory <= 2 s on an idle machine.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import ROOT, data_file, emit

MEMAPP = str(Path(sys.executable).with_name("memapp"))
BUILD = 1  # bump when the database below changes
QUERY = "which backup tool do I prefer for the NAS"
MINIMAL = """
from mcp.server.mcpserver import MCPServer
server = MCPServer("minimal")
@server.tool()
def echo(text: str) -> str:
    '''Echo the text.'''
    return text
server.run()
"""
TOPICS = [
    "backups",
    "editors",
    "cooking",
    "travel",
    "languages",
    "music",
    "gardening",
    "cycling",
    "tax",
    "kids",
]


def build_db() -> Path:
    path = data_file(f"mcp-{BUILD}.db", stale="mcp-")
    if path.exists():
        return path
    from store import Store

    tmp = path.with_suffix(".tmp")
    with Store(tmp) as s:  # the real model: searches then load it, as in real use
        for i in range(300):
            topic = TOPICS[i % len(TOPICS)]
            s.add_memory(
                f"Note {i} about {topic}: prefers option {i % 7} and uses tool {i % 13} for {topic}",
                ("preference", "project", "skill", "fact")[i % 4],
                importance=1 + i % 10,
                pinned=i % 50 == 0,
                force=True,
            )
        s.add_memory("Prefers restic over borg for the NAS backups", "preference", importance=8)
    tmp.rename(path)
    return path


async def _server_run(db: Path, cfg: Path) -> dict[str, float]:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=MEMAPP, args=["--db", str(db), "--config", str(cfg), "mcp"])
    out: dict[str, float] = {}
    t0 = time.perf_counter()
    async with Client(params) as client:
        out["initialize_s"] = time.perf_counter() - t0
        t = time.perf_counter()
        r = await client.call_tool("search_memory", {"query": QUERY, "k": 5})
        out["first_search_s"] = time.perf_counter() - t
        assert not r.is_error and r.structured_content["mode"] == "hybrid", r
        warm = []
        for _ in range(5):
            t = time.perf_counter()
            await client.call_tool("search_memory", {"query": QUERY, "k": 5})
            warm.append(time.perf_counter() - t)
        out["warm_search_s"] = statistics.median(warm)
        t = time.perf_counter()
        r = await client.call_tool("get_profile", {"budget": 1000})
        out["first_profile_s"] = time.perf_counter() - t  # includes building the tiktoken encoder
        assert r.structured_content["tokens"] <= 1000
        t = time.perf_counter()
        await client.call_tool("get_profile", {"budget": 1000})
        out["warm_profile_s"] = time.perf_counter() - t
    return out


async def _old_run(old: Path, db: Path, cfg: Path) -> dict[str, float]:
    """An earlier memapp's server (a source tree, e.g. `git archive main`), run by this venv's Python."""
    from mcp import Client, StdioServerParameters

    code = f"import sys; sys.path.insert(0, {str(old)!r}); from app.cli import main; sys.exit(main())"
    args = ["-c", code, "--db", str(db), "--config", str(cfg), "mcp"]
    out: dict[str, float] = {}
    t0 = time.perf_counter()
    async with Client(StdioServerParameters(command=sys.executable, args=args)) as client:
        out["initialize_s"] = time.perf_counter() - t0
        t = time.perf_counter()
        r = await client.call_tool("search_memory", {"query": QUERY, "k": 5})
        out["first_search_s"] = time.perf_counter() - t
        assert not r.is_error, r
    return out


async def _minimal_run() -> float:
    from mcp import Client, StdioServerParameters

    t0 = time.perf_counter()
    async with Client(StdioServerParameters(command=sys.executable, args=["-c", MINIMAL])):
        return time.perf_counter() - t0


def _cli_search(db: Path, cfg: Path) -> float:
    t0 = time.perf_counter()
    cmd = [
        MEMAPP,
        "--db",
        str(db),
        "--config",
        str(cfg),
        "search",
        "--scope",
        "memories",
        "--no-touch",
        QUERY,
    ]
    subprocess.run(cmd, check=True, capture_output=True, cwd=ROOT)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--old", type=Path, help="source tree of an earlier memapp to run beside (old server)")
    a = ap.parse_args()
    runs, old = a.runs, a.old
    src = build_db()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "chat.db"  # a copy: the runs count accesses
        db.write_bytes(src.read_bytes())
        cfg = Path(tmp) / "config.toml"
        cfg.write_text("")
        asyncio.run(_server_run(db, cfg))  # warm-up: disk caches, bytecode
        asyncio.run(_minimal_run())
        ours: list[dict[str, float]] = []
        minimal: list[float] = []
        cli: list[float] = []
        olds: list[dict[str, float]] = []
        if old:
            asyncio.run(_old_run(old, db, cfg))
        for _ in range(runs):
            ours.append(asyncio.run(_server_run(db, cfg)))
            minimal.append(asyncio.run(_minimal_run()))
            cli.append(_cli_search(db, cfg))
            if old:
                olds.append(asyncio.run(_old_run(old, db, cfg)))

    def med(key: str) -> float:
        return round(statistics.median(r[key] for r in ours), 3)

    result = {
        "runs": runs,
        "memories": 301,
        "memapp_mcp": {
            k: med(k)
            for k in ("initialize_s", "first_search_s", "warm_search_s", "first_profile_s", "warm_profile_s")
        },
        "baseline": {
            "minimal_server_initialize_s": round(statistics.median(minimal), 3),
            "cli_search_process_s": round(statistics.median(cli), 3),
        },
        "all_runs": ours,
    }
    if olds:
        result["baseline"]["old_server"] = {
            k: round(statistics.median(r[k] for r in olds), 3) for k in ("initialize_s", "first_search_s")
        }
    init, first = med("initialize_s"), med("first_search_s")
    floor = result["baseline"]["minimal_server_initialize_s"]
    summary = (
        f"mcp: initialize {init:.2f} s (bare SDK server {floor:.2f} s, x{init / floor:.2f}); first search_memory "
        f"{first:.2f} s (a whole `memapp search` process {result['baseline']['cli_search_process_s']:.2f} s); "
        f"warm {med('warm_search_s') * 1000:.0f} ms; get_profile {med('first_profile_s') * 1000:.0f} ms first, "
        f"{med('warm_profile_s') * 1000:.0f} ms warm"
    )
    if olds:
        o = result["baseline"]["old_server"]
        summary += (
            f"; old server: initialize {o['initialize_s']:.2f} s, first search {o['first_search_s']:.2f} s"
        )
    emit("mcp", result, summary)


if __name__ == "__main__":
    main()
