"""What a user installs is what works: the wheel, installed into a fresh venv with its dependencies
resolved as pip resolves them for a user (no torch), used from outside the checkout.

Why this shape: the last packaging test imported package `__init__`s with the dev venv's dependencies on
the path; a wheel missing `store.truth` passed it, and `memapp stats` failed for every user. Here each
command a new user types in the first minutes runs from the installed copy: `--version`, `stats`, an
import, a semantic search (the model's ONNX copy written from the shipped weights, no torch), an MCP
initialize and tool call, and the TUI (headless, pressing keys)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Resolving and installing every dependency from the package index takes about a minute.
pytestmark = [pytest.mark.serial, pytest.mark.timeout(900)]

MCP_SESSION = r"""
import json, subprocess, sys
proc = subprocess.Popen([sys.argv[1], "--db", sys.argv[2], "mcp"], stdin=subprocess.PIPE,
                        stdout=subprocess.PIPE, text=True)
def send(msg):
    proc.stdin.write(json.dumps(msg) + "\n"); proc.stdin.flush()
def answer(id_):
    while True:
        msg = json.loads(proc.stdout.readline())
        if msg.get("id") == id_:
            return msg
send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
      "capabilities": {}, "clientInfo": {"name": "packaging-test", "version": "1"}}})
init = answer(1)
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
      "params": {"name": "search_memory", "arguments": {"query": "which database engine"}}})
call = answer(2)
proc.stdin.close(); proc.wait(timeout=30)
print(json.dumps({"server": init["result"]["serverInfo"]["name"], "call": call["result"]}))
"""

TUI_SESSION = r"""
import asyncio, sys
from pathlib import Path
from app.tui.app import MemApp
from store import Store

async def main():
    app = MemApp(Store(Path(sys.argv[1])), load_model=False)
    async with app.run_test(size=(120, 40)) as pilot:
        for key in ("2", "1"):
            await app.workers.wait_for_complete()
            await pilot.pause()
            await pilot.press(key)
            print(type(app.screen).__name__)

asyncio.run(main())
"""


def run(cmd: list[str], cwd: Path, env: dict[str, str]) -> str:
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, env=env, timeout=600, check=False)
    assert proc.returncode == 0, (
        f"{cmd}: exit {proc.returncode}\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
    )
    return proc.stdout


def test_the_installed_wheel_works_from_outside_the_checkout(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    build = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w"]
    subprocess.run([*build, str(dist), str(ROOT)], check=True, cwd=tmp_path, capture_output=True)
    (wheel,) = dist.glob("memapp-*.whl")

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    bin_ = venv / "bin"
    pip_env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    install = [str(bin_ / "pip"), "install", "-q", "--disable-pip-version-check"]
    run([*install, str(wheel)], tmp_path, pip_env)

    home = tmp_path / "home"
    home.mkdir()
    env = {
        "PATH": f"{bin_}:/usr/bin:/bin",
        "HOME": str(home),
        "MEMAPP_CACHE_DIR": str(tmp_path / "cache"),
        "MEMAPP_DATA_DIR": str(tmp_path / "nowhere"),  # nothing may come from the checkout's data/
    }
    memapp, py = str(bin_ / "memapp"), str(bin_ / "python")
    # The light install: no torch, no sentence-transformers (the reference extra brings them).
    probe = (
        "import importlib.util as u; print([m for m in ('torch', 'sentence_transformers') if u.find_spec(m)])"
    )
    assert run([py, "-c", probe], tmp_path, env).strip() == "[]"
    where = "import store, app, embeddings; print(store.__file__, app.__file__, embeddings.__file__)"
    assert all(p.startswith(str(venv)) for p in run([py, "-c", where], tmp_path, env).split())

    assert run([memapp, "--version"], tmp_path, env).startswith("memapp ")
    db = tmp_path / "chat.db"
    export = tmp_path / "export.jsonl"
    thread = {
        "id": "t1",
        "title": "Choosing a database",
        "messages": [
            {"id": "m1", "role": "user", "content": "Should we store the notes in PostgreSQL or SQLite?"},
            {"id": "m2", "role": "assistant", "content": "SQLite: one file, no server, easy backups."},
        ],
    }
    export.write_text(json.dumps(thread) + "\n")
    run([memapp, "--db", str(db), "import", str(export)], tmp_path, env)
    run(
        [memapp, "--db", str(db), "memory", "add", "--category", "preference", "I prefer SQLite."],
        tmp_path,
        env,
    )
    stats = json.loads(run([memapp, "--db", str(db), "stats", "--json"], tmp_path, env))
    assert stats["threads"] == 1 and stats["messages"] == 2 and stats["embedded_memories"] == 1, stats

    # Semantic: no word of the query is in the memory; the vectors come from the ONNX copy built here.
    hits = json.loads(
        run([memapp, "--db", str(db), "search", "which database engine", "--json"], tmp_path, env)
    )
    assert any("SQLite" in h["content"] for h in hits["results"]), hits
    assert any("semantic" in h["matched"] for h in hits["results"]), hits
    assert list((tmp_path / "cache" / "onnx").glob("*.onnx")), "the ONNX copy was written from the weights"

    mcp = json.loads(run([py, "-c", MCP_SESSION, memapp, str(db)], tmp_path, env))
    assert mcp["server"] and not mcp["call"].get("isError"), mcp
    assert "SQLite" in json.dumps(mcp["call"])

    screens = run([py, "-c", TUI_SESSION, str(db)], tmp_path, env).split()
    assert screens == ["MemoriesScreen", "ThreadsScreen"], screens
