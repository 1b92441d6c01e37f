"""Shared helpers for the importer tests: fixture paths and splitting a read into its kinds of items.

A plain module with a unique name (not conftest.py): test files import it directly, and tests/ has no
packages, so a second conftest module elsewhere could shadow `import conftest`.
"""

from __future__ import annotations

import zipfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import apsw

from store.importing.formats import ImportProblem, read_export
from store.records import MemoryIn, ThreadIn

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "import"


@dataclass
class Read:
    """Everything one read_export produced, by kind, in order."""

    threads: list[ThreadIn] = field(default_factory=list)
    memories: list[MemoryIn] = field(default_factory=list)
    problems: list[ImportProblem] = field(default_factory=list)
    order: list[str] = field(default_factory=list)

    def thread(self, external_id: str) -> ThreadIn:
        matches = [t for t in self.threads if t.external_id == external_id]
        assert len(matches) == 1, f"{external_id}: {len(matches)} threads"
        return matches[0]


def collect(items: Iterable[object]) -> Read:
    out = Read()
    for item in items:
        if isinstance(item, ThreadIn):
            out.threads.append(item)
            out.order.append(f"thread:{item.external_id}")
        elif isinstance(item, MemoryIn):
            out.memories.append(item)
            out.order.append("memory")
        elif isinstance(item, ImportProblem):
            out.problems.append(item)
            out.order.append(f"problem:{item.conversation}")
        else:  # pragma: no cover - a reader yielded something else
            raise AssertionError(f"unexpected item {item!r}")
    return out


def msgs(thread: ThreadIn) -> list[tuple[str | None, str, str]]:
    """(external_id, role, content) of every message, in order."""
    return [(m.external_id, m.role, m.content) for m in thread.messages]


def read(path: Path | str, fmt: str = "auto") -> Read:
    return collect(read_export(path, fmt))


def make_zip(target: Path, files: dict[str, bytes | Path]) -> Path:
    """A zip holding `files` (name -> bytes, or a path whose bytes are stored under that name)."""
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            zf.writestr(name, data.read_bytes() if isinstance(data, Path) else data)
    return target


def build_llm_db(target: Path, sql: str | None = None, drop: Iterable[str] = ()) -> Path:
    """A logs.db made from the SQL fixture (optionally without some tables)."""
    con = apsw.Connection(str(target))
    con.execute(sql if sql is not None else (FIXTURES / "llm" / "logs.sql").read_text(encoding="utf-8"))
    for table in drop:
        con.execute(f'DROP TABLE "{table}"')
    con.close()
    return target
