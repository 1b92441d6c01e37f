"""Coding-agent session logs (Claude Code, Codex CLI) imported incrementally: only what was appended.

    from store.importing.pipeline import import_paths
    import_paths(store, [Path("~/.claude/projects").expanduser()])   # the first run reads everything
    import_paths(store, [...])                                       # later runs read only new lines

Why bookkeeping per file: these logs grow while a session runs, and `memapp hook claude-code` and
`memapp watch` import them after every turn. Each file's size, mtime, the offset read up to and a hash of
everything before that offset are kept in `import_files` (migration 3; the column is named `head`: it
held a hash of the first kilobyte only, which let a file edited shorter after that kilobyte and grown
again be read from the middle of a line, losing that message for good). A file whose size and mtime are
unchanged is not opened and nothing is written, so re-running an import over a folder of a thousand
sessions costs a `stat` per file and takes no write lock. A changed file is read from its offset when
the bytes before it are still the ones read (checked by the hash, then carried on over the new bytes);
otherwise (it shrank, or was edited or replaced) it is read again from the start, and what is stored
already is recognised: messages by id (Store.write_thread is idempotent), tool calls by their own ids
(a run of calls cut elsewhere than before), and messages without stable ids (Codex keys them by their
byte offset, which an edit shifts) by role, text and time. The offset is recorded only after the file's
thread is written; a crash in between re-reads those lines next time.
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
    read_upto: int  # the furthest byte ever read (the offset, for files read before migration 8)


@dataclass
class _Read:
    path: str
    fmt: str
    size: int
    mtime_ns: int
    offset: int
    head: str
    thread: tuple[str, str] | None  # (source, external id) of the thread it fed, if any
    read_upto: int


def prefix_hash(path: Path, upto: int) -> hashlib._Hash | None:
    """sha1 of the file's first `upto` bytes, read a megabyte at a time (None when it is shorter): tells a
    grown file from one changed before that point. The object can go on over the bytes that follow."""
    h = hashlib.sha1()
    with path.open("rb") as fp:
        left = upto
        while left > 0:
            chunk = fp.read(min(left, 1 << 20))
            if not chunk:
                return None
            h.update(chunk)
            left -= len(chunk)
    return h


def _carry_on(h: hashlib._Hash, path: Path, start: int, end: int) -> str:
    """The hash of the first `end` bytes, given `h` over the first `start`."""
    with path.open("rb") as fp:
        fp.seek(start)
        left = end - start
        while left > 0:
            chunk = fp.read(min(left, 1 << 20))
            if not chunk:
                break
            h.update(chunk)
            left -= len(chunk)
    return h.hexdigest()


def path_key(path: Path) -> str:
    """The file's path as text SQLite can store: a name that is not valid UTF-8 (Python holds its bytes
    as lone surrogates, which SQLite refuses) keeps those bytes as `\\xNN` escapes, so it stays one key."""
    text = str(path)
    if text.isascii():
        return text
    return os.fsencode(path).decode("utf-8", errors="backslashreplace")


def file_states(store: Store) -> dict[str, FileState]:
    return {
        str(r[0]): FileState(str(r[1]), int(r[2]), int(r[3]), int(r[4]), str(r[5]), r[6], int(r[7]))
        for r in store.con.execute(
            "SELECT path, format, size, mtime_ns, offset, head, thread_id, coalesce(read_upto, offset) "
            "FROM import_files"
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
        key = path_key(f)
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
            start, h = 0, None
            if known is not None and known.offset <= st.st_size:
                h = prefix_hash(f, known.offset)
                if h is not None and h.hexdigest() == known.head:
                    start = known.offset  # the same file, grown: read on from where the last import stopped
                else:
                    h = None
            items, end = _READERS[kind](f, start)
            head = _carry_on(h or hashlib.sha1(), f, start if h else 0, end)
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
                if known is not None and start < known.read_upto:  # over bytes imported before
                    self._drop_stored(t)

        self.feed(key, items)
        upto = max(end, known.read_upto) if known is not None else end
        return _Read(key, kind, st.st_size, st.st_mtime_ns, end, head, thread, upto)

    def _drop_stored(self, thread: ThreadIn) -> None:
        """Leave out of `thread`, read over bytes imported before (in other pieces: the file shrank and
        grew back, or was edited), what its stored thread holds already: tool calls by their ids (a run
        that is stored keeps its key only if none of its calls is new), and messages without a stable id
        (Codex keys them by byte offset, which an edit shifts) by role, text and time."""
        stored = self.store.stored_thread(thread)
        if stored.thread is None:
            return
        calls = {
            str(r[0])
            for r in self.store.con.execute(
                "SELECT j.value ->> '$.id' FROM messages m, json_each(m.metadata, '$.tool_calls') j "
                "WHERE m.thread_id = ? AND j.value ->> '$.id' IS NOT NULL",
                (stored.thread.id,),
            )
        }
        said = {
            (str(r[0]), str(r[1]), r[2])
            for r in self.store.con.execute(
                "SELECT role, content, created_at FROM messages WHERE thread_id = ? AND role != 'tool'",
                (stored.thread.id,),
            )
        }
        kept = []
        for m in thread.messages:
            if m.external_id in stored.external_ids:
                kept.append(m)  # stored: write_thread leaves it out
                continue
            if (m.role, m.content, m.created_at) in said:
                continue
            run = m.metadata.get("tool_calls")
            if m.role == "tool" and isinstance(run, list) and calls:
                new = [c for c in run if not (isinstance(c, dict) and c.get("id") in calls)]
                if not new:
                    continue
                m.metadata["tool_calls"] = new
            kept.append(m)
        for m in kept:  # a stored run read again with calls it lacks: those go under a key of their own
            run = m.metadata.get("tool_calls")
            if m.role == "tool" and m.external_id in stored.external_ids and isinstance(run, list):
                new = [c for c in run if isinstance(c, dict) and c.get("id") not in calls]
                if new and all(c.get("id") for c in new):
                    m.external_id = f"{m.external_id}+{new[0]['id']}"
                    m.metadata["tool_calls"] = new
        thread.messages = kept

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
            rows.append((r.path, r.fmt, r.size, r.mtime_ns, r.offset, r.head, thread_id, now(), r.read_upto))
        if not rows:
            return
        with self.store.con:
            self.store.con.executemany(
                "INSERT INTO import_files(path, format, size, mtime_ns, offset, head, thread_id, imported_at, "
                "read_upto) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(path) DO UPDATE SET "
                "format = excluded.format, size = excluded.size, mtime_ns = excluded.mtime_ns, "
                "offset = excluded.offset, read_upto = excluded.read_upto, "
                "head = excluded.head, thread_id = coalesce(excluded.thread_id, import_files.thread_id), "
                "imported_at = excluded.imported_at",
                rows,
            )
        for path, fmt, size, mtime_ns, offset, head, thread_id, _, upto in rows:
            self.known[path] = FileState(fmt, size, mtime_ns, offset, head, thread_id, upto)

    def _thread_of(self, path: str) -> int | None:
        row = self.store.con.execute("SELECT thread_id FROM import_files WHERE path = ?", (path,)).fetchone()
        return None if row is None or row[0] is None else int(row[0])
