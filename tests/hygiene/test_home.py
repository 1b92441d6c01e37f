"""A whole session with HOME pointed at an empty folder: memapp writes only under its own data, config and
cache folders, everything private (0600 files, 0700 folders it made), and nothing of the model's
libraries (no ~/.cache/huggingface, no torch caches) — issue 20, part 5."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.model, pytest.mark.serial]

ALLOWED = (".local/share/memapp", ".config/memapp", ".cache/memapp")


def test_a_session_writes_only_private_files_in_memapps_own_folders(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("MEMAPP_", "XDG_", "HF_", "TRANSFORMERS_", "TORCH"))
    }
    env.update(HOME=str(home), PYTHONDONTWRITEBYTECODE="1")
    os.umask(0o022)

    def memapp(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "app", *args],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    memapp("memory", "add", "I prefer restic for backups", "--category", "preference")
    memapp("import", str(REPO / "data" / "demo.json"), "--json")
    memapp("search", "backups on the NAS", "--json")
    memapp("export", "-o", str(home / ".local/share/memapp/export.json"))
    memapp("backup", str(home / ".local/share/memapp/copy.db"))

    written = sorted(p.relative_to(home).as_posix() for p in home.rglob("*"))
    outside = [
        p
        for p in written
        if not p.startswith(ALLOWED) and p not in {".local", ".local/share", ".config", ".cache"}
    ]
    assert outside == [], outside
    for rel in written:
        path = home / rel
        mode = stat.S_IMODE(path.lstat().st_mode)
        if path.is_dir():
            if rel.startswith(ALLOWED):
                assert mode == 0o700, (rel, oct(mode))
        else:
            assert mode == 0o600, (rel, oct(mode))
    assert ".local/share/memapp/chat.db" in written
