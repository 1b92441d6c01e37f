"""`memapp mcp` as a client meets it: time to `initialize`, the first `search_memory`, a warm one, and
`get_profile` (first and warm); prints JSON.

    .venv/bin/python -m bench mcp_startup [--runs 3]

Each run spawns the server over stdio exactly as Claude Desktop would (`memapp --db chat.db mcp`) on a
chat.db of 300 memories embedded with the real model (built once under bench/.data/). Beside it, measured
in the same runs, alternating:
- `minimal`: a bare MCPServer of the same SDK with one trivial tool, spawned and initialised the same way
  (the SDK's own floor: what our server adds on top is the difference);
- `cli_search`: `memapp search --scope memories QUERY` as one process (the same model load, no server),
  the baseline for the first search;
- with `--old DIR` (e.g. `git archive main | tar -x -C DIR`), an earlier memapp's server on the same file.
Target (issue 19): initialize <= 1 s and first search_memory <= 2 s on an idle machine.

The first search is timed twice, in separate sessions: at once after `initialize` (the worst case: nothing
can be ready yet), and after `tools/list` and a pause of PAUSE seconds, as a real client does (Claude
lists the tools, then the model writes its first turn before calling one). Since issue 28.26 the server
loads the embedding model in the background from the first message after `initialize`, so the second
figure is what a user waits for; `--old` shows both for the earlier server, which loaded it at the first
search.
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
from typing import Any

from bench.lib.common import ROOT, data_file, emit

MEMAPP = str(Path(sys.executable).with_name("memapp"))
BUILD = 1  # bump when the database below changes
QUERY = "which backup tool do I prefer for the NAS"
PAUSE = 1.5  # seconds between tools/list and the first call, like a client whose model writes a turn first
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


def _ours(db: Path, cfg: Path) -> Any:
    from mcp import StdioServerParameters

    return StdioServerParameters(command=MEMAPP, args=["--db", str(db), "--config", str(cfg), "mcp"])


def _old(old: Path, db: Path, cfg: Path) -> Any:
    """An earlier memapp's server (a source tree, e.g. `git archive main`), run by this venv's Python from
    that tree: Python looks in the working directory before the venv's editable install, so `-m app` is the
    old tree's."""
    from mcp import StdioServerParameters

    args = ["-m", "app", "--db", str(db), "--config", str(cfg), "mcp"]
    return StdioServerParameters(command=sys.executable, args=args, cwd=old)


async def _session(params: Any, *, pause: float = 0.0, full: bool = True) -> dict[str, float]:
    """One client session: initialize, (with `pause`: tools/list, then wait), the first search_memory, and
    with `full` warm searches and get_profile."""
    from mcp import Client

    out: dict[str, float] = {}
    t0 = time.perf_counter()
    async with Client(params) as client:
        out["initialize_s"] = time.perf_counter() - t0
        if pause:
            await client.list_tools()
            await asyncio.sleep(pause)
        t = time.perf_counter()
        r = await client.call_tool("search_memory", {"query": QUERY, "k": 5})
        out["first_search_s"] = time.perf_counter() - t
        assert not r.is_error and r.structured_content["mode"] == "hybrid", r
        if not full:
            return out
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
        asyncio.run(_session(_ours(db, cfg)))  # warm-up: disk caches, bytecode
        asyncio.run(_minimal_run())
        ours: list[dict[str, float]] = []
        paused: list[dict[str, float]] = []
        minimal: list[float] = []
        cli: list[float] = []
        olds: list[dict[str, float]] = []
        olds_paused: list[dict[str, float]] = []
        if old:
            asyncio.run(_session(_old(old, db, cfg), full=False))
        for _ in range(runs):
            ours.append(asyncio.run(_session(_ours(db, cfg))))
            paused.append(asyncio.run(_session(_ours(db, cfg), pause=PAUSE, full=False)))
            minimal.append(asyncio.run(_minimal_run()))
            cli.append(_cli_search(db, cfg))
            if old:
                olds.append(asyncio.run(_session(_old(old, db, cfg), full=False)))
                olds_paused.append(asyncio.run(_session(_old(old, db, cfg), pause=PAUSE, full=False)))

    def med(key: str, rows: list[dict[str, float]] = ours) -> float:
        return round(statistics.median(r[key] for r in rows), 3)

    result = {
        "runs": runs,
        "memories": 301,
        "pause_s": PAUSE,
        "memapp_mcp": {
            **{
                k: med(k)
                for k in (
                    "initialize_s",
                    "first_search_s",
                    "warm_search_s",
                    "first_profile_s",
                    "warm_profile_s",
                )
            },
            "first_search_after_pause_s": med("first_search_s", paused),
        },
        "baseline": {
            "minimal_server_initialize_s": round(statistics.median(minimal), 3),
            "cli_search_process_s": round(statistics.median(cli), 3),
        },
        "all_runs": ours,
        "all_paused_runs": paused,
    }
    if olds:
        result["baseline"]["old_server"] = {
            "initialize_s": med("initialize_s", olds),
            "first_search_s": med("first_search_s", olds),
            "first_search_after_pause_s": med("first_search_s", olds_paused),
        }
    init, first = med("initialize_s"), med("first_search_s")
    floor = result["baseline"]["minimal_server_initialize_s"]
    summary = (
        f"mcp: initialize {init:.2f} s (bare SDK server {floor:.2f} s, x{init / floor:.2f}); first search_memory "
        f"{first:.2f} s at once, {med('first_search_s', paused):.2f} s after tools/list + {PAUSE} s "
        f"(a whole `memapp search` process {result['baseline']['cli_search_process_s']:.2f} s); "
        f"warm {med('warm_search_s') * 1000:.0f} ms; get_profile {med('first_profile_s') * 1000:.0f} ms first, "
        f"{med('warm_profile_s') * 1000:.0f} ms warm"
    )
    if olds:
        o = result["baseline"]["old_server"]
        summary += (
            f"; old server: initialize {o['initialize_s']:.2f} s, first search {o['first_search_s']:.2f} s at once, "
            f"{o['first_search_after_pause_s']:.2f} s after the pause"
        )
    emit("mcp", result, summary)


if __name__ == "__main__":
    main()
