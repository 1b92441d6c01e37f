"""Quitting with the embedding model loaded ends the process at once (issue 18: the screen cleared at
once but the process lingered 5-6 s tearing down torch)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

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
