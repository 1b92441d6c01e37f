"""Quitting with the embedding model loaded ends the process at once (issue 18: the screen cleared at
once but the process lingered 5-6 s tearing down torch)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app.tui import EXIT_HANGUP
from store import Store
from tests.app.tui.pty_helpers import memapp_in_pty

READY = re.compile(rb"semantic (?:\x1b\[[0-9;]*m)*ready")  # the status line, styles between the words


@pytest.mark.model
def test_quitting_with_the_model_loaded_exits_promptly(tmp_path: Path) -> None:
    db = tmp_path / "chat.db"
    with Store(db, embedder=None) as s:
        s.add_memory("I prefer uv over pip", "preference")
    with memapp_in_pty(db, tmp_path / "none.toml") as run:
        assert run.wait_for(READY, 120), "the model never finished loading"
        quit_s = run.quit_seconds()
    assert run.proc.returncode == 0
    assert quit_s < 2.0, f"quitting took {quit_s:.1f} s"
    with Store(db, embedder=None) as s:
        assert s.scalar("PRAGMA integrity_check") == "ok"


def test_a_closed_terminal_ends_the_process(tmp_path: Path) -> None:
    """With its terminal gone and no SIGHUP, memapp leaves within seconds (it used to spin at 100% CPU,
    its event loop stuck, until killed)."""
    db = tmp_path / "chat.db"
    with Store(db, embedder=None) as s:
        s.add_memory("I prefer uv over pip", "preference")
    config = tmp_path / "none.toml"
    config.write_text("[embedding]\nenabled = false\n")
    with memapp_in_pty(db, config) as run:
        assert run.wait_for(b"palette", 60), "memapp never drew its first screen"
        run.hang_up()
        run.proc.wait(timeout=10)
    assert run.proc.returncode == EXIT_HANGUP
    with Store(db, embedder=None) as s:
        assert (
            s.scalar("PRAGMA integrity_check") == "ok"
            and s.scalar("SELECT count(*) FROM long_term_memories") == 1
        )
