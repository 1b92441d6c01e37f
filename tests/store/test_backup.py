"""`memapp backup` makes a consistent, private copy even while another process writes."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.cli import main
from store import Store, StoreError, maintenance

WRITER = """
import sys, time
from store import Store
s = Store(sys.argv[1], embedder=None)
i = 0
deadline = time.monotonic() + float(sys.argv[2])
while time.monotonic() < deadline:
    s.add_memory(f"memory number {i} written during a backup", "fact")
    i += 1
print(i)
"""


@pytest.mark.serial  # another process writes for a fixed time
def test_backup_while_another_process_writes(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    db = tmp_path / "chat.db"
    Store(db, embedder=None).close()
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(db), "4"], stdout=subprocess.PIPE, text=True)
    time.sleep(1.0)
    copies = []
    for i in range(3):
        dest = tmp_path / f"backup-{i}.db"
        assert main(["--db", str(db), "backup", str(dest)]) == 0
        copies.append(dest)
        time.sleep(0.5)
    written = int(writer.communicate(timeout=60)[0])
    assert written > 0
    counts = []
    for dest in copies:
        assert stat.S_IMODE(dest.stat().st_mode) == 0o600
        capsys.readouterr()
        cfg = tmp_path / "c.toml"
        cfg.write_text("[embedding]\nenabled = false\n")
        assert main(["--db", str(dest), "--config", str(cfg), "doctor", "--json"]) == 0
        report = json.loads(capsys.readouterr().out)
        assert report["ok"] and report["integrity"] == "ok" and report["index_problems"] == []
        counts.append(report["counts"]["memories"]["active"])
    assert counts == sorted(counts) and counts[-1] <= written
    # Every copied memory is complete: history row and FTS row for each.
    s = Store(copies[-1], embedder=None)
    n = s.scalar("SELECT count(*) FROM long_term_memories")
    assert s.scalar("SELECT count(*) FROM memory_history WHERE event = 'add'") == n
    s.close()


def test_backup_refuses_to_overwrite(tmp_path: Path) -> None:
    s = Store(tmp_path / "chat.db", embedder=None)
    target = tmp_path / "exists.db"
    target.write_text("keep me")
    with pytest.raises(StoreError, match="already exists"):
        maintenance.backup(s, target)
    assert target.read_text() == "keep me"
