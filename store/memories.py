"""Changing long-term memories: add (with near-duplicate merge), edit, pin, trash, restore, purge, access counts.

Rules (SPEC "Long-term memories", "Nothing is lost silently"):
- Adding text is classified against its nearest current memories (store.truth.classify, any category):
  a duplicate or paraphrase in the same category (cosine >= memory.merge_threshold, or a paraphrase with
  nothing that differs: no negation, antonym, number, date or name) merges into it: importance becomes
  the max, the newest wording is kept, a `merge` event records old and new. A reversal or update is
  never merged: the new memory is added and supersedes the old one (store.truth.timeline); what the
  classifier is unsure about goes to the conflicts queue. A pinned or hand-edited memory is never changed
  automatically: DuplicateMemoryError asks the caller to decide (the CLI's `--force`, the TUI's dialog),
  and a supersede of one is queued for review instead.
- Every change writes `memory_history` with old and new values, in the same transaction as the row, its
  FTS row and its vector.
- Delete moves to the trash (deleted_at); restore brings back the same row, counts and vector untouched.
  Purge removes for good only what has been in the trash longer than the retention, and never a pinned
  memory.

Reading a memory, its columns, hash and validation, and its history rows are store.memory_rows', under
store.truth.timeline's mixin and this one.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from store.errors import DuplicateMemoryError, InvalidInputError, PinnedMemoryError
from store.memory_rows import MEMORY_COLUMNS, content_hash, memory_fields, memory_from_row, validate
from store.records import Memory, json_dumps, now
from store.text import fts_delete, fts_put
from store.truth.classify import DEFAULT, Plan, Verdict
from store.truth.timeline import TimelineMixin


@dataclass(frozen=True)
class AddResult:
    memory: Memory
    action: str  # "added" | "merged" | "exists"
    similarity: float | None = None
    superseded: tuple[int, ...] = ()  # memories the new one replaced (store.truth)
    conflicts: tuple[int, ...] = ()  # conflicts opened for review


def _restates(m: Memory) -> bool:
    """The same words as a memory that a newer one replaced: saying it again makes it current again."""
    return m.valid_until is not None and m.deleted_at is None


class MemoriesMixin(TimelineMixin):
    # -- helpers inside a transaction -----------------------------------------------------------------

    def reindex_memory(self, memory_id: int, vector_from: int | None = None) -> None:
        """After a direct content change: FTS row again, and the vector of `vector_from` (a memory with the
        same text), or none (`memapp embed` redoes it)."""
        m = self.get_memory(memory_id)
        fts_put(self.con, "fts_memories", memory_id, m.content)
        vec = self.vectors.vector("memories", vector_from) if vector_from is not None else None
        if vec is None:
            self.vectors.delete_memory(memory_id)
        else:
            self._put_vector(m, vec)

    def put_memory_vector(self, memory_id: int, vec: Any) -> None:
        """Store `vec` as the memory's vector (inside the caller's transaction)."""
        self._put_vector(self.get_memory(memory_id), vec)

    def _put_vector(self, memory: Memory, vec: Any) -> None:
        if vec is None:
            return
        self.ensure_vector_tables()
        self.vectors.put_memory(memory.id, vec, memory.category, memory.deleted_at is not None)

    # -- add / merge ---------------------------------------------------------------------------------

    def add_memory(
        self,
        content: str,
        category: str,
        *,
        importance: int = 5,
        pinned: bool = False,
        origin: str = "manual",
        source_thread_id: int | None = None,
        source_message_id: int | None = None,
        source_note: str | None = None,
        force: bool = False,
        created_at: float | None = None,
        embed: bool = True,
    ) -> AddResult:
        """Add a memory, or merge it into a paraphrase of itself; supersede what it replaces, queue what
        is unsure (store.truth). `force` adds even next to a protected near-duplicate.

        `embed=False` (imports with --no-embed) skips the model: only exact repeats are detected, and
        `memapp embed` adds the vector later."""
        validate(content, category, importance)
        content = self.redact(content).strip()  # the secret gate (store.secrets): before hash, FTS and vector
        digest = content_hash(content)
        # An identical memory already there (or one the user threw away, for automatic sources): no-op,
        # so re-importing an export never duplicates or resurrects anything.
        same_sql = (
            f"SELECT {MEMORY_COLUMNS} FROM long_term_memories WHERE content_hash = ? AND category = ? "
            f"AND (deleted_at IS NULL{'' if origin == 'manual' else ' OR deleted_at IS NOT NULL'}) "
            "ORDER BY deleted_at IS NOT NULL, valid_until IS NOT NULL, id LIMIT 1"
        )
        same = self.con.execute(same_sql, (digest, category)).fetchone()
        if same is not None and not force and not _restates(memory_from_row(same)):
            return AddResult(memory_from_row(same), "exists", 1.0)

        vec = self.embed_texts([content]) if embed else None
        vec0 = None if vec is None else vec[0]
        with self.con:
            # Again under the write lock: two processes adding the same text at once both passed the check
            # above (6 copies from 6 concurrent `memory add`s); the second one now sees the first's row.
            same = None if force else self.con.execute(same_sql, (digest, category)).fetchone()
            restated = memory_from_row(same) if same is not None else None
            if restated is not None and not _restates(restated):
                return AddResult(restated, "exists", 1.0)
            p = self.plan_memory(content, category, vec0, force=force)
            if p.merge_into is not None:
                n, v = p.merge_into
                existing = self.get_memory(n.id)
                if existing.pinned or existing.user_edited:
                    why = "pinned" if existing.pinned else "edited by hand"
                    raise DuplicateMemoryError(
                        f"near-duplicate of memory {existing.id} ({why}, similarity {v.similarity:.2f}); "
                        "it is not changed automatically: edit it, or add anyway with --force",
                        existing.id,
                        v.similarity,
                    )
                merged = self._merge_into(existing, content, digest, importance, pinned, vec0)
                superseded, opened = self.apply_plan(merged, p)
                return AddResult(merged, "merged", v.similarity, tuple(superseded), tuple(opened))
            t = created_at or now()
            # The id is new even to memory_history: SQLite would reuse a purged memory's id (the largest
            # one), and its history would then read as the new memory's.
            self.con.execute(
                "INSERT INTO long_term_memories(id, category, content, importance, pinned, origin, source_thread_id, "
                "source_message_id, source_note, content_hash, token_count, created_at, updated_at, valid_from) "
                "VALUES (1 + max(coalesce((SELECT max(id) FROM long_term_memories), 0), "
                "coalesce((SELECT max(memory_id) FROM memory_history), 0)), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    category,
                    content,
                    int(importance),
                    int(pinned),
                    origin,
                    source_thread_id,
                    source_message_id,
                    source_note,
                    digest,
                    self.tokens.count(content),
                    t,
                    t,
                    t,
                ),
            )
            memory = self.get_memory(self.con.last_insert_rowid())
            fts_put(self.con, "fts_memories", memory.id, content)
            self._put_vector(memory, vec0)
            added: dict[str, Any] = {**memory_fields(memory), "origin": origin}
            if restated is not None:
                added["restates"] = restated.id
            self.record_history(memory.id, "add", None, added)
            superseded = self._reinstate_by_restating(restated, memory) if restated is not None else []
            more, opened = self.apply_plan(memory, p, dated=created_at is not None)
            return AddResult(
                self.get_memory(memory.id), "added", None, tuple(superseded + more), tuple(opened)
            )

    def _reinstate_by_restating(self, restated: Memory, memory: Memory) -> list[int]:
        """A superseded memory said again: the new row (same words) supersedes whatever replaced it, so
        the older value is current again and the history keeps every step."""
        head = self.current_successor(restated.id)
        if head is None or head.id == memory.id:
            return []
        why = Verdict(
            "update", "supersede", 1.0, (f"restates memory {restated.id}, which this one had replaced",)
        )
        self._supersede(
            head.id,
            memory.id,
            max(memory.created_at, head.valid_from or head.created_at),
            why,
            automatic=True,
        )
        return [head.id]

    def plan_memory(
        self, content: str, category: str, vec: Any, *, force: bool = False, exclude: int | None = None
    ) -> Plan:
        """What adding `content` (embedded as `vec`) would do to its neighbours (store.truth.classify)."""
        thresholds = replace(DEFAULT, duplicate=self.config.memory.merge_threshold)
        return self.plan_for(
            content, category, vec, exclude=exclude, allow_merge=not force, thresholds=thresholds
        )

    def _merge_into(
        self, existing: Memory, content: str, digest: str, importance: int, pinned: bool, vec: Any
    ) -> Memory:
        new_importance = max(existing.importance, int(importance))
        self.con.execute(
            "UPDATE long_term_memories SET content = ?, content_hash = ?, importance = ?, pinned = ?, "
            "token_count = ?, updated_at = ? WHERE id = ?",
            (
                content,
                digest,
                new_importance,
                int(existing.pinned or pinned),
                self.tokens.count(content),
                now(),
                existing.id,
            ),
        )
        merged = self.get_memory(existing.id)
        fts_put(self.con, "fts_memories", merged.id, content)
        self._put_vector(merged, vec)
        self.record_history(merged.id, "merge", memory_fields(existing), memory_fields(merged))
        return merged

    # -- edits ---------------------------------------------------------------------------------------

    def edit_memory(
        self,
        memory_id: int,
        *,
        content: str | None = None,
        category: str | None = None,
        importance: int | None = None,
        pinned: bool | None = None,
        refuse_pinned: bool = False,
    ) -> Memory:
        """Change any of the fields by hand. A content change marks the memory hand-edited.
        `refuse_pinned`: raise PinnedMemoryError instead of changing a pinned memory (checked under the
        write lock, so a pin made meanwhile in another process is respected)."""
        validate(content, category, importance)
        old = self.get_memory(memory_id)
        if old.deleted_at is not None:
            raise InvalidInputError(f"memory {memory_id} is in the trash: restore it first")
        if refuse_pinned and old.pinned:
            raise PinnedMemoryError(memory_id)
        content = self.redact(content).strip() if content is not None else None  # the secret gate
        new_content = content if content is not None and content != old.content else None
        vec = self.embed_texts([new_content]) if new_content is not None else None
        with self.con:
            old = self.get_memory(memory_id)  # re-read under the write lock
            if refuse_pinned and old.pinned:
                raise PinnedMemoryError(memory_id)
            sets: list[str] = []
            args: list[Any] = []
            events: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
            if new_content is not None and new_content != old.content:
                sets += ["content = ?", "content_hash = ?", "token_count = ?", "user_edited = 1"]
                args += [new_content, content_hash(new_content), self.tokens.count(new_content)]
                events.append(("edit", {"content": old.content}, {"content": new_content}))
            if category is not None and category != old.category:
                sets.append("category = ?")
                args.append(category)
                events.append(("recategorise", {"category": old.category}, {"category": category}))
            if importance is not None and int(importance) != old.importance:
                sets.append("importance = ?")
                args.append(int(importance))
                events.append(("importance", {"importance": old.importance}, {"importance": int(importance)}))
            if pinned is not None and bool(pinned) != old.pinned:
                sets.append("pinned = ?")
                args.append(int(pinned))
                events.append(
                    ("pin" if pinned else "unpin", {"pinned": old.pinned}, {"pinned": bool(pinned)})
                )
            if not sets:
                return old
            sets.append("updated_at = ?")
            args.append(now())
            self.con.execute(
                f"UPDATE long_term_memories SET {', '.join(sets)} WHERE id = ?", [*args, memory_id]
            )
            memory = self.get_memory(memory_id)
            if new_content is not None:
                fts_put(self.con, "fts_memories", memory_id, memory.content)
                if vec is not None:
                    self._put_vector(memory, vec[0])
                else:  # the old vector describes the old text: drop it, `memapp embed` redoes it
                    self.vectors.delete_memory(memory_id)
            elif category is not None:
                self.vectors.update_memory_meta(memory_id, category=memory.category, deleted=False)
            for event, o, n in events:
                self.record_history(memory_id, event, o, n)
            if vec is not None and new_content is not None and memory.valid_until is None:
                # The new wording may contradict or repeat another memory: supersede or ask, never merge.
                p = self.plan_memory(new_content, memory.category, vec[0], force=True, exclude=memory_id)
                self.apply_plan(memory, p, at=now())
            return self.get_memory(memory_id)

    def pin_memory(self, memory_id: int, pinned: bool = True) -> Memory:
        return self.edit_memory(memory_id, pinned=pinned)

    # Read-modify-writes: the value is read inside the write transaction that changes it, so a change
    # another process or thread made meanwhile is built on, never overwritten (issue 31, 5: the TUI's
    # `+`/`-` read the importance outside it, and two memories drifted from 5 to 2 under load).

    def change_importance(self, memory_id: int, delta: int) -> Memory:
        """Importance moved by `delta` from its stored value (kept within 1-10)."""
        with self.con:
            m = self.get_memory(memory_id)
            return self.edit_memory(memory_id, importance=max(1, min(10, m.importance + delta)))

    def raise_importance(self, memory_id: int, at_least: int) -> Memory:
        """Importance at least `at_least` (cleanup's keep); a higher stored value is left as it is."""
        with self.con:
            m = self.get_memory(memory_id)
            if m.importance >= at_least:
                return m
            return self.edit_memory(memory_id, importance=max(1, min(10, at_least)))

    def toggle_pin(self, memory_id: int) -> Memory:
        """Pinned becomes unpinned and the other way round, from the stored state."""
        with self.con:
            return self.edit_memory(memory_id, pinned=not self.get_memory(memory_id).pinned)

    # -- trash ---------------------------------------------------------------------------------------

    def delete_memory(
        self, memory_id: int, *, event: str = "delete", reason: str | None = None, refuse_pinned: bool = False
    ) -> Memory:
        """Move to the trash. `event` is 'cleanup' when the cleanup policy does it. `refuse_pinned`: raise
        PinnedMemoryError for a pinned memory instead."""
        with self.con:
            old = self.get_memory(memory_id)
            if old.deleted_at is not None:
                return old
            if refuse_pinned and old.pinned:
                raise PinnedMemoryError(memory_id)
            t = self.event_time()  # never dated before the last event: a clock set back purges nothing
            self.con.execute("UPDATE long_term_memories SET deleted_at = ? WHERE id = ?", (t, memory_id))
            self.vectors.update_memory_meta(memory_id, category=old.category, deleted=True)
            new: dict[str, Any] = {"deleted_at": t}
            if reason:
                new["reason"] = reason
            self.record_history(memory_id, event, {"deleted_at": None}, new, t)
            return self.get_memory(memory_id)

    def delete_memories(
        self, memory_ids: Iterable[int], *, event: str = "delete", reasons: dict[int, str] | None = None
    ) -> list[Memory]:
        """Trash several memories in one transaction (cleanup --apply)."""
        with self.con:
            return [self.delete_memory(i, event=event, reason=(reasons or {}).get(i)) for i in memory_ids]

    def restore_memory(self, memory_id: int) -> Memory:
        with self.con:
            old = self.get_memory(memory_id)
            if old.deleted_at is None:
                return old
            self.con.execute("UPDATE long_term_memories SET deleted_at = NULL WHERE id = ?", (memory_id,))
            self.vectors.update_memory_meta(memory_id, category=old.category, deleted=False)
            self.record_history(memory_id, "restore", {"deleted_at": old.deleted_at}, {"deleted_at": None})
            return self.get_memory(memory_id)

    def purge_trash(
        self, *, older_than_days: float | None = None, ids: Sequence[int] | None = None
    ) -> list[int]:
        """Delete for good what has been in the trash longer than the retention. Never a pinned memory."""
        days = self.config.cleanup.trash_retention_days if older_than_days is None else older_than_days
        cutoff = now() - days * 86400
        sql = (
            "SELECT id FROM long_term_memories WHERE deleted_at IS NOT NULL AND deleted_at <= ? "
            "AND pinned = 0"
        )
        args: list[Any] = [cutoff]
        if ids is not None:
            sql += " AND id IN (SELECT value FROM json_each(?))"
            args.append(json_dumps(list(ids)))
        with self.con:
            purged = [int(r[0]) for r in self.con.execute(sql, args)]
            for mid in purged:
                m = self.get_memory(mid)
                self.record_history(mid, "purge", {**memory_fields(m), "deleted_at": m.deleted_at}, None)
                fts_delete(self.con, "fts_memories", mid)
                self.vectors.delete_memory(mid)
                self.con.execute("DELETE FROM long_term_memories WHERE id = ?", (mid,))
            return purged

    # -- access tracking -----------------------------------------------------------------------------

    def touch_memories(self, memory_ids: Iterable[int]) -> None:
        """Count one access for each memory returned to the user: one statement, whatever the count,
        written now if the write lock is free, else soon after without making the caller wait
        (store.access). Nothing is written for a read-only chat.db or a read-only server."""
        ids = sorted({int(i) for i in memory_ids})
        if not ids or not self.track_access or self.con.readonly("main"):
            return
        self.access_counts.add(ids)

    # -- vectors after the fact ---------------------------------------------------------------------

    def memories_missing_vectors(self, limit: int = 256) -> list[Memory]:
        has = self.vectors.tables_exist()
        missing = "id NOT IN (SELECT memory_id FROM vec_memories)" if has else "1"
        rows = self.con.execute(
            f"SELECT {MEMORY_COLUMNS} FROM long_term_memories WHERE {missing} ORDER BY id LIMIT ?", (limit,)
        )
        return [memory_from_row(r) for r in rows]

    def embed_memories(self, memories: Sequence[Memory]) -> int:
        """Embed and store vectors for these memories (one transaction). Returns how many were written."""
        vecs = self.embed_texts([m.content for m in memories])
        if vecs is None:
            return 0
        with self.con:
            for m, v in zip(memories, vecs, strict=True):
                current = self.get_memory(m.id)
                if current.content == m.content:  # skip a memory edited meanwhile; next pass catches it
                    self._put_vector(current, v)
        return len(memories)
