"""Managing threads after import (rename, archive, delete). The per-database settings and `data_version`
are StoreCore's (they belong to no kind of row).

Why archive as well as delete: a conversation imported by mistake, or one that is private, should stop
showing up in lists, search and MCP answers at once, but deleting is for good (only a re-import of the
export brings it back). Archiving only sets `threads.archived_at`; lists and search leave such threads
out unless asked (`archived=True/None`, `Filters(include_archived=True)`), and unarchiving is instant.

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
