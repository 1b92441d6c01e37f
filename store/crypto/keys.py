"""The key of an encrypted chat.db: where its passphrase comes from, and the key derived from it.

How the file is encrypted (SQLite3 Multiple Ciphers, its default cipher ChaCha20-Poly1305): the first 16
bytes of the file are a random salt where a plain file says "SQLite format 3"; bytes 16-23 stay plain (page
size, reserved bytes); every page after that is encrypted and authenticated, in the WAL and the journal too.
The page key is PBKDF2-HMAC-SHA256(passphrase, salt, 64,007 iterations), exactly what sqlite3mc derives from
`PRAGMA key = 'passphrase'`: a memapp chat.db (and its backups) opens in any sqlite3mc tool with the
passphrase alone, so the data never depends on memapp to be read.

Why memapp derives the key itself and hands SQLite the raw key: sqlite3mc runs its key derivation on every
connection open (~26-31 ms of CPU), and memapp opens one connection per thread (TUI workers, the MCP
server's calls). Here it runs once per process per database; every connection then gets the derived key as
a raw key (`x'…'`), which sqlite3mc uses as it is (about 0.2 ms an open; docs/benchmarks/encryption.md).

Where the passphrase comes from, in this order; the first one that opens the file is kept:
1. this process already unlocked a file with the same salt (the same database, or a backup of it), or holds a
   passphrase that also opens this one;
2. `MEMAPP_PASSPHRASE_COMMAND` (e.g. `pass show memapp`): the first line it prints. The MCP server and the
   hooks have no terminal to ask on. A command that fails is an error, not a reason to look elsewhere;
3. the OS keyring (`keyring`), service "memapp", entry "chat.db <salt in hex>" (`memapp key remember`): the
   salt names the database, so the entry follows the file when it moves and also opens its backups;
4. the prompt the application registered (`set_prompt`: the CLI's getpass, on a terminal only). The TUI asks
   on its unlock screen and calls `unlock` before anything opens the file.
The passphrase is never read from a command line, a config file or an environment value, and never goes to a
log, an error message or a file memapp writes (the keyring is the OS's store, not ours).
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import apsw

from store.errors import EncryptionKeyError, StoreError

log = logging.getLogger(__name__)

MAGIC = b"SQLite format 3\x00"
SALT_BYTES = 16
KEY_BYTES = 32
KDF_ITERATIONS = 64_007  # sqlite3mc's own default for chacha20, so `PRAGMA key` with the passphrase agrees
CIPHER = "chacha20"
PASSPHRASE_COMMAND = "MEMAPP_PASSPHRASE_COMMAND"
KEYRING_SERVICE = "memapp"
COMMAND_TIMEOUT_S = 120  # a password manager may wait for its own agent's pinentry
PROMPT_ATTEMPTS = 3
ENCRYPTED_CACHE_KIB = 64 * 1024  # SQLite's page cache per connection of an encrypted file (default 2 MiB)
# Bytes 21-23 of every SQLite file (payload fractions 64/32/32), which sqlite3mc leaves in the clear: with a
# header that is not "SQLite format 3" they say "an encrypted SQLite file", not some other file.
_FRACTIONS = b"\x40\x20\x20"

Prompt = Callable[[Path, int], "str | None"]
"""(the database, attempt number from 1) -> a passphrase, or None when the person gave up."""


@dataclass(frozen=True)
class Unlocked:
    """A database this process can open: its derived key, the passphrase, and where that came from."""

    key: bytes
    passphrase: str
    source: str


_lock = threading.RLock()  # one resolution at a time: a prompt must not be shown twice at once
_keying = threading.local()


class _QuietWhileKeying(logging.Filter):
    """SQLite's log (routed to `memapp.sqlite` by store.db) names a failing statement's SQL: while a key is
    set or tried, nothing of it is logged (a wrong key's expected "file is not a database" is no news, and a
    statement that carries a key must never reach a log, whatever happens)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not getattr(_keying, "on", False) and "PRAGMA key" not in record.getMessage()


logging.getLogger("memapp.sqlite").addFilter(_QuietWhileKeying())
_unlocked: dict[bytes, Unlocked] = {}
_prompt: Prompt | None = None


def supported() -> bool:
    """Whether this SQLite can encrypt: apsw-sqlite3mc is installed (not the plain `apsw`)."""
    return hasattr(apsw, "mc_version")


def require_support(path: Path | str) -> None:
    if not supported():
        raise StoreError(
            f"{path}: this memapp's SQLite has no encryption (the `apsw` package is installed in place of "
            "`apsw-sqlite3mc`): run `pip uninstall -y apsw apsw-sqlite3mc && pip install apsw-sqlite3mc`"
        )


# -- the file --------------------------------------------------------------------------------------------


def _ro_uri(path: Path | str) -> str:
    return f"file:{urllib.parse.quote(str(Path(path).resolve()))}?mode=ro&immutable=1"


def read_head(con: apsw.Connection) -> bytes:
    """The first 24 bytes of `con`'s database file as they are on disk (b"" for an empty file), read through
    SQLite's own file handle. Why never Python's open(): closing any descriptor of a file drops every POSIX
    lock this process holds on it, those of its other SQLite connections included (SQLite's "how to corrupt
    a database", 2.2); SQLite's VFS shares one lock state per file and defers such closes."""
    try:
        complete, data = con.read("main", 0, 0, 24)
    except apsw.Error:
        return b""
    return bytes(data) if complete else bytes(data).rstrip(b"\0")


def _head(path: Path | str) -> bytes:
    if str(path) == ":memory:" or not Path(path).is_file():
        return b""
    try:
        con = apsw.Connection(_ro_uri(path), flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
    except apsw.Error:
        return b""
    try:
        return read_head(con)
    finally:
        con.close()


def classify(head: bytes) -> str:
    """'none' (an empty file: a database not written yet), 'plain', 'encrypted', or 'other' (not an SQLite
    file at all, which store.db reports in its own words)."""
    if not head:
        return "none"
    if head.startswith(MAGIC) or (len(head) < len(MAGIC) and MAGIC.startswith(head)):
        return "plain"
    if len(head) >= 24 and head[21:24] == _FRACTIONS:
        return "encrypted"
    return "other"


def state(path: Path | str) -> str:
    """classify() of the file at `path` ('none' when it does not exist)."""
    return classify(_head(path))


def is_encrypted(path: Path | str) -> bool:
    return state(path) == "encrypted"


def salt_of(path: Path | str) -> bytes:
    """The salt an encrypted file carries in its first 16 bytes (names the database; not secret)."""
    return _head(path)[:SALT_BYTES]


def derive(passphrase: str, salt: bytes) -> bytes:
    """The page key sqlite3mc would derive from `passphrase` for a file with this salt."""
    return hashlib.pbkdf2_hmac("sha256", passphrase.encode("utf-8"), salt, KDF_ITERATIONS, KEY_BYTES)


def key_pragma(key: bytes) -> str:
    """`PRAGMA key` with a raw key (32 bytes, or 48: key then the salt a new file is to carry). The hex
    form x'…' is what makes sqlite3mc skip its own derivation."""
    return f"PRAGMA key = 'x''{key.hex()}'''"


def key_uri(path: Path, key: bytes | None) -> str:
    """A URI for VACUUM INTO that writes `path` encrypted with `key` (+ salt), or plain when None."""
    quoted = urllib.parse.quote(str(path))
    if key is None:
        return f"file:{quoted}?key="
    return f"file:{quoted}?cipher={CIPHER}&key=" + urllib.parse.quote(f"x'{key.hex()}'")


def opens(path: Path | str, key: bytes) -> bool:
    """Whether `key` opens the encrypted file at `path`. Read-only and immutable: no lock taken, no -shm made,
    nothing written; page 1 (always in the main file) is authenticated by the cipher, so it is proof."""
    con = apsw.Connection(_ro_uri(path), flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
    _keying.on = True
    try:
        con.execute(key_pragma(key))
        con.execute("PRAGMA schema_version").fetchall()
        return True
    except (apsw.NotADBError, apsw.CorruptError):
        return False
    finally:
        _keying.on = False
        con.close()


# -- this process's keys -----------------------------------------------------------------------------------


def set_prompt(prompt: Prompt | None) -> None:
    """How to ask a person for a passphrase when nothing else gives one (None: never ask)."""
    global _prompt
    _prompt = prompt


def forget_process_keys() -> None:
    """Drop every key and passphrase this process holds (tests; after a rekey)."""
    with _lock:
        _unlocked.clear()


def remember_in_process(salt: bytes, passphrase: str, source: str, key: bytes | None = None) -> Unlocked:
    with _lock:
        found = Unlocked(key or derive(passphrase, salt), passphrase, source)
        _unlocked[salt] = found
        return found


def unlocked(path: Path | str) -> Unlocked | None:
    """What this process holds for the encrypted file at `path`, if it was unlocked."""
    with _lock:
        return _unlocked.get(salt_of(path))


def unlock(path: Path | str, passphrase: str, source: str = "prompt") -> bool:
    """Try `passphrase` on the encrypted file at `path`; on success this process keeps its key."""
    salt = salt_of(path)
    key = derive(passphrase, salt)
    if not opens(path, key):
        return False
    remember_in_process(salt, passphrase, source, key)
    return True


def key_for(path: Path | str, *, ask: bool = True, salt: bytes | None = None) -> Unlocked:
    """The key of the encrypted file at `path`, from the sources in the module docstring. Raises
    EncryptionKeyError (one line, no secret in it) when none opens it."""
    require_support(path)
    salt = salt if salt is not None else salt_of(path)
    with _lock:
        if (found := _unlocked.get(salt)) is not None:
            return found
        tried: list[str] = []
        for source, passphrase in _candidates(salt):
            if unlock(path, passphrase, source):
                return _unlocked[salt]
            tried.append(source)
        if ask and _prompt is not None:
            for attempt in range(1, PROMPT_ATTEMPTS + 1):
                typed = _prompt(Path(path), attempt)
                if typed is None:
                    break
                if unlock(path, typed, "prompt"):
                    return _unlocked[salt]
                tried.append("prompt")
        raise EncryptionKeyError(_why(path, tried))


def unattended(path: Path | str) -> bool:
    """Whether the encrypted file at `path` opens without asking anyone (already unlocked, the command, or
    the keyring): the TUI shows its unlock screen when not."""
    try:
        key_for(path, ask=False)
        return True
    except EncryptionKeyError:
        return False


def apply(con: apsw.Connection, path: Path | str) -> None:
    """Key a connection just opened on `path` (store.db.connect), before anything reads the file; nothing
    for a plain or new file. SQLite's temporary tables and sort files stay in memory: sqlite3mc encrypts
    the database, WAL and journal, and memapp writes no plain temporary file of an encrypted database."""
    head = read_head(con)
    if classify(head) != "encrypted":
        return
    found = key_for(path, salt=head[:SALT_BYTES])
    _keying.on = True
    try:
        con.execute(key_pragma(found.key))
    finally:
        _keying.on = False
    con.execute("PRAGMA temp_store = MEMORY")
    # Every page read from the file is decrypted (and authenticated) on its way into SQLite's page cache: a
    # bigger cache keeps a long-lived connection's pages decrypted, where a plain file's are one memcpy
    # away in the OS cache (a search's vector scan re-read its pages each time: 1.17-1.4x the plain search's
    # CPU with SQLite's 2 MB default, docs/benchmarks/encryption.md). Memory is only taken as pages are read.
    con.execute(f"PRAGMA cache_size = -{ENCRYPTED_CACHE_KIB}")


def export_passphrase(db_path: Path | str, export: Path) -> str:
    """The passphrase to open an age-encrypted export with: the encrypted chat.db's own, else (restoring into
    a plain or new database) MEMAPP_PASSPHRASE_COMMAND's, else the prompt's (asked once, about the export)."""
    if is_encrypted(db_path):
        return key_for(db_path).passphrase
    command = os.environ.get(PASSPHRASE_COMMAND, "").strip()
    if command:
        return run_passphrase_command(command)
    typed = _prompt(export, 1) if _prompt is not None else None
    if not typed:
        raise EncryptionKeyError(
            f"{export} is age-encrypted: run this in a terminal to type its passphrase, or set {PASSPHRASE_COMMAND}"
        )
    return typed


def _why(path: Path | str, tried: list[str]) -> str:
    if not tried:
        return (
            f"{path} is encrypted and no passphrase was found: run memapp in a terminal to be asked, store "
            f"it in the keyring (`memapp key remember`), or set {PASSPHRASE_COMMAND} (e.g. `pass show memapp`)"
        )
    said = ", ".join(dict.fromkeys(tried))
    return f"{path} is encrypted and the passphrase does not open it (tried: {said}); nothing was changed"


def _candidates(salt: bytes) -> Iterator[tuple[str, str]]:
    """(source, passphrase) to try, in order; each source is asked only when the ones before failed."""
    with _lock:
        held = list(dict.fromkeys(u.passphrase for u in _unlocked.values()))
    for passphrase in held:
        yield "this process", passphrase
    command = os.environ.get(PASSPHRASE_COMMAND, "").strip()
    if command:
        yield PASSPHRASE_COMMAND, run_passphrase_command(command)
    found = keyring_get(salt)
    if found:
        yield "the keyring", found


def run_passphrase_command(command: str) -> str:
    """The first line `command` prints (run without a shell, stdin closed). Its output and its error text are
    never shown: they may hold the passphrase."""
    import shlex
    import subprocess  # here: opening a plain chat.db never pays for these imports

    try:
        argv = shlex.split(command)
    except ValueError:
        argv = []
    if not argv:
        raise EncryptionKeyError(f"{PASSPHRASE_COMMAND} is not a command line memapp can run")
    name = os.path.basename(argv[0])
    try:
        done = subprocess.run(
            argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=COMMAND_TIMEOUT_S, check=False
        )
    except FileNotFoundError:
        raise EncryptionKeyError(f"{PASSPHRASE_COMMAND}: {name} was not found") from None
    except subprocess.TimeoutExpired:
        raise EncryptionKeyError(
            f"{PASSPHRASE_COMMAND} ({name}) gave no answer in {COMMAND_TIMEOUT_S} s"
        ) from None
    except OSError as exc:
        raise EncryptionKeyError(f"{PASSPHRASE_COMMAND} ({name}) could not run: {exc.strerror}") from None
    if done.returncode != 0:
        raise EncryptionKeyError(
            f"{PASSPHRASE_COMMAND} ({name}) failed with exit status {done.returncode}; run it yourself to see why"
        )
    try:
        lines = done.stdout.decode("utf-8").splitlines()
    except UnicodeDecodeError:
        raise EncryptionKeyError(
            f"{PASSPHRASE_COMMAND} ({name}) printed something that is not UTF-8"
        ) from None
    if not lines or not lines[0]:
        raise EncryptionKeyError(f"{PASSPHRASE_COMMAND} ({name}) printed no passphrase")
    return lines[0]


# -- the OS keyring ----------------------------------------------------------------------------------------


def keyring_entry(salt: bytes) -> str:
    return f"chat.db {salt.hex()}"


def _keyring() -> Any:
    """The `keyring` module, imported on first use (its backends cost ~0.3 s to find)."""
    import keyring

    return keyring


def keyring_get(salt: bytes) -> str | None:
    """The passphrase stored for this database, or None (no entry, or no usable keyring here: a headless
    machine has none, and that is not an error)."""
    try:
        found = _keyring().get_password(KEYRING_SERVICE, keyring_entry(salt))
    except Exception as exc:  # noqa: BLE001 - any backend failure means "not from the keyring"
        log.info("the OS keyring is not available (%s)", type(exc).__name__)
        return None
    return found if isinstance(found, str) and found else None


def keyring_set(salt: bytes, passphrase: str) -> None:
    try:
        _keyring().set_password(KEYRING_SERVICE, keyring_entry(salt), passphrase)
    except Exception as exc:  # noqa: BLE001 - reported in one line
        raise StoreError(
            f"the OS keyring could not store the passphrase ({type(exc).__name__}); use "
            f"{PASSPHRASE_COMMAND} or the prompt instead"
        ) from None


def keyring_delete(salt: bytes) -> bool:
    """Remove this database's entry; False when there was none (or no keyring)."""
    try:
        _keyring().delete_password(KEYRING_SERVICE, keyring_entry(salt))
        return True
    except Exception:  # noqa: BLE001 - PasswordDeleteError (none stored) or no keyring at all
        return False
