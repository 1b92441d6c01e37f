"""Superseding and provenance: the Store methods that keep an old fact without letting it pass for a current one.

Why supersede instead of delete or merge: "lives in Lisbon" was true until the user moved; deleting it
loses the past (`search --as-of`), merging it makes the reversal read as an edit. So the old memory gets
`valid_until` (the new one's `valid_from`) and `superseded_by`, stays searchable (ranked down), and leaves
the context sent to assistants. Every change is a history row in the same transaction, and is undone by
`reinstate_memory`.

Adding a memory asks store.truth.classify what it is to its nearest neighbours (any category; one KNN
over the vector the add computed anyway, no second embedding): merge, supersede, review or add. Pairs it
is unsure about go to the conflicts queue (store.truth.conflicts); automatic supersedes are recorded
there too, already resolved, so they can be listed and undone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import apsw
import numpy as np

from store.errors import InvalidInputError
from store.memory_rows import MemoryRowsMixin
from store.records import Memory, json_dumps, now
from store.truth.classify import DEFAULT, Neighbour, Plan, Thresholds, Verdict, plan
from store.truth.lexicon import HAS_CJK, STOPWORDS, TOKEN, ZH_GLOSS
from store.truth.reading import read
from store.truth.slots import MANY, vocabulary

NEIGHBOURS = 8  # nearest memories (in meaning, and again in words) a new one is compared with
FLOOR = 0.15  # below this cosine nothing is compared (the rules decide above it: store.truth.classify)
CURRENT = "deleted_at IS NULL AND valid_until IS NULL"  # what counts as a current memory


@dataclass(frozen=True, slots=True)
class Source:
    """Where a memory came from: a message in a thread, a thread, or an import."""

    origin: str
    thread_id: int | None
    thread_title: str | None
    message_id: int | None
    message_seq: int | None
    message_role: str | None
    message_excerpt: str | None
    note: str | None

    def describe(self) -> str:
        if self.message_id is not None:
            return f"message {self.message_id} ({self.message_role}, turn {self.message_seq}) in thread {self.thread_id} “{self.thread_title}”"
        if self.thread_id is not None:
            return f"thread {self.thread_id} “{self.thread_title}”"
        if self.note:
            return f"{self.origin}: {self.note}"
        return {"manual": "typed by hand", "extract": "a suggestion", "import": "an import"}.get(
            self.origin, self.origin
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "origin": self.origin,
            "thread_id": self.thread_id,
            "thread_title": self.thread_title,
            "message_id": self.message_id,
            "message_seq": self.message_seq,
            "message_role": self.message_role,
            "message_excerpt": self.message_excerpt,
            "note": self.note,
            "description": self.describe(),
        }


def content_words(text: str) -> list[str]:
    """The words of `text` worth looking up in the keyword index (CJK: each character)."""
    return [
        w
        for w in {*TOKEN.findall(text)}
        if HAS_CJK.match(w) or (len(w) > 1 and w.casefold() not in STOPWORDS)
    ]


def gloss_words(text: str) -> list[str]:
    """The other language's words for `text`'s words (ZH_GLOSS): a Chinese memory and an English one about
    the same fact share no word and sit at a cosine near 0.1 ("我在 Google 工作。" / "I moved to Meta last
    month.", 0.09), so without these the rules never see the pair."""
    if HAS_CJK.search(text):
        return sorted({w for zh, en in ZH_GLOSS if zh in text for w in en.split()})
    lows = {w.casefold() for w in TOKEN.findall(text)}
    return sorted({c for zh, en in ZH_GLOSS if set(en.split()) <= lows for c in zh})


class TimelineMixin(MemoryRowsMixin):
    # -- classification on add / edit ----------------------------------------------------------------

    def plan_for(
        self,
        content: str,
        category: str,
        vec: np.ndarray | None,
        *,
        exclude: int | None = None,
        allow_merge: bool = True,
        thresholds: Thresholds = DEFAULT,
    ) -> Plan:
        """Classify `content` (embedded as `vec`, or None without a model) against the current memories
        nearest to it in meaning (KNN) and in words (the keyword index, over its own words and the words
        of the one-value slots it states): an update often shares few words and little cosine with what
        it replaces ("I live in Berlin." / "I moved to Lisbon."), and without a model the words are all
        there is. One query reads both kinds of neighbour; the rules (store.truth.classify) decide."""
        sims: dict[int, float | None] = {}
        if vec is not None:
            for mid, sim in self.vectors.knn_memories(vec, NEIGHBOURS + 1):
                if sim >= FLOOR and mid != exclude:
                    sims[mid] = float(sim)
        slot_words = [w for hit in read(content).slots if hit.kind != MANY for w in vocabulary(hit.name)]
        words = sorted({*content_words(content), *slot_words, *gloss_words(content)})[:48]
        expr = " OR ".join('"' + w.replace('"', '""') + '"' for w in words) if words else None
        if not sims and expr is None:
            return Plan()
        rows = self._neighbour_rows(list(sims), expr, exclude)
        for mid in rows:
            if mid not in sims:  # found by its words: its cosine from its stored vector, if it has one
                sims[mid] = self._cosine(vec, mid)
        ranked = sorted((mid for mid in sims if mid in rows), key=lambda mid: -(sims[mid] or 0.0))
        neighbours = [
            Neighbour(
                mid, str(rows[mid][1]), str(rows[mid][2]), sims[mid], bool(rows[mid][3] or rows[mid][4])
            )
            for mid in ranked
        ]
        return plan(content, category, neighbours, thresholds, allow_merge=allow_merge)

    def _cosine(self, vec: np.ndarray | None, memory_id: int) -> float | None:
        """The cosine of `vec` and a memory's stored vector; None without either (the words decide). A
        memory found by its words alone may be far in meaning ("never uses emojis" / "the payments squad
        uses Java", 0.09): the rules need to know that, not to guess it from the words."""
        if vec is None:
            return None
        other = self.vectors.vector("memories", memory_id)
        if other is None or other.shape != vec.shape:
            return None
        return float(np.dot(np.asarray(vec, dtype=np.float32), other))

    def _neighbour_rows(self, ids: list[int], expr: str | None, exclude: int | None) -> dict[int, Any]:
        """The current rows of `ids` and of the best 2 x NEIGHBOURS keyword matches of `expr`, in one query."""
        select = "SELECT id, content, category, pinned, user_edited FROM long_term_memories WHERE "
        current = "deleted_at IS NULL AND valid_until IS NULL AND id IS NOT ?"
        listed = "id IN (SELECT value FROM json_each(?))"
        if expr is None:
            found = self.con.execute(f"{select}{current} AND {listed}", (exclude, json_dumps(ids)))
            return {int(r[0]): r for r in found}
        try:
            found = self.con.execute(
                f"{select}{current} AND ({listed} OR id IN (SELECT rowid FROM fts_memories "
                "WHERE fts_memories MATCH ? ORDER BY rank LIMIT ?))",
                (exclude, json_dumps(ids), expr, 2 * NEIGHBOURS),
            )
            return {int(r[0]): r for r in found}
        except apsw.SQLError:  # a word the tokenizer cannot take: the KNN alone decides
            return self._neighbour_rows(ids, None, exclude)

    def apply_plan(
        self, memory: Memory, p: Plan, *, at: float | None = None, dated: bool = False
    ) -> tuple[list[int], list[int]]:
        """Inside the add's transaction: supersede what the new memory replaces, queue what is unsure.

        Which of two memories is the newer is their order of addition (ids only grow), never the wall
        clock alone: a clock set back must not make the older memory win (issue 31.14). Only a memory
        that carries its own date (`dated`: an import that says when the user wrote it) can be older
        than one added before it: an old ChatGPT bio line does not overrule what was said last week.
        `valid_until` is never before the superseded memory's own `valid_from`. `at`: when the
        replacement happened (an edit: now). Returns (superseded memory ids, opened conflict ids)."""
        superseded: list[int] = []
        opened: list[int] = []
        for n, v in p.supersede:
            older = self.get_memory(n.id)
            if older.valid_until is not None:  # already replaced (a restatement's own supersede)
                continue
            new_from = at if at is not None else (memory.valid_from or memory.created_at)
            old_from = older.valid_from if older.valid_from is not None else older.created_at
            if dated and at is None and new_from < old_from:  # an import brought an older statement
                if self.get_memory(memory.id).valid_until is None:
                    self._supersede(memory.id, older.id, old_from, v, automatic=True)
                    superseded.append(memory.id)
                continue
            self._supersede(older.id, memory.id, max(new_from, old_from), v, automatic=True)
            superseded.append(older.id)
        for n, v in p.review:
            cid = self.open_conflict(memory.id, n.id, v)
            if cid is not None:
                opened.append(cid)
        return superseded, opened

    # -- conflicts rows --------------------------------------------------------------------------------

    def open_conflict(
        self, new_id: int, old_id: int, v: Verdict, *, resolution: str | None = None
    ) -> int | None:
        """Record a pair for review (or, with `resolution`, a decision already taken). Idempotent per pair."""
        status = "open" if resolution is None else "resolved"
        relation = v.relation if v.relation in ("reversal", "update", "paraphrase") else "unsure"
        t = now()
        with self.con:  # a savepoint inside a caller's transaction; the lock when called alone
            self.con.execute(
                "INSERT INTO memory_conflicts(new_id, old_id, relation, similarity, reasons, status, resolution, "
                "created_at, resolved_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(new_id, old_id) DO NOTHING",
                (
                    new_id,
                    old_id,
                    relation,
                    round(v.similarity, 4),
                    json_dumps(list(v.reasons)),
                    status,
                    resolution,
                    t,
                    None if resolution is None else t,
                ),
            )
            if not self.con.changes():
                return None
            cid = self.con.last_insert_rowid()
            if resolution is None:
                for mid, other in ((new_id, old_id), (old_id, new_id)):
                    self.record_history(
                        mid, "conflict", None, {"conflict": cid, "with": other, "relation": relation}, t
                    )
            return cid

    # -- supersede / reinstate -------------------------------------------------------------------------

    def _supersede(self, old_id: int, new_id: int, at: float, v: Verdict | None, *, automatic: bool) -> None:
        old = self.get_memory(old_id)
        self.con.execute(
            "UPDATE long_term_memories SET valid_until = ?, superseded_by = ?, updated_at = ? WHERE id = ?",
            (at, new_id, now(), old_id),
        )
        new: dict[str, Any] = {"valid_until": at, "superseded_by": new_id}
        if v is not None:
            new.update(relation=v.relation, similarity=round(v.similarity, 4), reasons=list(v.reasons))
        new["automatic"] = automatic
        self.record_history(
            old_id, "supersede", {"valid_until": old.valid_until, "superseded_by": old.superseded_by}, new
        )
        if automatic and v is not None:
            self.open_conflict(new_id, old_id, v, resolution="new")

    def supersede_memory(self, old_id: int, new_id: int) -> Memory:
        """Mark `old_id` as replaced by `new_id` (from the new one's valid_from). By hand: always allowed."""
        if old_id == new_id:
            raise InvalidInputError("a memory cannot supersede itself")
        with self.con:
            new = self.get_memory(new_id)
            self.get_memory(old_id)
            self._supersede(old_id, new_id, new.valid_from or new.created_at, None, automatic=False)
            return self.get_memory(old_id)

    def reinstate_memory(self, memory_id: int) -> Memory:
        """Undo a supersede: the memory is current again."""
        with self.con:
            old = self.get_memory(memory_id)
            if old.valid_until is None:
                return old
            self.con.execute(
                "UPDATE long_term_memories SET valid_until = NULL, superseded_by = NULL, updated_at = ? WHERE id = ?",
                (now(), memory_id),
            )
            self.record_history(
                memory_id,
                "reinstate",
                {"valid_until": old.valid_until, "superseded_by": old.superseded_by},
                {"valid_until": None, "superseded_by": None},
            )
            return self.get_memory(memory_id)

    def current_successor(self, memory_id: int) -> Memory | None:
        """The current memory at the end of `memory_id`'s chain of successors (None if the chain ends in
        the trash or loops)."""
        seen: set[int] = set()
        m = self.get_memory(memory_id)
        while m.superseded_by is not None and m.id not in seen:
            seen.add(m.id)
            m = self.get_memory(m.superseded_by)
        if m.valid_until is not None or m.deleted_at is not None or m.id == memory_id:
            return None
        return m

    def superseded_ids(self, memory_ids: list[int]) -> set[int]:
        """Which of these memories a newer one has replaced."""
        if not memory_ids:
            return set()
        return {
            int(r[0])
            for r in self.con.execute(
                "SELECT id FROM long_term_memories WHERE valid_until IS NOT NULL "
                "AND id IN (SELECT value FROM json_each(?))",
                (json_dumps(memory_ids),),
            )
        }

    def superseded_by_memory(self, memory_id: int) -> list[int]:
        """Ids of the memories this one superseded (its predecessors)."""
        return [
            int(r[0])
            for r in self.con.execute(
                "SELECT id FROM long_term_memories WHERE superseded_by = ? ORDER BY valid_until, id",
                (memory_id,),
            )
        ]

    # -- provenance ------------------------------------------------------------------------------------

    def locate_source(
        self, source: str | None, thread_external_id: str | None, message_external_ids: tuple[str, ...] = ()
    ) -> tuple[int | None, int | None]:
        """(thread id, message id) of an imported memory's origin: the nearest of `message_external_ids`
        that was stored, preferring what the user said (a bio write's own node is tool plumbing)."""
        if source is None or thread_external_id is None:
            return None, None
        row = self.con.execute(
            "SELECT id FROM threads WHERE source = ? AND external_id = ?", (source, thread_external_id)
        ).fetchone()
        if row is None:
            return None, None
        thread_id = int(row[0])
        if not message_external_ids:
            return thread_id, None
        found = {
            str(ext): (int(mid), str(role))
            for ext, mid, role in self.con.execute(
                "SELECT external_id, id, role FROM messages WHERE thread_id = ? "
                "AND external_id IN (SELECT value FROM json_each(?))",
                (thread_id, json_dumps(list(message_external_ids))),
            )
        }
        ordered = [found[e] for e in message_external_ids if e in found]
        for mid, role in ordered:
            if role == "user":
                return thread_id, mid
        return thread_id, ordered[0][0] if ordered else None

    def memory_source(self, memory: Memory) -> Source:
        thread_id, title = memory.source_thread_id, None
        seq = role = excerpt = None
        if memory.source_message_id is not None:
            row = self.con.execute(
                "SELECT m.thread_id, m.seq, m.role, substr(m.content, 1, 200), t.title FROM messages m "
                "JOIN threads t ON t.id = m.thread_id WHERE m.id = ?",
                (memory.source_message_id,),
            ).fetchone()
            if row is not None:
                thread_id, seq, role, excerpt, title = (
                    int(row[0]),
                    int(row[1]),
                    str(row[2]),
                    str(row[3]),
                    str(row[4]),
                )
        if thread_id is not None and title is None:
            row = self.con.execute("SELECT title FROM threads WHERE id = ?", (thread_id,)).fetchone()
            if row is None:
                thread_id = None
            else:
                title = str(row[0])
        return Source(
            memory.origin,
            thread_id,
            title,
            memory.source_message_id if seq is not None else None,
            seq,
            role,
            excerpt,
            memory.source_note,
        )
