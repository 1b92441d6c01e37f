"""Fixtures for the TUI tests: the real app on a temp chat.db with the fake embedder, made deterministic.

- Times are shown in local time, so TZ is pinned to UTC; the database is opened by a relative path
  (the test's temp dir is the working directory), so the status line shows `chat.db` in every run.
- The input cursor does not blink (a snapshot must not depend on when it is taken).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.widgets import Input

from embeddings import FakeEmbedder
from store import Store
from store.importing import load_demo


@pytest.fixture(autouse=True)
def deterministic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(Input, "_toggle_cursor", lambda self: None)
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture
def tui_store(tmp_path: Path) -> Iterator[Store]:
    s = Store(Path("chat.db"), embedder=FakeEmbedder())
    yield s
    s.close()


FIXED_TIME = 1_767_225_600.0  # 2026-01-01 00:00 UTC


@pytest.fixture
def demo_store(tui_store: Store) -> Store:
    """The bundled demo, with the summaries' and memories' times (import time) pinned for snapshots."""
    load_demo(tui_store)
    with tui_store.con:
        tui_store.con.execute(
            "UPDATE thread_summaries SET created_at = ?, updated_at = ?", (FIXED_TIME, FIXED_TIME)
        )
        # The Memories detail pane shows when each memory was added and its history.
        tui_store.con.execute(
            "UPDATE long_term_memories SET created_at = ?, updated_at = ?", (FIXED_TIME, FIXED_TIME)
        )
        tui_store.con.execute("UPDATE memory_history SET at = ?", (FIXED_TIME,))
    return tui_store
