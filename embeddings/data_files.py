"""Where the files memapp ships (tokenizer BPE file, demo data) are found.

In a checkout (and an editable install) they are in the repo's `data/`; a regular `pip install .`
puts them in `<prefix>/share/memapp/`. `MEMAPP_DATA_DIR` overrides both.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def data_dirs() -> list[Path]:
    dirs: list[Path] = []
    if env := os.environ.get("MEMAPP_DATA_DIR"):
        dirs.append(Path(env))
    dirs.append(Path(__file__).resolve().parent.parent / "data")
    dirs.append(Path(sys.prefix) / "share" / "memapp")
    return dirs


def data_file(name: str) -> Path | None:
    """The first existing `name` among the data directories, or None."""
    for d in data_dirs():
        p = d / name
        if p.is_file():
            return p
    return None
