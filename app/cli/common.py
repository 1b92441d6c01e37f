"""What every subcommand shares: the store it opens, JSON vs human output, and error exits.

Exit codes: 0 ok; 1 the command ran but something failed (a skipped thread, a refused merge);
2 bad arguments or a missing id (nothing was written).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import apsw

from app.text import literal
from store import db as chat_db
from store.config import Config, load_config
from store.errors import DuplicateMemoryError, InvalidInputError, NotFoundError, StoreError
from store.locations import config_path, default_db_path

if TYPE_CHECKING:
    from store.store import Store

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """Bad arguments found after parsing (exit 2, nothing written)."""


class Context:
    """Built once per command from the parsed arguments; opens the store lazily."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.json: bool = bool(getattr(args, "json", False))
        self.db_path = Path(args.db).expanduser() if getattr(args, "db", None) else default_db_path()
        cfg = Path(args.config).expanduser() if getattr(args, "config", None) else config_path()
        self.config: Config = load_config(cfg)
        self._store: Store | None = None

    @property
    def store(self) -> Store:
        if self._store is None:
            from store.store import Store  # numpy, vectors, the embedder: only once a store is needed

            self._store = Store(self.db_path, config=self.config)
        return self._store

    def check_database(self) -> None:
        """Open, check and migrate chat.db without building a Store (no numpy, no tokenizer, no model):
        a file that is not a memapp database, or has a newer schema, raises a StoreError here."""
        chat_db.connect(self.db_path).close()

    def close(self) -> None:
        if self._store is not None:
            self._store.close()

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
        ctx = Context(args)
        code = handler(ctx)
        return EXIT_OK if code is None else code
    except (UsageError, InvalidInputError, NotFoundError) as exc:
        fail(str(exc))
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
    except KeyboardInterrupt:
        fail("interrupted")
        return 130
    except BrokenPipeError:
        return EXIT_OK
    finally:
        if ctx is not None:
            ctx.close()


def one_line(text: str, width: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


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
