"""The one place that opens connections to chat.db.

Every connection gets the same treatment: sqlite-vec loaded, WAL, foreign keys, a busy timeout of
seconds (apsw's best-practice default of 100 ms turns ordinary contention between the TUI, an import
and a CLI edit into "database is locked"), no double-quoted string literals, and SQLite's own log routed
to the `memapp.sqlite` logger instead of stderr, where it would garble the TUI. Its write transactions
(`with con:`) queue for the process's write lock and then take SQLite's up front (store.writelock), and
its commits schedule a checkpoint that keeps chat.db itself whole (store.checkpoints): `_writes` wires
both.

Opening never modifies a file it then refuses: the file is checked to be a database and not of a newer
schema before WAL is switched on or any migration runs.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import logging
import os
import urllib.parse
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import apsw

from store import checkpoints, migrations, writelock
from store.errors import NotADatabaseError, StoreError
from store.writelock import Connection

if TYPE_CHECKING:
    import numpy as np

BUSY_TIMEOUT_MS = 15_000
WAL_SIZE_LIMIT = 32 * 1024**2  # bytes a -wal file is cut back to once a checkpoint lets it

_log = logging.getLogger("memapp.sqlite")
_log.addHandler(logging.NullHandler())
_log_routed = False


def _sqlite_log(code: int, message: str) -> None:
    """SQLite's error log, as apsw.ext.log_sqlite(level=WARNING) sends it (that module costs the TUI's
    start ~20 ms of imports): WARNING at most, INFO for the schema-changed retries FTS5 causes."""
    names = apsw.mapping_result_codes if code < 256 else apsw.mapping_extended_result_codes
    name = str(names.get(code, code))
    level = logging.INFO if code == apsw.SQLITE_SCHEMA else logging.WARNING
    _log.log(level, "SQLITE_LOG: %s (%d) %s", message, code, name)


def _route_sqlite_log() -> None:
    global _log_routed
    if not _log_routed:
        # MisuseError: SQLite was already initialised by someone else; keep their setting.
        with contextlib.suppress(apsw.MisuseError):
            apsw.config(apsw.SQLITE_CONFIG_LOG, _sqlite_log)
        _log_routed = True


def fts_term_counts(api: apsw.FTS5ExtensionApi, *args: apsw.SQLiteValue) -> str:
    """FTS5 auxiliary function `memapp_tf`: "rows total_tokens row_tokens tf_0 tf_1 ..." for the current
    row, from which store.search.keyword computes BM25 with its own k1 and b (FTS5's bm25() fixes them).
    The keyword tables have one column: its offsets list is read directly (half the cost of
    `phrase_locations`, which builds a list per column; this runs for every re-scored row)."""
    if api.aux_data is None:  # the table's totals, read once per query
        api.aux_data = f"{api.row_count} {api.column_total_size(-1)} "
    counts = " ".join([str(len(api.phrase_column_offsets(i, 0))) for i in range(api.phrase_count)])
    return f"{api.aux_data}{api.column_size(-1)} {counts}"


@functools.cache
def vec0_path() -> str:
    """`sqlite_vec.loadable_path()` without importing sqlite_vec: its __init__ imports numpy (~100 ms),
    which would then be paid by everything that only opens chat.db, the TUI's first frame included."""
    spec = importlib.util.find_spec("sqlite_vec")
    if spec is None or not spec.submodule_search_locations:
        raise StoreError("the sqlite-vec package is not installed")
    return os.path.normpath(os.path.join(next(iter(spec.submodule_search_locations)), "vec0"))


def _create_private(path: Path) -> None:
    """A new chat.db is readable by its owner only (0600), whatever the umask."""
    from store.files import private_dir

    private_dir(path.parent)  # the folders made for it are 0700 too
    fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    os.close(fd)


def _read_only(path: Path) -> bool:
    """True for an existing chat.db that cannot be written (the file, or its folder, where SQLite keeps the
    -wal and -shm files). Such a file is opened read-only and immutable, so reading works and every write
    is refused with one line (SQLite's read-only error), instead of the open failing outright.

    Changes still in a -wal file cannot be applied on a read-only disk and an immutable open would not see
    them: refused, rather than showing an older state."""
    if str(path) == ":memory:" or not path.exists():
        return False
    if os.access(path, os.W_OK) and os.access(path.parent, os.W_OK):
        return False
    wal = path.with_name(path.name + "-wal")
    if wal.exists() and wal.stat().st_size > 0:
        raise StoreError(
            f"{path} is read-only, and changes in {wal.name} cannot be applied there: open it once where "
            "it can be written"
        )
    return True


def is_read_only(con: apsw.Connection) -> bool:
    return bool(con.readonly("main"))


def _check_ours(con: apsw.Connection, path: Path) -> None:
    """Refuse an SQLite file of another application before anything writes to it.

    Only an empty database (a new chat.db) or one with memapp's bookkeeping table may be migrated or
    switched to WAL: an older simonw/llm logs.db (user_version 0) opened by mistake was switched to WAL and
    given memapp's 26 tables."""
    names = {str(r[0]) for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if not names or "schema_migrations" in names:
        return
    shown = ", ".join(sorted(names)[:5]) + (", …" if len(names) > 5 else "")
    raise NotADatabaseError(
        f"{path} is an SQLite database of another application (tables: {shown}), not a memapp chat.db; "
        "it was left untouched (to import it, use `memapp import` on it instead)"
    )


def _unlock(con: apsw.Connection, path: Path) -> None:
    """Key the connection when chat.db is encrypted, before anything reads it (store.crypto.keys: the key is
    derived once per process, so this costs a connection ~0.2 ms; a plain or new file is left as it is).
    Raises EncryptionKeyError, one line without the secret, when no passphrase opens it."""
    if str(path) != ":memory:":
        from store.crypto import keys

        keys.apply(con, path)


def connect(
    path: str | Path, *, create: bool = True, migrate: bool = True, checkpointed: bool = True
) -> Connection:
    """Open (creating if allowed) and migrate chat.db. Raises StoreError subclasses with clear text.
    `checkpointed=False`: the checkpoint thread's own connection (store.checkpoints)."""
    _route_sqlite_log()
    path = Path(path)
    if str(path) != ":memory:":
        if path.is_symlink():
            # Refused whatever it points at: a link where chat.db should be is how another file (or a
            # missing one, which would then be created elsewhere) gets written to by mistake.
            target = os.readlink(path)
            gone = "" if path.exists() else ", which does not exist"
            raise StoreError(
                f"{path} is a symbolic link to {target}{gone}; give the path of the chat.db file itself"
            )
        if not path.exists():
            if not create:
                raise StoreError(f"{path} does not exist")
            _create_private(path)
        elif path.is_dir():
            raise NotADatabaseError(f"{path} is a directory, not a chat.db file")
    read_only = _read_only(path)
    try:
        if read_only:
            con = Connection(
                f"file:{urllib.parse.quote(str(path.resolve()))}?mode=ro&immutable=1",
                flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI,
            )
        else:
            flags = apsw.SQLITE_OPEN_READWRITE | (apsw.SQLITE_OPEN_CREATE if create else 0)
            con = Connection(str(path), flags=flags)
    except apsw.CantOpenError as exc:
        raise StoreError(f"cannot open {path}: {exc}") from exc
    try:
        _unlock(con, path)
        _writes(con, path, checkpointed=checkpointed)
        con.enable_load_extension(True)
        con.load_extension(vec0_path())
        con.enable_load_extension(False)
        try:
            con.execute("PRAGMA schema_version").fetchall()  # reads page 1: proves it is a database
        except (apsw.NotADBError, apsw.CorruptError) as exc:
            raise NotADatabaseError(
                f"{path} is not a memapp database (or it is corrupt); it was left untouched"
            ) from exc
        _check_ours(con, path)
        migrations.check_not_newer(con, str(path))
        con.register_fts5_function("memapp_tf", fts_term_counts)
        con.config(apsw.SQLITE_DBCONFIG_DQS_DML, 0)
        con.config(apsw.SQLITE_DBCONFIG_DQS_DDL, 0)
        con.execute("PRAGMA foreign_keys = ON")
        if read_only:
            if migrations.current_version(con) < migrations.LATEST:
                raise StoreError(
                    f"{path} is read-only and was written by an older memapp: it needs an upgrade that "
                    "cannot be written here; open it once where it can be written"
                )
            return con
        if str(path) != ":memory:":
            if str(scalar(con, "PRAGMA journal_mode")).lower() != "wal":
                with con.locked():  # a new file's switch to WAL is a write; opening a WAL file never waits
                    con.execute("PRAGMA journal_mode = WAL").fetchall()
            con.execute("PRAGMA synchronous = NORMAL")
            # A reader holding a snapshot (the TUI, an MCP search) during a big import lets the WAL grow
            # past any checkpoint (1.39 GB once), and SQLite keeps the file that big for as long as any
            # connection is open; with a limit, the next checkpoint that completes shrinks it again.
            con.execute(f"PRAGMA journal_size_limit = {int(WAL_SIZE_LIMIT)}").fetchall()
        if migrate:
            migrations.migrate(con, str(path))
        return con
    except BaseException:
        con.close()
        raise


def _writes(con: Connection, path: Path, *, checkpointed: bool) -> None:
    """The busy timeout, this process's write lock for the file, and the delayed checkpoint its commits
    schedule (a connection to ":memory:" is a database of its own: a lock of its own, no checkpoint)."""
    con.set_busy_timeout(BUSY_TIMEOUT_MS)
    if str(path) == ":memory:":
        con.attach(writelock.WriteLock(), BUSY_TIMEOUT_MS)
        return
    st = path.stat()
    key = (st.st_dev, st.st_ino)
    if not checkpointed:
        con.attach(writelock.lock_for(key), BUSY_TIMEOUT_MS)
        return
    later = checkpoints.acquire(key, str(path), functools.partial(_reopen, path))
    con.attach(
        writelock.lock_for(key),
        BUSY_TIMEOUT_MS,
        later.wrote,
        functools.partial(checkpoints.release, later),  # the last one to close checkpoints, ends the thread
    )


def _reopen(path: Path) -> apsw.Connection:
    """A connection for the checkpoint thread: the file as it is, never created or migrated, and not one
    of the connections that keep the database's checkpointer (store.checkpoints) alive."""
    return connect(path, create=False, migrate=False, checkpointed=False)


def scalar(con: apsw.Connection, sql: str, args: Sequence[Any] = ()) -> Any:
    """The first column of the first row of `sql`, or None when it returns no row."""
    row = con.execute(sql, args).fetchone()
    return None if row is None else row[0]


def json_ids(ids: Sequence[int]) -> str:
    """Ids as a JSON array, for `IN (SELECT value FROM json_each(?))`: one bound parameter for any count."""
    return "[" + ",".join(str(int(i)) for i in ids) + "]"


# SQLite's carray() is compiled into apsw's wheels; an apsw built on a system SQLite may lack it.
HAS_CARRAY = "ENABLE_CARRAY" in apsw.compile_options


def id_table(ids: Sequence[int] | np.ndarray) -> tuple[str, Any]:
    """`ids` as a one-column table (`value`), for `IN (SELECT value FROM {table})` or a join, and the
    one parameter it binds. carray() reads an int64 array as it is, where json_each() parses JSON text
    written in Python first: searches read a few hundred rows by id this way (re-scoring, hydrating,
    filter checks), 1.0 instead of 1.2 ms for 333 vector rows plus the text (bench/perf/search.py). json_each
    where carray() is missing or the list is empty (carray() refuses an empty array)."""
    if HAS_CARRAY and len(ids):
        import numpy as np  # here: opening chat.db must not import numpy (tests/hygiene/test_light_imports.py)

        return "carray(?)", apsw.carray(np.ascontiguousarray(ids, dtype=np.int64))
    return "json_each(?)", json_ids([int(i) for i in ids])


class read_snapshot:  # noqa: N801 - used like a function: `with read_snapshot(con):`
    """A read transaction: one consistent view across several queries, without taking the write lock
    (`with con:` is IMMEDIATE for writers, which would block imports during an export)."""

    def __init__(self, con: apsw.Connection) -> None:
        self.con = con

    def __enter__(self) -> apsw.Connection:
        self.con.execute("BEGIN DEFERRED")
        return self.con

    def __exit__(self, *exc: object) -> None:
        self.con.execute("COMMIT" if exc[0] is None else "ROLLBACK")
