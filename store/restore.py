"""`memapp restore BACKUP`: put a backup back into the live chat.db, even while other memapp processes
have it open.

Why not "copy the backup over chat.db": a file replaced under running processes is destroyed for them
(an acknowledged add, then CorruptError, then "database disk image is malformed" for good, issue 31, 3):
they keep their -wal and -shm, which no longer match the file. Here the backup is written *into* the
live database through SQLite's backup API, as one write transaction: other processes see the restored
rows the way they see any commit, and a kill in the middle leaves the database as it was (the
transaction never committed).

In order, each step refusing with one line and nothing changed:
1. the backup is checked: an SQLite file that passes `PRAGMA integrity_check`, a memapp database
   (its bookkeeping table), of a schema this memapp knows, with the live database's page size (SQLite
   cannot copy pages of another size into a database in WAL mode);
2. the live database as it is now is kept beside it (`chat.db.before-restore-<time>.db`, a
   `memapp backup`), so a restore can itself be undone;
3. this process's write lock, then SQLite's, are taken (a writer in another process is waited for, up
   to the busy timeout), and the pages are copied in one step;
4. an older backup is migrated to the current schema, and every process's in-memory copies of the
   vectors are told to reload (the vector generation moves past both the old and the restored value).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import time
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

import apsw

from store import migrations
from store.errors import StoreError
from store.store import Store
from store.vectors.codes import GENERATION_KEY


@dataclass(frozen=True)
class Restored:
    backup: Path
    previous: Path | None  # where the live database was kept before the restore (None: it was empty)
    schema_version: int  # of the backup, before any migration
    memories: int
    threads: int


def _open_backup(path: Path) -> apsw.Connection:
    """The backup, read-only (never changed, not even switched to WAL)."""
    uri = f"file:{urllib.parse.quote(str(path.resolve()))}?mode=ro"
    try:
        return apsw.Connection(uri, flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
    except apsw.Error as exc:
        raise StoreError(f"cannot open the backup {path}: {exc}") from exc


def check_backup(path: Path, *, page_size: int | None = None) -> apsw.Connection:
    """The backup opened read-only once it is known to be a whole memapp database this memapp can use;
    StoreError saying why not otherwise."""
    if not path.is_file():
        raise StoreError(f"{path}: no such file" if not path.exists() else f"{path} is not a file")
    con = _open_backup(path)
    try:
        try:
            problems = [str(r[0]) for r in con.execute("PRAGMA integrity_check")]
        except (apsw.NotADBError, apsw.CorruptError) as exc:
            raise StoreError(
                f"{path} is not a database, or it is damaged ({exc}); nothing was restored"
            ) from exc
        if problems != ["ok"]:
            flat = " ".join("; ".join(problems[:3]).replace("*** in database main ***", "").split())
            raise StoreError(f"{path} is damaged ({flat[:300]}); nothing was restored: choose another backup")
        tables = {str(r[0]) for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "schema_migrations" not in tables:
            raise StoreError(f"{path} is not a memapp database (no memapp tables); nothing was restored")
        version = migrations.current_version(con)
        if version > migrations.LATEST:
            raise StoreError(
                f"{path} has schema version {version}, newer than this memapp knows ({migrations.LATEST}): "
                "upgrade memapp to restore it; nothing was restored"
            )
        size = int(str(con.execute("PRAGMA page_size").fetchall()[0][0]))
        if page_size is not None and size != page_size:
            raise StoreError(
                f"{path} has {size}-byte pages and the live database {page_size}-byte pages; SQLite cannot "
                "restore across page sizes into a database in use. Stop memapp everywhere, then copy it "
                "over chat.db instead; nothing was restored"
            )
        return con
    except BaseException:
        con.close()
        raise


def _keep_current(store: Store) -> Path | None:
    """The live database as it is, saved beside it (None when it holds nothing worth keeping)."""
    from store.maintenance import backup

    if not store.scalar("SELECT (SELECT count(*) FROM threads) + (SELECT count(*) FROM long_term_memories)"):
        return None
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    for n in range(1, 1000):
        dest = store.path.with_name(f"{store.path.name}.before-restore-{stamp}{'' if n == 1 else f'-{n}'}.db")
        if not dest.exists():
            return backup(store, dest)
    raise StoreError(f"too many earlier copies named {store.path.name}.before-restore-{stamp}-*.db")


def _copy_pages(store: Store, source: apsw.Connection, busy_ms: int) -> None:
    """Every page of `source` into the live database in one step (one transaction), with the write
    locks held: this process's first, then SQLite's (retried until `busy_ms` for a writer elsewhere)."""
    con = store.con
    deadline = time.monotonic() + busy_ms / 1000
    with con.locked(), con.backup("main", source, "main") as job:
        while True:
            try:
                if job.step(-1):
                    return
            except (apsw.BusyError, apsw.LockedError):
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.02)


def _after_copy(store: Store) -> None:
    """Bring a restored older schema up to date and make every held vector copy reload."""
    con = store.con
    migrations.migrate(con, str(store.path))
    with con:
        con.execute(
            "INSERT INTO settings(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = "
            "max(CAST(value AS INTEGER), CAST(excluded.value AS INTEGER)) + 1",
            (GENERATION_KEY, str(int(time.time()))),
        )


def restore(store: Store, backup_path: Path, *, busy_ms: int) -> Restored:
    """Restore `backup_path` into `store`'s database (module docstring)."""
    backup_path = backup_path.expanduser()
    if store.con.readonly("main"):
        raise StoreError(
            f"{store.path} cannot be written (a read-only file, folder or disk); nothing was restored"
        )
    if backup_path.resolve() == store.path.resolve():
        raise StoreError(f"{backup_path} is the live database itself; give the backup's path")
    page_size = int(store.scalar("PRAGMA page_size"))
    source = check_backup(backup_path, page_size=page_size)
    try:
        version = migrations.current_version(source)
        previous = _keep_current(store)
        _copy_pages(store, source, busy_ms)
    finally:
        with contextlib.suppress(apsw.Error):
            source.close()
    _after_copy(store)
    return Restored(
        backup=backup_path,
        previous=previous,
        schema_version=version,
        memories=int(store.scalar("SELECT count(*) FROM long_term_memories WHERE deleted_at IS NULL")),
        threads=int(store.scalar("SELECT count(*) FROM threads")),
    )
