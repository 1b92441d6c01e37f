"""A chat.db made by the first released schema opens with today's code, is upgraded, and keeps every row."""

from __future__ import annotations

import shutil
from pathlib import Path

import apsw
import sqlite_vec

from embeddings import FakeEmbedder
from store import Store, ThreadIn
from store.migrations import LATEST
from store.records import MessageIn
from store.text import fts_query

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "chat-v1.db"
TABLES = [
    "threads",
    "messages",
    "thread_summaries",
    "long_term_memories",
    "memory_history",
    "memory_topics",
    "compression_history",
]


def _rows(path: Path, table: str, columns: list[str]) -> list[tuple]:
    con = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    con.enable_load_extension(True)
    con.load_extension(sqlite_vec.loadable_path())
    rows = [tuple(r) for r in con.execute(f"SELECT {', '.join(columns)} FROM {table} ORDER BY rowid")]
    con.close()
    return rows


def _columns(path: Path, table: str) -> list[str]:
    con = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    cols = [r[1] for r in con.execute(f"PRAGMA table_info({table})")]
    con.close()
    return cols


def test_v1_database_upgrades_and_keeps_every_row(tmp_path: Path) -> None:
    db = tmp_path / "chat.db"
    shutil.copy(FIXTURE, db)
    old_cols = {t: _columns(FIXTURE, t) for t in TABLES}
    before = {t: _rows(FIXTURE, t, old_cols[t]) for t in TABLES}
    assert all(before.values())
    s = Store(db, embedder=FakeEmbedder())
    assert s.schema_version() == LATEST
    for t in TABLES:
        after = [tuple(r) for r in s.con.execute(f"SELECT {', '.join(old_cols[t])} FROM {t} ORDER BY rowid")]
        assert after == before[t], t
    # The upgraded file works: keyword search over old rows, new writes, and the indexes agree.
    hits = {
        r[0]
        for r in s.con.execute(
            "SELECT rowid FROM fts_messages WHERE fts_messages MATCH ?", (fts_query("红烧"),)
        )
    }
    assert hits == {3}
    s.add_memory("a new memory after the upgrade", "fact")
    assert s.check_indexes() == [] and s.integrity_check() == "ok"
    s.close()


def test_threads_from_before_migration_10_keep_their_title_on_reimport(tmp_path: Path) -> None:
    """Migration 10 adds threads.source_title, NULL for old rows: such a title may already be a rename
    (31.6), so a re-import whose export calls the thread something else keeps it, and remembers the
    export's title for next time."""
    db = tmp_path / "chat.db"
    shutil.copy(FIXTURE, db)
    s = Store(db, embedder=FakeEmbedder())
    try:
        assert s.con.execute("SELECT title, source_title FROM threads WHERE id = 1").fetchall() == [
            ("Backups", None)
        ]
        thread = ThreadIn(
            "chatgpt",
            "conv-1",
            "NAS backup question",
            [MessageIn("user", "How do I back up my NAS?", "n1"), MessageIn("user", "And offsite?", "n9")],
        )
        s.write_thread(thread)
        assert s.con.execute("SELECT title, source_title FROM threads WHERE id = 1").fetchall() == [
            ("Backups", "NAS backup question")
        ]
        thread.title = "Renamed in ChatGPT"
        s.write_thread(thread)
        assert s.get_thread(1).title == "Renamed in ChatGPT"
    finally:
        s.close()
