"""The one place that opens connections to chat.db.

Every connection gets the same treatment: sqlite-vec loaded, WAL, foreign keys, a busy timeout of
seconds (apsw's best-practice default of 100 ms turns ordinary contention between the TUI, an import
and a CLI edit into "database is locked"), IMMEDIATE write transactions (the write lock is taken up
front, so the busy timeout applies instead of failing on a lock upgrade), no double-quoted string
literals, and SQLite's own log routed to the `memapp.sqlite` logger instead of stderr, where it would
garble the TUI.

Opening never modifies a file it then refuses: the file is checked to be a database and not of a newer
schema before WAL is switched on or any migration runs.
"""

from __future__ import annotations

import contextlib
import logging
import os
from pathlib import Path

import apsw
import apsw.ext
import sqlite_vec

from store import migrations
from store.errors import NotADatabaseError, StoreError

BUSY_TIMEOUT_MS = 15_000

_log = logging.getLogger("memapp.sqlite")
_log.addHandler(logging.NullHandler())
_log_routed = False


def _route_sqlite_log() -> None:
    global _log_routed
    if not _log_routed:
        # MisuseError: SQLite was already initialised by someone else; keep their setting.
        with contextlib.suppress(apsw.MisuseError):
            apsw.ext.log_sqlite(logger=_log, level=logging.WARNING)
        _log_routed = True


def _create_private(path: Path) -> None:
    """A new chat.db is readable by its owner only (0600), whatever the umask."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    os.close(fd)


def connect(path: str | Path, *, create: bool = True, migrate: bool = True) -> apsw.Connection:
    """Open (creating if allowed) and migrate chat.db. Raises StoreError subclasses with clear text."""
    _route_sqlite_log()
    path = Path(path)
    if str(path) != ":memory:":
        if not path.exists():
            if not create:
                raise StoreError(f"{path} does not exist")
            _create_private(path)
        elif path.is_dir():
            raise NotADatabaseError(f"{path} is a directory, not a chat.db file")
    flags = apsw.SQLITE_OPEN_READWRITE | (apsw.SQLITE_OPEN_CREATE if create else 0)
    try:
        con = apsw.Connection(str(path), flags=flags)
    except apsw.CantOpenError as exc:
        raise StoreError(f"cannot open {path}: {exc}") from exc
    try:
        con.set_busy_timeout(BUSY_TIMEOUT_MS)
        con.enable_load_extension(True)
        con.load_extension(sqlite_vec.loadable_path())
        con.enable_load_extension(False)
        try:
            con.execute("PRAGMA schema_version").fetchall()  # reads page 1: proves it is a database
        except (apsw.NotADBError, apsw.CorruptError) as exc:
            raise NotADatabaseError(
                f"{path} is not a memapp database (or it is corrupt); it was left untouched"
            ) from exc
        migrations.check_not_newer(con, str(path))
        con.config(apsw.SQLITE_DBCONFIG_DQS_DML, 0)
        con.config(apsw.SQLITE_DBCONFIG_DQS_DDL, 0)
        con.execute("PRAGMA foreign_keys = ON")
        if str(path) != ":memory:":
            con.execute("PRAGMA journal_mode = WAL").fetchall()
            con.execute("PRAGMA synchronous = NORMAL")
        con.transaction_mode = "IMMEDIATE"
        if migrate:
            migrations.migrate(con, str(path))
        return con
    except BaseException:
        con.close()
        raise
