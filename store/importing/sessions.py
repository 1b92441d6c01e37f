"""Coding-agent session logs (Claude Code, Codex CLI) imported incrementally: only what was appended.

    from store.importing.pipeline import import_paths
    import_paths(store, [Path("~/.claude/projects").expanduser()])   # the first run reads everything
    import_paths(store, [...])                                       # later runs read only new lines

Why bookkeeping per file: these logs grow while a session runs, and `memapp hook claude-code` and
`memapp watch` import them after every turn. Each file's size, mtime, the offset read up to and a hash of
its first kilobyte are kept in `import_files` (migration 3). A file whose size and mtime are unchanged is
not opened and nothing is written, so re-running an import over a folder of a thousand sessions costs a
`stat` per file and takes no write lock. A changed file is read from its offset (from the start if it
shrank or its first kilobyte changed: a different file under the same name). The offset is recorded only
after the file's thread is written; a crash in between re-reads those lines next time, and the messages
already stored are recognised by id and skipped (Store.write_thread is idempotent).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from store.importing.formats import ImportProblem, claude_code, codex, session_files, sniff_session
from store.importing.formats._common import Item, title_or_fallback
from store.importing.formats.repair import Repairs
from store.records import ThreadIn, now
from store.store import Store

HEAD_BYTES = 1024
_READERS: dict[str, Callable[[Path, int], tuple[list[Item], int]]] = {
    "claude-code": claude_code.read_session,
    "codex": codex.read_session,
}


@dataclass(frozen=True)
class FileState:
    format: str
    size: int
    mtime_ns: int
    offset: int
    head: str
    thread_id: int | None


@dataclass
class _Read:
    path: str
    fmt: str
    size: int
    mtime_ns: int
    offset: int
    head: str
    thread: tuple[str, str] | None  # (source, external id) of the thread it fed, if any


def head_hash(path: Path, upto: int) -> str:
    """sha1 of the file's first min(upto, HEAD_BYTES) bytes: tells a grown file from a replaced one."""
    with path.open("rb") as fp:
        return hashlib.sha1(fp.read(min(upto, HEAD_BYTES))).hexdigest()


def file_states(store: Store) -> dict[str, FileState]:
    return {
        str(r[0]): FileState(str(r[1]), int(r[2]), int(r[3]), int(r[4]), str(r[5]), r[6])
        for r in store.con.execute(
            "SELECT path, format, size, mtime_ns, offset, head, thread_id FROM import_files"
        )
    }


def is_session_path(path: str | os.PathLike[str], fmt: str = "auto") -> bool:
    """Whether `path` is read as coding-agent sessions (a .jsonl session or a folder of them)."""
    from store.importing.formats import detect_format

    if fmt in _READERS:
        return True
    if fmt != "auto":
        return False
    try:
        return detect_format(path) in _READERS
    except Exception:
        return False


class SessionImport:
    """One import's pass over session files: feeds changed files' new lines to the import run, then
    records how far each was read."""

    def __init__(
        self, store: Store, feed: Callable[[str, list[Item]], None], finish: Callable[[], None]
    ) -> None:
        self.store = store
        self.feed = feed
        self.finish = finish
        self.known = file_states(store)
        self.unchanged = 0
        self.read = 0

    def import_path(self, path: Path, fmt: str) -> None:
        files = session_files(path) if path.is_dir() else [path]
        done: list[_Read] = []
        for f in files:
            r = self._one(f.resolve(), fmt)
            if r is not None:
                done.append(r)
        if done:
            self.finish()  # every thread fed is written before its offset is recorded
            self._record(done)

    def _one(self, f: Path, fmt: str) -> _Read | None:
        key = str(f)
        try:
            st = f.stat()
        except OSError as exc:
            self.feed(key, [ImportProblem(key, None, f"cannot be read ({exc})")])
            return None
        known = self.known.get(key)
        if known is not None and known.size == st.st_size and known.mtime_ns == st.st_mtime_ns:
            self.unchanged += 1
            return None
        kind = known.format if known is not None else (fmt if fmt in _READERS else sniff_session(f))
        if kind is None:
            return None  # not a session log (another .jsonl in the folder): left alone
        try:
            start = 0
            if known is not None and known.offset <= st.st_size and head_hash(f, known.offset) == known.head:
                start = known.offset  # the same file, grown: read on from where the last import stopped
            items, end = _READERS[kind](f, start)
            head = head_hash(f, end)
        except OSError as exc:
            self.feed(key, [ImportProblem(key, None, f"cannot be read ({exc})")])
            return None
        repairs = Repairs()  # lone surrogates -> U+FFFD, as read_export does for every other format
        items = [repairs.item(i) for i in items]
        items.extend(repairs.notes(key))
        self.read += 1
        thread = None
        for t in items:
            if isinstance(t, ThreadIn) and t.external_id:
                thread = (t.source, t.external_id)
                if not t.title and (known is None or known.thread_id is None):
                    t.title = title_or_fallback(None, t.messages)  # the first lines held no message

        self.feed(key, items)
        return _Read(key, kind, st.st_size, st.st_mtime_ns, end, head, thread)

    def _record(self, done: list[_Read]) -> None:
        rows = []
        for r in done:
            thread_id = None
            if r.thread is not None:
                found = self.store.find_thread(*r.thread)
                if found is None:
                    continue  # the thread was not written (reported): read these lines again next time
                thread_id = found.id
            else:
                thread_id = self._thread_of(r.path)
            rows.append((r.path, r.fmt, r.size, r.mtime_ns, r.offset, r.head, thread_id, now()))
        if not rows:
            return
        with self.store.con:
            self.store.con.executemany(
                "INSERT INTO import_files(path, format, size, mtime_ns, offset, head, thread_id, imported_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(path) DO UPDATE SET format = excluded.format, "
                "size = excluded.size, mtime_ns = excluded.mtime_ns, offset = excluded.offset, "
                "head = excluded.head, thread_id = coalesce(excluded.thread_id, import_files.thread_id), "
                "imported_at = excluded.imported_at",
                rows,
            )
        for path, fmt, size, mtime_ns, offset, head, thread_id, _ in rows:
            self.known[path] = FileState(fmt, size, mtime_ns, offset, head, thread_id)

    def _thread_of(self, path: str) -> int | None:
        row = self.store.con.execute("SELECT thread_id FROM import_files WHERE path = ?", (path,)).fetchone()
        return None if row is None or row[0] is None else int(row[0])
