"""Migrations from an empty file, the schema snapshot, and refusing files we must not touch."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

import apsw
import pytest

from store import NotADatabaseError, SchemaTooNewError, Store
from store.migrations import LATEST, MIGRATIONS

SNAPSHOT = Path(__file__).parent / "schema_snapshot.sql"


def _schema(con: apsw.Connection) -> str:
    rows = con.execute(
        "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL "
        "AND name NOT LIKE 'vec_%' AND name NOT LIKE 'fts_%\\_%' ESCAPE '\\' ORDER BY type, name"
    ).fetchall()
    return "\n".join(f"-- {t} {n}\n{sql};" for t, n, sql in rows) + "\n"


def test_migrates_an_empty_file_to_latest(db_path: Path) -> None:
    s = Store(db_path, embedder=None)
    assert s.schema_version() == LATEST
    applied = s.con.execute("SELECT version, name FROM schema_migrations ORDER BY version").fetchall()
    assert [v for v, _ in applied] == [v for v, _, _ in MIGRATIONS]
    s.close()
    # Re-opening applies nothing and changes nothing.
    s2 = Store(db_path, embedder=None)
    assert len(s2.con.execute("SELECT * FROM schema_migrations").fetchall()) == len(MIGRATIONS)
    s2.close()


def test_schema_matches_snapshot(db_path: Path) -> None:
    """A schema change must be reviewed: regenerate with MEMAPP_UPDATE_SCHEMA=1 and read the diff."""
    s = Store(db_path, embedder=None)
    current = _schema(s.con)
    s.close()
    if os.environ.get("MEMAPP_UPDATE_SCHEMA"):
        SNAPSHOT.write_text(current)
    assert current == SNAPSHOT.read_text()


def test_new_database_is_private(db_path: Path) -> None:
    Store(db_path, embedder=None).close()
    assert stat.S_IMODE(db_path.stat().st_mode) == 0o600


def test_connection_settings(store: Store) -> None:
    con = store.con
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"  # type: ignore[index]
    assert con.execute("PRAGMA foreign_keys").fetchone()[0] == 1  # type: ignore[index]
    assert con.execute("PRAGMA busy_timeout").fetchone()[0] >= 5000  # type: ignore[index]
    assert con.execute("SELECT vec_version()").fetchone()[0].startswith("v0.1")  # type: ignore[index]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_newer_schema_is_refused_untouched(db_path: Path) -> None:
    Store(db_path, embedder=None).close()
    con = apsw.Connection(str(db_path))
    con.execute(f"PRAGMA user_version = {LATEST + 1}")
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    before = _digest(db_path)
    with pytest.raises(SchemaTooNewError, match="newer memapp"):
        Store(db_path, embedder=None)
    assert _digest(db_path) == before


@pytest.mark.parametrize(
    "content", [b"not a database at all\n" * 200, b"SQLite format 3\x00" + b"\xff" * 4000]
)
def test_not_a_database_is_refused_untouched(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "junk.db"
    path.write_bytes(content)
    with pytest.raises(NotADatabaseError, match="left untouched"):
        Store(path, embedder=None)
    assert path.read_bytes() == content
    assert not (tmp_path / "junk.db-wal").exists()
