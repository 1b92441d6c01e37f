"""All three faces on one chat.db at once (issue 20, part 3): the TUI open (Pilot, pressing keys), the CLI
importing and editing memories in other processes, and an MCP server answering searches and adding
memories, for 8 s in CI and 60 s in the soak run.

Afterwards: nobody saw a traceback or "database is locked", no edit was lost (every acknowledged CLI edit
is in its row, every memory MCP added is there), access counts are exactly the uses the search rules
define (the TUI only listed memories, which never counts; every memory an MCP search returned counts
once), and the TUI, without a key pressed, shows the final counts within its refresh interval.
"""

from __future__ import annotations

import asyncio
import json
import os
import select
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from app.tui.app import MemApp
from embeddings import FakeEmbedder
from store import Store
from tests.reliability.invariants import apply_edit, database_problems, history_problems, memory_state
from tests.reliability.processes import SOAK, Runner, end, no_embed_config

REPO = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.soak, pytest.mark.serial]


class McpClient:
    """`memapp mcp` spoken to line by line (JSON-RPC over stdio), from a plain thread."""

    def __init__(self, db: Path, config: Path) -> None:
        env = {**os.environ, "MEMAPP_DB": str(db), "MEMAPP_CONFIG": str(config)}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "app", "mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=REPO,
        )
        self.n = 0
        self.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "faces", "version": "1"},
            },
        )
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _send(self, obj: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(obj).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.n += 1
        self._send({"jsonrpc": "2.0", "id": self.n, "method": method, "params": params})
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], 120)
        assert ready, f"no answer to {method}"
        answer = json.loads(self.proc.stdout.readline())
        assert answer["id"] == self.n
        return answer

    def tool(self, name: str, **arguments: Any) -> dict[str, Any]:
        result = self.request("tools/call", {"name": name, "arguments": arguments})["result"]
        assert not result["isError"], result["content"][0]["text"]
        return result["structuredContent"]

    def close(self) -> str:
        assert self.proc.stderr is not None
        end(self.proc)
        return self.proc.stderr.read().decode(errors="replace")


def _mcp_worker(
    client: McpClient, deadline: float, returned: Counter[int], added: list[int], errors: list[str]
) -> None:
    i = 0
    try:
        while time.monotonic() < deadline:
            found = client.tool("search_memory", query=f"garden note {i % 6}", k=5)
            returned.update(hit["id"] for hit in found["results"])
            if i % 3 == 0:
                out = client.tool(
                    "add_memory",
                    content=f"MCP fact number {i}: the shed key is in drawer {i}",
                    category="fact",
                )
                added.append(out["memory"]["id"])
            i += 1
    except Exception as exc:  # noqa: BLE001 - reported by the test
        errors.append(repr(exc))


def _importer(
    db: Path, config: Path, tmp: Path, deadline: float, imported: list[str], errors: list[str]
) -> None:
    n = 0
    while time.monotonic() < deadline:
        export = tmp / f"import-{n}.jsonl"
        thread = {
            "id": f"cli-{n}",
            "title": f"CLI import {n}",
            "messages": [
                {
                    "id": f"cli-{n}-{i}",
                    "role": "user" if i % 2 == 0 else "assistant",
                    "content": f"imported while the TUI was open, part {n}.{i}",
                }
                for i in range(12)
            ],
        }
        export.write_text(json.dumps(thread) + "\n")
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "app",
                "--db",
                str(db),
                "--config",
                str(config),
                "import",
                str(export),
                "--no-summarize",
                "--json",
            ],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=300,
        )
        if done.returncode != 0 or done.stderr.strip():
            errors.append(f"import {n}: exit {done.returncode}: {done.stderr.strip()[-500:]}")
            return
        imported.append(f"cli-{n}")
        n += 1


async def _drive_tui(app: MemApp, deadline: float) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        keys = ["1", "2", "3", "4", "1", "2", "down", "up", "5", "escape"]
        i = 0
        while time.monotonic() < deadline:
            await pilot.press(keys[i % len(keys)])
            await pilot.pause(0.2)
            i += 1
        await pilot.press("2")  # Memories, and wait for the refresh that follows the last writes
        for _ in range(40):  # (an import started just before the deadline may still be writing: re-read)
            with Store(app_db(app), embedder=None) as s:
                want_memories = len(s.list_memories(limit=10**6))
                want_threads = s.count_threads()
            await pilot.pause(0.1)
            if app.status.memories == want_memories and app.status.threads == want_threads:
                break
        assert (app.status.memories, app.status.threads) == (want_memories, want_threads)


def app_db(app: MemApp) -> Path:
    return Path(app.store.path)


def test_tui_cli_and_mcp_at_once(tmp_path: Path, figures: dict[str, int]) -> None:
    seconds = 60.0 if SOAK else 8.0
    db = tmp_path / "chat.db"
    config = no_embed_config(tmp_path)
    with Store(db, embedder=None) as store:
        ids = [
            store.add_memory(f"garden note {i % 6}: tomatoes row {i}", "fact").memory.id for i in range(12)
        ]
        edited = ids[6:]
        model: dict[int, dict[str, Any]] = {}
        for i in edited:
            state = memory_state(store, i)
            assert state is not None
            model[i] = state
    journal = tmp_path / "journal.jsonl"
    loop = Runner(
        ["@edit-loop", str(db), str(config), str(journal), "11", str(seconds), ",".join(map(str, edited))],
        tmp_path,
        tag="edit-loop",
    )
    client = McpClient(db, config)
    returned: Counter[int] = Counter()
    added: list[int] = []
    imported: list[str] = []
    errors: list[str] = []
    loop.go()
    deadline = time.monotonic() + seconds
    workers = [
        threading.Thread(target=_mcp_worker, args=(client, deadline, returned, added, errors)),
        threading.Thread(target=_importer, args=(db, config, tmp_path, deadline, imported, errors)),
    ]
    for w in workers:
        w.start()
    tui_store = Store(db, embedder=FakeEmbedder())
    try:
        asyncio.run(_drive_tui(MemApp(tui_store, greet=False), deadline))
    finally:
        for w in workers:
            w.join(timeout=seconds + 300)
        tui_store.close()
        mcp_stderr = client.close()
    assert loop.wait(timeout=300) == 0 and loop.stderr() == "", loop.stderr()
    assert errors == []
    assert "Traceback" not in mcp_stderr and "locked" not in mcp_stderr, mcp_stderr[-2000:]
    steps = [json.loads(line) for line in journal.read_text().splitlines()]
    done = [s["done"] for s in steps if "done" in s]
    assert len(done) > 5 and sum(returned.values()) > 5 and added and imported
    for step in done:
        model[step["id"]] = apply_edit(model[step["id"]], step["op"], step["value"])
    with Store(db, embedder=None) as store:
        assert database_problems(store) == [] and history_problems(store) == []
        for mid, state in model.items():
            assert memory_state(store, mid) == state, f"memory {mid}: a CLI edit was lost"
        assert all(store.get_memory(mid) for mid in added)
        counts = {
            int(i): int(n) for i, n in store.con.execute("SELECT id, access_count FROM long_term_memories")
        }
        assert counts == {mid: returned.get(mid, 0) for mid in counts}, "access counts are not the uses"
        assert {t.external_id for t in store.list_threads(limit=10**6)} >= set(imported)
    figures["faces seconds (TUI + CLI + MCP)"] = figures.get("faces seconds (TUI + CLI + MCP)", 0) + int(
        seconds
    )
    figures["faces operations checked"] = figures.get("faces operations checked", 0) + (
        len(done) + sum(returned.values()) + len(added) + len(imported)
    )
