"""Quitting with the embedding model loaded ends the process at once (issue 18: the screen cleared at
once but the process lingered 5-6 s tearing down torch)."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path

import pytest

from store import Store

READY = re.compile(rb"semantic (?:\x1b\[[0-9;]*m)*ready")  # the status line, styles between the words


@pytest.mark.model
def test_quitting_with_the_model_loaded_exits_promptly(tmp_path: Path) -> None:
    db = tmp_path / "chat.db"
    with Store(db, embedder=None) as s:
        s.add_memory("I prefer uv over pip", "preference")
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    env = {**os.environ, "TERM": "xterm-256color", "MEMAPP_CONFIG": str(tmp_path / "none.toml")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "app", "--db", str(db)],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        close_fds=True,
        cwd=Path(__file__).resolve().parents[3],
    )
    os.close(slave)
    screen = bytearray()

    def drain() -> None:
        try:
            while chunk := os.read(master, 65536):
                screen.extend(chunk)
        except OSError:
            pass

    threading.Thread(target=drain, daemon=True).start()
    try:
        deadline = time.monotonic() + 120
        while not READY.search(screen) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert READY.search(screen), "the model never finished loading"
        t0 = time.monotonic()
        os.write(master, b"\x11")  # ctrl+q
        proc.wait(timeout=60)
        quit_s = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    assert proc.returncode == 0
    assert quit_s < 2.0, f"quitting took {quit_s:.1f} s"
    with Store(db, embedder=None) as s:
        assert s.scalar("PRAGMA integrity_check") == "ok"
