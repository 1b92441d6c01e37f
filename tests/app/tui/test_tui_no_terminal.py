"""Plain `memapp` with no terminal (a pipe, cron, an editor's task runner) says it needs one and exits 2,
instead of starting the TUI with nobody to see it and hanging (issue 28.11)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("stdin_is_a_terminal", [False, True])
def test_without_a_terminal_memapp_says_so_and_exits_2(tmp_path: Path, stdin_is_a_terminal: bool) -> None:
    env = {**os.environ, "MEMAPP_DB": str(tmp_path / "chat.db"), "MEMAPP_CONFIG": str(tmp_path / "c.toml")}
    stdin = subprocess.DEVNULL
    if stdin_is_a_terminal:  # stdout piped (`memapp | less`), stdin a terminal
        main_fd, stdin = os.openpty()
    try:
        out = subprocess.run(
            [sys.executable, "-m", "app"],
            stdin=stdin,
            capture_output=True,
            text=True,
            env=env,
            cwd=REPO,
            timeout=60,
        )
    finally:
        if stdin_is_a_terminal:
            os.close(main_fd)
            os.close(stdin)
    assert out.returncode == 2, out
    assert out.stdout == ""
    [line] = out.stderr.strip().splitlines()
    assert line.startswith("memapp: ") and "terminal" in line and "memapp --help" in line
    assert not (tmp_path / "chat.db").exists()  # nothing was created for a TUI that never ran
