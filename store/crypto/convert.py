"""Create an encrypted chat.db, and encrypt, decrypt or rekey one: always through a copy, never in place.

Why a copy: sqlite3mc's in-place `PRAGMA rekey` refuses a database in WAL mode and rewrites every page of the
live file. Here the new database is written by VACUUM INTO (with the new key and salt, or plain) to a private
temporary file beside chat.db, synced, checked (SQLite's quick_check, and every table's row count against the
original), and only then renamed over chat.db in one atomic step. A kill before the rename leaves the old
database whole (the temporary file is removed by the next write into that folder, store.files.sweep_partials);
a kill after it leaves the new one. Never neither (tests/reliability/test_crash_crypt.py).

Nobody else may have chat.db open meanwhile. The old file is first taken out of WAL mode, which SQLite grants
only to its last connection, so a TUI or an MCP server still running is named instead of writing on into a
file that is about to be replaced; then it is held with an exclusive lock until the new file has its name. A
process that opened the old file during the copy and waits for that lock then finds page 1 zeroed ("not a
database") rather than a database that silently takes writes nobody will see again.

`encrypt` overwrites the whole old plain file with zeros before letting it go, and its WAL was checkpointed and
truncated first. That is best effort: copy-on-write file systems and SSDs may keep old blocks, which
docs/guide/privacy.md says (encrypt from the start with `memapp init --encrypt`).
"""

from __future__ import annotations

import contextlib
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

import apsw

from store.crypto import keys
from store.errors import EncryptionKeyError, StoreError
from store.files import commit_partial, partial_file, private_dir

LOCK_WAIT_MS = 2_000  # how long to wait for another process's transaction before saying chat.db is in use
ZERO_CHUNK = 1 << 20


@dataclass(frozen=True)
class Converted:
    """What encrypt/decrypt/rekey did: the state before and after, and what was checked in the copy."""

    path: Path
    before: str
    after: str
    tables: int
    rows: int
    bytes: int


def new_salt() -> bytes:
    return secrets.token_bytes(keys.SALT_BYTES)


def create_encrypted(path: Path, passphrase: str) -> None:
    """A new, empty encrypted chat.db at `path` (0600, folders 0700); store.db.connect then migrates it like
    any new file. The key is kept for this process."""
    keys.require_support(path)
    path = Path(path)
    if path.exists() and path.stat().st_size > 0:
        raise StoreError(f"{path} already exists; `memapp encrypt` encrypts an existing chat.db")
    private_dir(path.parent)
    salt = new_salt()
    key = keys.derive(passphrase, salt)
    fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o600)
    os.close(fd)
    os.chmod(path, 0o600)
    con = apsw.Connection(str(path))
    try:
        con.execute(keys.key_pragma(key + salt))  # key then salt: the new file carries this salt
        con.execute("PRAGMA user_version = 0")  # writes page 1, encrypted, with the salt in front
    finally:
        con.close()
    if keys.salt_of(path) != salt:
        raise StoreError(f"{path} was not written with the expected salt; it was not used")
    keys.remember_in_process(salt, passphrase, "new", key)


def encrypt(path: Path, passphrase: str) -> Converted:
    """Plain chat.db -> encrypted with `passphrase` (a new random salt)."""
    path = Path(path)
    keys.require_support(path)
    _expect(path, "plain", "is already encrypted (use `memapp rekey` to change its passphrase)")
    salt = new_salt()
    key = keys.derive(passphrase, salt)
    done = _convert(path, source_key=None, target=key + salt, zero_old=True)
    keys.remember_in_process(salt, passphrase, "new", key)
    return done


def decrypt(path: Path) -> Converted:
    """Encrypted chat.db -> plain (the key from the usual sources: keys.key_for)."""
    path = Path(path)
    _expect(path, "encrypted", "is not encrypted")
    found = keys.key_for(path)
    return _convert(path, source_key=found.key, target=None, zero_old=False)


def rekey(path: Path, passphrase: str) -> Converted:
    """Encrypted chat.db -> encrypted with a new passphrase and a new salt."""
    path = Path(path)
    _expect(path, "encrypted", "is not encrypted (use `memapp encrypt`)")
    found = keys.key_for(path)
    salt = new_salt()
    key = keys.derive(passphrase, salt)
    done = _convert(path, source_key=found.key, target=key + salt, zero_old=False)
    keys.remember_in_process(salt, passphrase, "new", key)
    return done


def _expect(path: Path, want: str, otherwise: str) -> None:
    if not path.is_file():
        raise StoreError(f"there is no database at {path}")
    got = keys.state(path)
    if got == "other":
        raise StoreError(f"{path} is not a memapp database; it was left untouched")
    if got != want:
        raise StoreError(f"{path} {otherwise}")


# -- the copy ----------------------------------------------------------------------------------------------


def _convert(path: Path, *, source_key: bytes | None, target: bytes | None, zero_old: bool) -> Converted:
    before = "encrypted" if source_key is not None else "plain"
    con = _hold_alone(path, source_key)
    try:
        counts = _counts(con)
        old_fd = os.open(path, os.O_WRONLY)  # the old file's inode, to zero once it has lost its name
        try:
            with partial_file(path, binary=True) as (tmp, _fh):  # 0600, synced when the block ends
                try:
                    con.execute("VACUUM INTO ?", (keys.key_uri(tmp, target),))
                except apsw.Error as exc:  # the text may name the URI, which holds the key: not shown
                    raise StoreError(
                        f"could not write the new copy of {path} ({type(exc).__name__}); nothing was changed"
                    ) from None
            _check_copy(tmp, target, counts, path)
            commit_partial(tmp, path)
            _zero(old_fd, whole=zero_old)
        finally:
            os.close(old_fd)  # drops this process's locks on the old inode: after it was zeroed
    finally:
        con.close()
    return Converted(
        path,
        before,
        "encrypted" if target is not None else "plain",
        len(counts),
        sum(counts.values()),
        path.stat().st_size,
    )


def _hold_alone(path: Path, key: bytes | None) -> apsw.Connection:
    """A connection to `path` that is its only user until closed: out of WAL (checkpointed into the main
    file), then an exclusive lock held (locking_mode EXCLUSIVE keeps it after the transaction)."""
    con = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_URI)
    try:
        if key is not None:
            con.execute(keys.key_pragma(key))
        con.set_busy_timeout(LOCK_WAIT_MS)
        try:
            con.execute("PRAGMA schema_version").fetchall()
        except (apsw.NotADBError, apsw.CorruptError):
            if key is not None:
                raise EncryptionKeyError(
                    f"the passphrase does not open {path}; nothing was changed"
                ) from None
            raise StoreError(
                f"{path} is not a memapp database (or it is corrupt); it was left untouched"
            ) from None
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        mode = str(con.execute("PRAGMA journal_mode = DELETE").fetchall()[0][0]).lower()
        if mode != "delete":
            raise apsw.BusyError("still in WAL mode")
        con.execute("PRAGMA locking_mode = EXCLUSIVE").fetchall()
        con.execute("BEGIN EXCLUSIVE")
        con.execute("COMMIT")
        return con
    except apsw.BusyError:
        con.close()
        raise StoreError(
            f"{path} is open in another memapp (the TUI, the MCP server, a hook or a command still running): "
            "close it and run this again; nothing was changed"
        ) from None
    except BaseException:
        con.close()
        raise


def _tables(con: apsw.Connection) -> list[str]:
    return [
        str(r[0])
        for r in con.execute(
            "SELECT name FROM sqlite_schema WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%' "
            "AND name NOT LIKE 'sqlite_%' ORDER BY name"
        )
    ]


def _counts(con: apsw.Connection) -> dict[str, int]:
    """Rows of every ordinary table (the shadow tables of FTS5 and vec0 included): what the copy must hold."""
    return {t: _int(con.execute(f'SELECT count(*) FROM "{t}"').fetchall()[0][0]) for t in _tables(con)}


def _int(value: object) -> int:
    return value if isinstance(value, int) else -1


def _check_copy(tmp: Path, target: bytes | None, counts: dict[str, int], path: Path) -> None:
    """The copy is whole before it may take chat.db's name: it opens with the new key (and only with it:
    plain when decrypting), passes quick_check, and has every table with the same number of rows."""
    want = "encrypted" if target is not None else "plain"
    con = apsw.Connection(str(tmp), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        got = keys.classify(keys.read_head(con))
        if target is not None:
            con.execute(keys.key_pragma(target[: keys.KEY_BYTES]))
        ok = got == want and str(con.execute("PRAGMA quick_check").fetchall()[0][0]) == "ok"
        copied = _counts(con) if ok else {}
    except apsw.Error:
        ok, copied = False, {}
    finally:
        con.close()
    if not ok or copied != counts:
        tmp.unlink(missing_ok=True)
        raise StoreError(f"the new copy of {path} did not check out; {path} was left as it was")


def _zero(fd: int, *, whole: bool) -> None:
    """Overwrite the old file (now nameless): page 1 always (a waiting process must see "not a database"),
    everything when it held plain text."""
    size = os.fstat(fd).st_size
    end = size if whole else min(size, 65536)
    chunk = bytes(min(ZERO_CHUNK, max(end, 1)))
    with contextlib.suppress(OSError):  # best effort: the new file already has the name
        pos = 0
        while pos < end:
            pos += os.pwrite(fd, chunk[: end - pos], pos)
        os.fsync(fd)
