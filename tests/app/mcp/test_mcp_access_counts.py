"""Access counts in the MCP server: a read-only server never writes them (issue 28, 20), and a search
answered while another process holds the write lock neither waits for it nor loses its counts (issue
28, 21: `search_memory` failed after 15 s while an import held the lock)."""

from __future__ import annotations

import hashlib
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import apsw
import pytest

from store import Store
from tests.reliability.mcp_burst import McpProcess
from tests.reliability.processes import REPO, no_embed_config, runner_env

pytestmark = pytest.mark.serial  # timed


def _files(db: Path) -> str:
    """The bytes of chat.db and its -wal: what a read-only server must leave exactly as they were."""
    h = hashlib.sha256()
    for suffix in ("", "-wal"):
        p = Path(f"{db}{suffix}")
        h.update(p.read_bytes() if p.exists() else b"")
    return h.hexdigest()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "chat.db"
    with Store(path, embedder=None) as s:
        s.add_memory("I prefer restic for backups", "preference")
        s.add_memory("My NAS is a Synology DS920+", "fact")
    return path


def _server(tmp: Path, db: Path, *args: str) -> McpProcess:
    cmd = [sys.executable, "-m", "app", "--db", str(db), "--config", str(no_embed_config(tmp)), "mcp", *args]
    return McpProcess(cmd, runner_env(tmp), REPO, tmp / "mcp.err")


@pytest.fixture
def holder(db: Path) -> Iterator[apsw.Connection]:
    """Another process's write transaction on chat.db, held until the test releases it."""
    con = apsw.Connection(str(db))
    yield con
    if con.in_transaction:
        con.execute("ROLLBACK")
    con.close()


def _access_counts(db: Path) -> list[int]:
    with Store(db, embedder=None) as s:
        return [m.access_count for m in s.list_memories()]


def test_a_read_only_server_never_writes_chat_db(tmp_path: Path, db: Path) -> None:
    before = _files(db)
    server = _server(tmp_path, db, "--read-only")
    try:
        calls = [
            ("search_memory", {"query": "restic backups"}),
            ("get_profile", {}),
            ("list_memories", {}),
            ("search_conversations", {"query": "restic"}),
        ]
        burst = server.burst(calls, timeout=120)
        assert burst.answered == len(calls) and burst.errors == [], burst.errors
        found = burst.results[min(burst.results)]  # the first call: search_memory
        assert found["result"]["structuredContent"]["results"], "the search found the memory"
        time.sleep(1.5)  # past any delayed write
    finally:
        assert server.close() == 0
    assert _files(db) == before
    assert _access_counts(db) == [0, 0]


def test_a_search_while_another_process_holds_the_write_lock_answers_at_once(
    tmp_path: Path, db: Path, holder: apsw.Connection
) -> None:
    server = _server(tmp_path, db)
    try:
        warm = server.burst([("list_memories", {})], timeout=120)  # the store is open before the lock
        assert warm.errors == []
        holder.execute("BEGIN IMMEDIATE")  # e.g. an import writing a big thread
        found = server.burst([("search_memory", {"query": "restic backups"})], timeout=60)
        assert found.answered == 1 and found.errors == [], found.errors
        assert found.seconds < 3.0, f"the search waited {found.seconds:.1f} s for the writer"
        hits = found.results[next(iter(found.results))]["result"]["structuredContent"]["results"]
        assert [h["content"] for h in hits] == ["I prefer restic for backups"]
        time.sleep(0.5)
        holder.execute("ROLLBACK")  # the writer is done: the counted access is written now
        deadline = time.monotonic() + 10
        while sorted(_access_counts(db)) != [0, 1]:
            assert time.monotonic() < deadline, "the access was never counted"
            time.sleep(0.2)
    finally:
        assert server.close() == 0
