"""Managing threads after import (rename, archive, delete) and the small per-database settings.

Why archive as well as delete: a conversation imported by mistake, or one that is private, should stop
showing up in lists, search and MCP answers at once, but deleting is for good (only a re-import of the
export brings it back). Archiving only sets `threads.archived_at`; lists and search leave such threads
out unless asked (`archived=True/None`, `Filters(include_archived=True)`), and unarchiving is instant.

Why `data_version`: SQLite's `PRAGMA data_version` changes on a connection when *another* connection
committed a write to the file. The TUI polls it on its own connection (a few microseconds) to notice
the CLI or the MCP server writing beside it, and refreshes what it shows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from store.core import StoreCore
from store.errors import InvalidInputError
from store.records import Thread, now
from store.text import unpaired_surrogate
from store.threads import thread_where


class ThreadAdminMixin(StoreCore):
    if TYPE_CHECKING:  # provided by ThreadsMixin

        def get_thread(self, thread_id: int) -> Thread: ...

    def rename_thread(self, thread_id: int, title: str) -> Thread:
        """Give a thread a new title (a re-import of the same export keeps the new one only if the export's
        title did not change). Empty or invalid text is refused."""
        title = " ".join(self.redact(title).split())  # the secret gate (store.secrets)
        if not title:
            raise InvalidInputError("the new title is empty")
        if unpaired_surrogate(title) is not None:
            raise InvalidInputError("the new title is not valid Unicode text")
        with self.con:
            self.get_thread(thread_id)  # NotFoundError for an unknown id
            self.con.execute("UPDATE threads SET title = ? WHERE id = ?", (title, thread_id))
            return self.get_thread(thread_id)

    def archive_thread(self, thread_id: int, archived: bool = True) -> Thread:
        """Hide a thread from lists and search (True) or bring it back (False). Idempotent."""
        with self.con:
            t = self.get_thread(thread_id)
            if archived and t.archived_at is None:
                self.con.execute("UPDATE threads SET archived_at = ? WHERE id = ?", (now(), thread_id))
            elif not archived and t.archived_at is not None:
                self.con.execute("UPDATE threads SET archived_at = NULL WHERE id = ?", (thread_id,))
            return self.get_thread(thread_id)

    def count_threads(self, *, text: str | None = None, archived: bool | None = False) -> int:
        """How many threads `list_threads` would page through (same `text` and `archived` meaning)."""
        where, args = thread_where(text, archived)
        return int(self.scalar(f"SELECT count(*) FROM threads WHERE {' AND '.join(where)}", args))

    def find_in_thread(self, thread_id: int, text: str, *, limit: int = 1000) -> list[int]:
        """0-based positions (as `get_messages` offsets) of the thread's messages containing `text`
        (case-insensitive substring, like the threads filter), in order."""
        if not text.strip():
            return []
        rows = self.con.execute(
            "SELECT idx FROM (SELECT row_number() OVER (ORDER BY seq) - 1 AS idx, content FROM messages "
            "WHERE thread_id = ?) WHERE instr(lower(content), lower(?)) > 0 ORDER BY idx LIMIT ?",
            (thread_id, text, limit),
        )
        return [int(r[0]) for r in rows]

    def thread_sources(self) -> list[str]:
        """The sources threads were imported from (chatgpt, claude, …), for a filter's choices."""
        return [str(r[0]) for r in self.con.execute("SELECT DISTINCT source FROM threads ORDER BY source")]

    def archived_thread_ids(self) -> set[int]:
        """Every archived thread's id (usually none: one indexed query)."""
        return {int(r[0]) for r in self.con.execute("SELECT id FROM threads WHERE archived_at IS NOT NULL")}

    # -- settings ------------------------------------------------------------------------------------

    def get_setting(self, key: str, default: str | None = None) -> str | None:
        """A value from the `settings` table (per database: e.g. the TUI's theme)."""
        row = self.con.execute("SELECT value FROM settings WHERE key = ?", (key,)).fetchone()
        return default if row is None else str(row[0])

    def set_setting(self, key: str, value: str) -> None:
        with self.con:
            self.con.execute(
                "INSERT INTO settings(key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

    def data_version(self) -> int:
        """SQLite's `PRAGMA data_version` on this thread's connection: it changes when another
        connection (another process, or another thread's connection) has committed a write."""
        return int(self.con.execute("PRAGMA data_version").fetchall()[0][0])  # type: ignore[arg-type]
