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
"""

from __future__ import annotations

import contextlib
import os
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
    """Remove the temporary files in `folder` whose writing process has ended (killed before it could
    remove them); returns what was removed. A file of a live writer is never touched."""
    removed = []
    with contextlib.suppress(OSError):
        for path in folder.glob(PARTIAL_PREFIX + "*"):  # the file, and a backup's -journal beside it
            pid_text = path.name[len(PARTIAL_PREFIX) :].split("-", 1)[0]
            if pid_text.isdigit() and not _writer_alive(int(pid_text)):
                with contextlib.suppress(FileNotFoundError):
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
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise


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
