"""Files memapp writes beside chat.db: exports, Markdown folders, backups.

Why a module of its own: the same three promises hold for every file we write, and each was broken once.
- Private: they hold the user's conversations, so files are 0600 and folders we create 0700, whatever the
  umask (a Markdown export came out 0644/0755).
- Whole or absent: the bytes go to a temporary file in the destination's folder, are fsync'ed, and only
  then take the final name with an atomic rename. A kill, Ctrl-C or a full disk leaves the previous file
  (or nothing) under that name, never a truncated one (an interrupted export once left a 251 MB previous
  export at 0 bytes; an interrupted backup left a file memapp later opened as a valid empty database).
- Nothing left behind: a temporary file carries its writer's pid in its name, and the next write into the
  same folder removes those whose writer is gone (a SIGKILL gives a process no chance to clean up; a
  killed 250 MB export would otherwise stay there, hidden, for good).
- Never over the database: an output path that is chat.db itself or one of its -wal/-shm/-journal
  sidecars is refused before anything is opened (writing an export there destroyed both).
- A folder written whole (the Markdown export) is built in a temporary folder beside it and swapped in,
  so a kill leaves the previous folder or the new one, and nothing of an earlier export lingers.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from store.errors import StoreError

SIDECARS = ("", "-wal", "-shm", "-journal")
PARTIAL_PREFIX = ".memapp-partial-"


def refuse_database_paths(out: Path, db_path: Path | str) -> None:
    """StoreError if `out` is the database `db_path` or one of its sidecar files."""
    if str(db_path) == ":memory:":
        return
    db = Path(db_path).expanduser().resolve()
    target = out.expanduser().resolve()
    for suffix in SIDECARS:
        if target == db.with_name(db.name + suffix):
            raise StoreError(f"{out} is the database memapp has open ({db}); choose another output path")


def private_dir(path: Path) -> None:
    """mkdir -p where every folder created here is 0700 (existing ones are left as they are)."""
    missing = []
    p = path
    while not p.exists():
        missing.append(p)
        p = p.parent
    for d in reversed(missing):
        with contextlib.suppress(FileExistsError):
            d.mkdir(mode=0o700)
        os.chmod(d, 0o700)  # mkdir's mode is filtered by the umask


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):  # not every filesystem lets a folder be opened or synced
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _writer_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


def sweep_partials(folder: Path) -> list[Path]:
    """Remove the temporary files and folders in `folder` whose writing process has ended (killed before
    it could remove them); returns what was removed. Nothing of a live writer is ever touched."""
    removed = []
    with contextlib.suppress(OSError):
        for path in folder.glob(PARTIAL_PREFIX + "*"):  # the file, and a backup's -journal beside it
            pid_text = path.name[len(PARTIAL_PREFIX) :].split("-", 1)[0]
            if pid_text.isdigit() and not _writer_alive(int(pid_text)):
                with contextlib.suppress(FileNotFoundError):
                    if path.is_dir() and not path.is_symlink():
                        shutil.rmtree(path)
                    else:
                        path.unlink()
                    removed.append(path)
    return removed


@contextlib.contextmanager
def partial_file(dest: Path, *, binary: bool = False) -> Iterator[tuple[Path, IO[Any]]]:
    """A private temporary file next to `dest`, open for writing; the caller moves it into place with
    `commit_partial` (or `atomic_write` does both). Removed again if the block raises."""
    private_dir(dest.parent)
    sweep_partials(dest.parent)
    fd, tmp = tempfile.mkstemp(prefix=f"{PARTIAL_PREFIX}{os.getpid()}-", suffix=".tmp", dir=dest.parent)
    os.fchmod(fd, 0o600)
    tmp_path = Path(tmp)
    try:
        fh: IO[Any] = os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8")
        with fh:
            yield tmp_path, fh
            fh.flush()
            os.fsync(fh.fileno())
    except OSError as exc:
        tmp_path.unlink(missing_ok=True)
        raise _named(exc, dest, tmp_path) from exc
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise


def _named(exc: OSError, dest: Path, tmp: Path) -> OSError:
    """`exc` about `dest`, not the hidden temporary file (or no file at all, as a failed write says):
    the one line the user reads names what they asked to write."""
    name = exc.filename
    if name is None or str(name).startswith(str(tmp)):
        return OSError(exc.errno, exc.strerror or str(exc), str(dest))
    return exc


def commit_partial(tmp: Path, dest: Path, *, replace: bool = True) -> None:
    """Give the finished temporary file its final name (atomically); `replace=False` refuses to replace
    an existing file (link, then unlink: no window where a second writer's file is overwritten)."""
    try:
        if replace:
            os.replace(tmp, dest)
        else:
            try:
                os.link(tmp, dest)
            except FileExistsError:
                raise StoreError(f"{dest} already exists; choose a new file name") from None
            tmp.unlink()
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(dest.parent)


@contextlib.contextmanager
def atomic_write(dest: Path, *, binary: bool = False) -> Iterator[IO[Any]]:
    """Write `dest` whole or not at all: `with atomic_write(p) as fh: fh.write(...)`."""
    with partial_file(dest, binary=binary) as (tmp, fh):
        yield fh
    commit_partial(tmp, dest)


# -- whole folders (the Markdown export) -----------------------------------------------------------------


@contextlib.contextmanager
def partial_dir(dest: Path) -> Iterator[Path]:
    """A private temporary folder beside `dest` to build a whole folder in; `swap_in` then puts it in
    place of `dest`. Removed again if the block raises (a kill leaves it to `sweep_partials`)."""
    sweep_partials(dest.parent)
    tmp = Path(tempfile.mkdtemp(prefix=f"{PARTIAL_PREFIX}{os.getpid()}-", suffix=".dir", dir=dest.parent))
    os.chmod(tmp, 0o700)
    try:
        yield tmp
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise _named(exc, dest, tmp) from exc
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one atomic step (Linux renameat2 RENAME_EXCHANGE, macOS renamex_np RENAME_SWAP);
    False where the system or the filesystem cannot."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if sys.platform == "darwin":
            return int(libc.renamex_np(os.fsencode(a), os.fsencode(b), 2)) == 0
        at_fdcwd, rename_exchange = -100, 2
        return int(libc.renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange)) == 0
    except (OSError, AttributeError):  # no such function in this C library
        return False


def swap_in(tmp: Path, dest: Path) -> None:
    """Put the finished folder `tmp` where `dest` is, replacing what was there: atomically where the
    system can exchange two paths, so a kill leaves the old folder or the new one, never a mix or a
    partial one (an interrupted Markdown export left a partial folder, and re-exporting kept files of
    threads deleted since). The old folder is removed afterwards."""
    for d in (*tmp.rglob("*"), tmp):  # the files are synced as written; their folders' entries here
        if d.is_dir():
            _fsync_dir(d)
    if not dest.exists():
        os.rename(tmp, dest)
    elif _exchange(tmp, dest):
        shutil.rmtree(tmp, ignore_errors=True)  # now the old folder, under the partial name
    else:
        old = dest.with_name(f"{PARTIAL_PREFIX}{os.getpid()}-{dest.name}.old")
        os.rename(dest, old)
        os.rename(tmp, dest)
        shutil.rmtree(old, ignore_errors=True)
    _fsync_dir(dest.parent)


def write_private(path: Path, text: str) -> None:
    """A new 0600 file with `text` (inside a partial folder: the folder is what is swapped in whole)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())


def replaceable(folder: Path, names: set[str], suffix: str) -> str | None:
    """None when `folder` may be replaced whole: missing, empty, or holding only what an earlier export
    wrote (`names` at its top, files ending in `suffix` below them); else a name found there that
    is not ours (a folder of the user's own files must never be replaced)."""
    if not folder.exists():
        return None
    for path in folder.iterdir():
        if path.name.startswith(PARTIAL_PREFIX):
            continue
        if path.name not in names:
            return path.name
        if path.is_dir():
            stray = next(
                (
                    p
                    for p in path.rglob("*")
                    if not p.name.endswith(suffix) and not p.name.startswith(PARTIAL_PREFIX)
                ),
                None,
            )
            if stray is not None:
                return str(stray.relative_to(folder))
    return None
