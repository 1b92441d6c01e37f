"""A burst of MCP calls sent without waiting to one `memapp mcp` is answered, all of it, in the time
the work takes (issue 31, 1: of 20 parallel `add_memory` calls, 3 were answered within 120 s, all
"chat.db stayed locked", with no other process running; 10,000 pipelined calls were unfinished after
15 minutes). 200 calls in CI, 1,000 in the soak run; then a plain copy of chat.db, taken 2 s after the
last answer while the server still runs, holds every memory (issue 31, 2)."""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

import apsw
import pytest

from store import Store
from tests.reliability.mcp_burst import McpProcess, add_calls
from tests.reliability.processes import REPO, no_embed_config, runner_env

pytestmark = [pytest.mark.serial, pytest.mark.soak]


def _server(tmp: Path, db: Path, *args: str) -> McpProcess:
    cmd = [sys.executable, "-m", "app", "--db", str(db), "--config", str(no_embed_config(tmp)), "mcp", *args]
    return McpProcess(cmd, runner_env(tmp), REPO, tmp / "mcp.err")


def _facts_in_copy(db: Path, tmp: Path) -> int:
    """Memories in a plain copy of chat.db alone (no -wal beside it), as a backup by copying gets."""
    copy = tmp / "plain-copy.db"
    shutil.copyfile(db, copy)
    con = apsw.Connection(str(copy), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        assert con.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        return int(str(con.execute("SELECT count(*) FROM long_term_memories").fetchall()[0][0]))
    finally:
        con.close()


def test_a_burst_of_add_memory_calls_is_all_answered(
    tmp_path: Path, soak: bool, figures: dict[str, int]
) -> None:
    n = 1000 if soak else 200
    db = tmp_path / "chat.db"
    Store(db, embedder=None).close()
    server = _server(tmp_path, db)
    try:
        burst = server.burst(add_calls(n), timeout=600 if soak else 180)
        assert burst.answered == n, (
            f"{n - burst.answered} of {n} calls unanswered after {burst.seconds:.0f} s"
        )
        assert burst.errors == [], burst.errors[:3]
        # A search sent after the burst is answered at once: nothing is left queued behind it.
        after = server.burst([("search_memory", {"query": "fact number 7"})], timeout=30)
        assert after.answered == 1 and after.errors == [] and after.seconds < 5
        time.sleep(2.0)  # writes stopped 2 s ago: chat.db alone must hold them (the WAL checkpointed)
        assert _facts_in_copy(db, tmp_path) == n
    finally:
        assert server.close() == 0, (tmp_path / "mcp.err").read_text()
    with Store(db, embedder=None) as store:
        assert len(store.list_memories(limit=10 * n)) == n
    figures["MCP calls of one burst, all answered"] = max(
        figures.get("MCP calls of one burst, all answered", 0), n
    )
    figures["plain-copy backups checked 2 s after load"] = (
        figures.get("plain-copy backups checked 2 s after load", 0) + 1
    )
