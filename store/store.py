"""`Store`: the one object that owns chat.db.

Public methods are transactions (a method that writes does all of it, canonical rows, FTS rows and
vectors, in one `with con:` block, or none of it). The connections, the embedding model and the helpers
the parts share live in store.core (`StoreCore`), under the mixins: memories, threads and search. What
is left here are the facts about the whole database (counts, integrity, the indexes in step).
"""

from __future__ import annotations

from typing import Any

from store import migrations
from store.memories import MemoriesMixin
from store.search.engine import SearchMixin
from store.thread_admin import ThreadAdminMixin
from store.threads import ThreadsMixin


class Store(MemoriesMixin, ThreadsMixin, ThreadAdminMixin, SearchMixin):
    """chat.db: memories, threads and their messages, search over them (README "Python API")."""

    # -- whole-database facts -------------------------------------------------------------------------

    def schema_version(self) -> int:
        return migrations.current_version(self.con)

    def stats(self) -> dict[str, Any]:
        has_vec = self.vectors.tables_exist()
        return {
            "threads": self.scalar("SELECT count(*) FROM threads"),
            "messages": self.scalar("SELECT count(*) FROM messages"),
            "memories": {
                "active": self.scalar("SELECT count(*) FROM long_term_memories WHERE deleted_at IS NULL"),
                "pinned": self.scalar(
                    "SELECT count(*) FROM long_term_memories WHERE deleted_at IS NULL AND pinned"
                ),
                "trash": self.scalar("SELECT count(*) FROM long_term_memories WHERE deleted_at IS NOT NULL"),
            },
            "summaries": self.scalar("SELECT count(*) FROM thread_summaries"),
            "embedded_chunks": self.scalar("SELECT count(*) FROM vec_chunks") if has_vec else 0,
            "embedded_memories": self.scalar("SELECT count(*) FROM vec_memories") if has_vec else 0,
            "tokens": self.scalar("SELECT coalesce(sum(token_count), 0) FROM messages"),
        }

    def integrity_check(self) -> str:
        rows = [r[0] for r in self.con.execute("PRAGMA integrity_check")]
        return "ok" if rows == ["ok"] else "; ".join(map(str, rows))

    def check_indexes(self) -> list[str]:
        """Ways the derived indexes disagree with the canonical rows (empty when in step)."""
        problems: list[str] = []
        pairs = [
            ("fts_messages", "messages"),
            ("fts_memories", "long_term_memories"),
            ("fts_summaries", "thread_summaries"),
        ]
        for fts, table in pairs:
            n_fts = self.scalar(f"SELECT count(*) FROM {fts}")
            n_rows = self.scalar(f"SELECT count(*) FROM {table}")
            if n_fts != n_rows:
                problems.append(f"{fts} has {n_fts} rows, {table} has {n_rows}")
        if self.vectors.tables_exist():
            orphans = self.scalar(
                "SELECT count(*) FROM vec_memories WHERE memory_id NOT IN (SELECT id FROM long_term_memories)"
            )
            if orphans:
                problems.append(f"{orphans} memory vectors have no memory")
            stale = self.scalar(
                "SELECT count(*) FROM vec_memories v JOIN long_term_memories m ON m.id = v.memory_id "
                "WHERE v.deleted != (m.deleted_at IS NOT NULL) OR v.category != m.category"
            )
            if stale:
                problems.append(f"{stale} memory vectors disagree with their memory (category/trash)")
            n_chunks = self.scalar("SELECT count(*) FROM message_chunks")
            n_vec = self.scalar("SELECT count(*) FROM vec_chunks")
            if n_chunks != n_vec:
                problems.append(f"message_chunks has {n_chunks} rows, vec_chunks has {n_vec}")
            problems += self.vectors.check()
        return problems
