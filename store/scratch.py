"""Scratch folders for the few plain files memapp must hand to another program or reader (a memory opened
in $EDITOR, a list of memories piped to `memapp import -`).

Why not tempfile's default: /tmp is usually on disk, shared, and kept across crashes, and the text is the
user's, from a database that may be encrypted. A scratch folder is private (0700, its files 0600), lives in
memory when the system offers a per-user RAM folder ($XDG_RUNTIME_DIR, a tmpfs on systemd systems; else
/dev/shm), and is removed when the block ends, whatever happens inside it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path


def _memory_backed() -> str | None:
    for candidate in (os.environ.get("XDG_RUNTIME_DIR", ""), "/dev/shm"):
        if candidate and os.path.isdir(candidate) and os.access(candidate, os.W_OK | os.X_OK):
            return candidate
    return None


@contextlib.contextmanager
def scratch_dir(prefix: str = "memapp-") -> Iterator[Path]:
    """A new private folder, in memory where possible; removed with everything in it afterwards."""
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir=_memory_backed()))  # mkdtemp makes it 0700
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def write_private(path: Path, data: bytes) -> None:
    """`data` into a new file only its owner can read (0600 whatever the umask)."""
    fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
