"""What every subcommand shares: the store it opens, JSON vs human output, and error exits.

Exit codes: 0 ok; 1 the command ran but something failed (a skipped thread, a refused merge);
2 bad arguments, a missing id, or no passphrase that opens an encrypted chat.db (nothing was written).
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import io
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import apsw

from app.text import literal
from store import (
    Config,
    DuplicateMemoryError,
    EncryptionKeyError,
    InvalidInputError,
    NotFoundError,
    StoreError,
    config_path,
    default_db_path,
    load_config,
)
from store import db as chat_db

if TYPE_CHECKING:
    from store import Store

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
JSON_HELP = "print the result as JSON (for scripts) instead of text"


class UsageError(Exception):
    """Bad arguments found after parsing (exit 2, nothing written)."""


class Context:
    """Built once per command from the parsed arguments; opens the store lazily."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.json: bool = bool(getattr(args, "json", False))
        db, cfg_arg = getattr(args, "db", None), getattr(args, "config", None)
        if db is not None and not db.strip():  # `--db ""` (an unset shell variable) once meant the default
            raise InvalidInputError(
                "--db is empty: give the path of a chat.db, or leave --db out for the default"
            )
        self.db_path = Path(db).expanduser() if db else default_db_path()
        if cfg_arg is not None:
            cfg = Path(cfg_arg).expanduser()
            if not cfg.is_file():  # a typo here used to run on the defaults without a word
                raise InvalidInputError(
                    f"--config {cfg}: no such file (leave --config out to use {config_path()})"
                )
        else:
            cfg = config_path()
        self.config: Config = load_config(cfg)
        self._store: Store | None = None

    @property
    def store(self) -> Store:
        if self._store is None:
            from store import Store  # numpy, vectors, the embedder: only once a store is needed

            self._store = Store(self.db_path, config=self.config)
            if str(self.db_path) != ":memory:" and chat_db.is_read_only(self._store.con):
                fail(f"{self.db_path} is read-only: reading works, changes will be refused")
        return self._store

    def require_database(self) -> None:
        """A command that only reads (or changes what is there) refuses a chat.db that does not exist:
        a mistyped --db or MEMAPP_DB must not silently create an empty database and answer "nothing".
        Commands that create one (import, memory add, the TUI) set `creates=True` and skip this."""
        if getattr(self.args, "creates", False) or self.db_path.exists() or self.db_path.is_symlink():
            return  # (a dangling symlink gets the store's own one-line explanation)
        where = (
            "--db" if getattr(self.args, "db", None) else "MEMAPP_DB" if os.environ.get("MEMAPP_DB") else ""
        )
        raise UsageError(
            f"there is no database at {self.db_path}"
            + (f" (from {where}: check the path)" if where else "")
            + ". Create one with `memapp import EXPORT`, `memapp memory add TEXT -c fact`, or by opening "
            "`memapp` (the TUI)"
        )

    def check_database(self) -> None:
        """Open, check and migrate chat.db without building a Store (no numpy, no tokenizer, no model):
        a file that is not a memapp database, or has a newer schema, raises a StoreError here."""
        chat_db.connect(self.db_path).close()

    def close(self) -> None:
        if self._store is not None:
            self._store.close()

    def flush(self) -> None:
        """Write what the store still holds in memory (access counts) without closing it: for a process
        that leaves with os._exit while a worker thread still uses the store (the TUI)."""
        if self._store is not None:
            self._store.access_counts.flush(wait_ms=1000)  # leaving is not held up for long

    def emit(self, data: Any, human: Callable[[], None] | None = None) -> None:
        """Print `data` as JSON with --json, else call the human renderer.

        The human text is shown literally: control characters in stored text (an ANSI escape in an
        imported message) are made visible instead of reaching the terminal, which would obey them.
        """
        if self.json or human is None:
            print(json.dumps(data, ensure_ascii=False, indent=2))
            return
        out, err = io.StringIO(), io.StringIO()
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                human()
        finally:
            sys.stderr.write(literal(err.getvalue()))
            sys.stdout.write(literal(out.getvalue()))


def fail(message: str) -> None:
    print(f"memapp: {literal(message)}", file=sys.stderr)


def run_command(handler: Callable[[Context], int | None], args: argparse.Namespace) -> int:
    ctx: Context | None = None
    try:
        from app.cli.passphrase import install_prompt

        install_prompt()  # an encrypted chat.db asks on a terminal, never without one
        ctx = Context(args)
        ctx.require_database()
        code = handler(ctx)
        return EXIT_OK if code is None else code
    except (UsageError, InvalidInputError, NotFoundError, EncryptionKeyError) as exc:
        fail(str(exc))
        return EXIT_USAGE
    except OverflowError:  # an id or count past SQLite's 64-bit integers: nothing can match it
        fail("a number in the arguments is out of range (ids and counts fit in 64 bits)")
        return EXIT_USAGE
    except StoreError as exc:
        fail(str(exc))
        return EXIT_FAILED
    except apsw.BusyError:  # another process held the write lock past the busy timeout: say so, no traceback
        fail(
            f"{ctx.db_path if ctx else 'chat.db'} stayed locked by another memapp process for more than "
            f"{chat_db.BUSY_TIMEOUT_MS / 1000:g} s; the command stopped (what it had finished is saved): "
            "run it again"
        )
        return EXIT_FAILED
    except apsw.Error as exc:  # storage faults: one line that says what to do, never a traceback
        if _while_interrupted(exc):  # Ctrl-C, then a clean-up write that failed because of it
            fail("interrupted")
            return 130
        fail(storage_error(exc, ctx.db_path if ctx else None))
        return EXIT_FAILED
    except KeyboardInterrupt:
        fail("interrupted")
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except OSError as exc:  # a file written beside chat.db (an export, a backup): one line, no traceback
        fail(file_error(exc))
        return EXIT_FAILED
    finally:
        if ctx is not None:
            ctx.close()


def _while_interrupted(exc: BaseException) -> bool:
    """Whether `exc` was raised while a KeyboardInterrupt was being handled (in its context chain)."""
    cause = exc.__context__
    while cause is not None:
        if isinstance(cause, KeyboardInterrupt):
            return True
        cause = cause.__context__
    return False


_STORAGE_FAULTS = (
    apsw.FullError,
    apsw.ReadOnlyError,
    apsw.CorruptError,
    apsw.NotADBError,
    apsw.CantOpenError,
    apsw.IOError,
)


def storage_error(exc: apsw.Error, db: Path | None) -> str:
    """What a storage fault means for the person at the keyboard. Every write is one transaction, so
    whatever a command had finished is saved and nothing half-written is kept; say so."""
    where = str(db) if db else "chat.db"
    kept = "what had finished is saved, nothing half-written was kept"
    # SQLite rolls a transaction back by itself on SQLITE_FULL; apsw's `with con:` then fails to roll back
    # again ("no transaction is active"), and that second error hides the first one in its context.
    cause: BaseException | None = exc
    while cause is not None and not isinstance(cause, _STORAGE_FAULTS):
        cause = cause.__context__
    if isinstance(cause, apsw.Error):
        exc = cause
    if isinstance(exc, apsw.FullError):
        return f"the disk holding {where} is full; {kept}: free some space and run the command again"
    if isinstance(exc, apsw.ReadOnlyError):
        return f"{where} cannot be written (a read-only file, folder or disk); {kept}"
    if isinstance(exc, apsw.CorruptError | apsw.NotADBError):
        return f"{where} is damaged ({exc}); run `memapp doctor`, or restore a backup"
    if isinstance(exc, apsw.CantOpenError):
        return f"cannot open {where} ({exc}): check that the file and its folder exist and are readable"
    if isinstance(exc, apsw.IOError):
        return f"a disk error while using {where} ({exc}); {kept}"
    return f"SQLite error while using {where}: {exc}"


def file_error(exc: OSError) -> str:
    """A failed file write in words. Files are written whole or not at all (store.files), so nothing
    half-written is left whatever the cause; a full disk says what to do."""
    where = exc.filename or "the output"
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return f"the disk holding {where} is full; nothing half-written was kept: free some space and run it again"
    return f"cannot use {where}: {exc.strerror or exc}"


def check_folder(path: Path, parents: bool) -> None:
    """UsageError when the folder `path` would be written into does not exist and `--parents` was not
    given: a mistyped folder must not be created silently (issue 28, 13: `backup /nonexistent/dir/x`
    made /nonexistent/dir)."""
    folder = path.expanduser().absolute().parent
    if not parents and not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise UsageError(f"{folder} {what}; create it first, or add --parents to create it")


def report_duplicate(ctx: Context, exc: DuplicateMemoryError) -> int:
    """A merge into a pinned or hand-edited memory was refused: say which one, exit 1."""
    if ctx.json:
        ctx.emit({"error": str(exc), "existing_id": exc.existing_id, "similarity": round(exc.similarity, 4)})
    else:
        fail(str(exc))
    return EXIT_FAILED


def int_arg(name: str, lo: int | None = None, hi: int | None = None) -> Callable[[str], int]:
    """An argparse type: a whole number within [lo, hi] (either end open), else exit 2 with one line
    naming the option (`int_arg("--importance", 1, 10)`)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a whole number, got {text!r}") from None
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            if hi is None:
                want = f"{lo} or more"
            elif lo is None:
                want = f"{hi} or less"
            else:
                want = f"{lo}-{hi}"
            raise argparse.ArgumentTypeError(f"{name} must be {want}, got {value}")
        return value

    return parse


importance_arg = int_arg("importance", 1, 10)
