"""`memapp restore` while memapp runs, and killed (issue 31, 3: copying a backup over chat.db under a
running MCP server destroyed the database for good).

- An MCP server runs across a restore made by another process: it keeps answering, sees the restored
  memories (and not the ones made after the backup), and takes new writes; chat.db passes its checks.
- The kill series: `restore` SIGKILLed just before a seeded random one of its writes (the copy of the
  current state it keeps, the pages, the migration and generation step): chat.db is then exactly the
  state before or the backup's, never a mix, and a run to the end restores it.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from store import Store
from tests.reliability.invariants import checked_store, database_problems
from tests.reliability.mcp_burst import McpProcess
from tests.reliability.processes import (
    REPO,
    Zygote,
    count_kills,
    kill_at_a_write,
    no_embed_config,
    runner_env,
)

SEED = int(os.environ.get("MEMAPP_CRASH_SEED", "8008"))

pytestmark = [pytest.mark.soak, pytest.mark.serial]


def _contents(db: Path) -> set[str]:
    with Store(db, embedder=None) as s:
        return {m.content for m in s.list_memories(limit=10_000)}


def _call(server: McpProcess, name: str, **arguments: object) -> dict[str, object]:
    burst = server.burst([(name, dict(arguments))], timeout=120)
    assert burst.answered == 1 and burst.errors == [], burst.errors
    result = next(iter(burst.results.values()))["result"]
    return dict(result["structuredContent"])


def _memapp(tmp: Path, db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "app", "--db", str(db), "--config", str(no_embed_config(tmp)), *args]
    return subprocess.run(cmd, cwd=REPO, env=runner_env(tmp), capture_output=True, text=True, timeout=300)


def test_an_mcp_server_keeps_working_across_a_restore(tmp_path: Path, figures: dict[str, int]) -> None:
    db = tmp_path / "chat.db"
    with Store(db, embedder=None) as s:
        s.add_memory("I prefer restic for backups", "preference")
    cmd = [sys.executable, "-m", "app", "--db", str(db), "--config", str(no_embed_config(tmp_path)), "mcp"]
    server = McpProcess(cmd, runner_env(tmp_path), REPO, tmp_path / "mcp.err")
    try:
        _call(server, "add_memory", content="My NAS is a Synology DS920+", category="fact")
        backup = tmp_path / "monday.db"
        done = _memapp(tmp_path, db, "backup", str(backup))
        assert done.returncode == 0, done.stderr
        _call(server, "add_memory", content="Added after the backup, gone after the restore", category="fact")
        restored = _memapp(tmp_path, db, "restore", str(backup))
        assert restored.returncode == 0, restored.stderr
        listed = _call(server, "list_memories")
        shown = {m["content"] for m in listed["memories"]}  # type: ignore[attr-defined]
        assert shown == {"I prefer restic for backups", "My NAS is a Synology DS920+"}
        found = _call(server, "search_memory", query="gone after the restore")
        assert found["results"] == []
        found = _call(server, "search_memory", query="Synology NAS")
        assert [r["content"] for r in found["results"]] == ["My NAS is a Synology DS920+"]  # type: ignore[attr-defined]
        _call(server, "add_memory", content="Written by the server after the restore", category="fact")
    finally:
        assert server.close() == 0, (tmp_path / "mcp.err").read_text()
    assert _contents(db) == {
        "I prefer restic for backups",
        "My NAS is a Synology DS920+",
        "Written by the server after the restore",
    }
    with Store(db, embedder=None) as s:
        assert database_problems(s) == [] and s.integrity_check() == "ok"
    figures["restores under a running MCP server"] = figures.get("restores under a running MCP server", 0) + 1


def test_restore_killed_leaves_either_state_then_completes(
    tmp_path: Path, soak: bool, figures: dict[str, int]
) -> None:
    template = tmp_path / "template.db"
    with Store(template, embedder=None) as s:
        for i in range(60):
            s.add_memory(f"kept in the backup, number {i}", "fact")
    backup = tmp_path / "backup.db"
    with Store(template, embedder=None) as s:
        from store.maintenance import backup as write_backup

        write_backup(s, backup)
        for i in range(40):
            s.add_memory(f"made after the backup, number {i}", "fact")
        s.delete_memory(1)
    live, saved = _contents(template), _contents(backup)
    assert live != saved
    args = ["--config", str(no_embed_config(tmp_path)), "restore", str(backup)]
    rng = random.Random(SEED + 31)
    kills = 12 if soak else 3
    landed = 0
    with Zygote(tmp_path) as zygote:
        for k in range(kills):
            db = tmp_path / f"chat-{k}.db"
            shutil.copyfile(template, db)
            landed += kill_at_a_write(zygote, db, args, rng, fake_embedder=False)
            with checked_store(db) as store:
                assert database_problems(store) == []
            assert _contents(db) in (live, saved), "a restore killed half-way left a mix"
            finish = zygote.run(["--db", str(db), *args])
            assert finish.wait() == 0, finish.stderr()
            assert _contents(db) == saved
            with checked_store(db):
                pass
    assert landed == kills
    count_kills(figures, "restore", landed)
