"""`memapp` in a real pseudo-terminal, for the tests that must see the process itself (start-up, quitting):
Pilot runs the app inside the test's process, where exiting and thread teardown cannot be timed."""

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
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
CTRL_Q = b"\x11"


@dataclass
class PtyMemapp:
    proc: subprocess.Popen[bytes]
    master: int
    screen: bytearray = field(default_factory=bytearray)
    closed: bool = False

    def wait_for(self, pattern: bytes | re.Pattern[bytes], timeout: float) -> bool:
        """True once `pattern` has been drawn (bytes, or a regex over the raw output)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if (pattern in self.screen) if isinstance(pattern, bytes) else pattern.search(self.screen):
                return True
            time.sleep(0.05)
        return False

    def hang_up(self) -> None:
        """Close the terminal, as closing its window does (the pty is not memapp's controlling
        terminal, so no SIGHUP comes: the case `make run` left running)."""
        self.closed = True
        os.close(self.master)

    def quit_seconds(self) -> float:
        """Press ctrl+q and return how long the process took to end."""
        t0 = time.monotonic()
        os.write(self.master, CTRL_Q)
        self.proc.wait(timeout=60)
        return time.monotonic() - t0


@contextmanager
def memapp_in_pty(db: Path, config: Path, size: tuple[int, int] = (120, 40)) -> Iterator[PtyMemapp]:
    """`memapp --db DB` on a pty of `size` (columns, rows); killed on the way out if still running."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", size[1], size[0], 0, 0))
    env = {**os.environ, "TERM": "xterm-256color", "MEMAPP_CONFIG": str(config)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "app", "--db", str(db)],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        close_fds=True,
        cwd=REPO,
    )
    os.close(slave)
    run = PtyMemapp(proc, master)

    def drain() -> None:
        try:
            while chunk := os.read(master, 65536):
                run.screen.extend(chunk)
        except OSError:
            pass

    threading.Thread(target=drain, daemon=True).start()
    try:
        yield run
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if not run.closed:
            os.close(master)
