"""The context builder: the OpenAI-format message list a chat model should receive for a thread, never
over budget by tiktoken count.

Layout (design notes 004, "three-tier memory"), after the caller's system prompt:
- tier 1 (~10%): pinned memories (never dropped while they fit: they may use the whole budget except
  the last message), memories retrieved for the query or the latest user message, and the thread summary
  with its topics (only when some messages are left out: otherwise it repeats them);
- tier 2 (~35%): older messages, condensed: reasoning/thinking blocks removed, tool output cut to
  `context.tool_output_chars` characters plus "... (truncated)";
- tier 3 (~55%): the last messages (up to `context.recent_messages`) verbatim. The last message is
  always there, truncated if it alone exceeds the budget.
Unused budget flows on: tier 1's leftover to tier 3, tier 3's to tier 2. The budget the tiers share is
`budget * (1 - safety_margin) - output_reserve` minus the system prompt.

Why it is fast on long threads: messages are read from the end backwards, a page at a time, and their
stored token counts are used as they are; only text the builder changes (condensed, truncated, the
tier-1 messages) is counted. A thread of any length costs about the same as the part that fits.

Accounting: a message costs 4 tokens + its role + its content, and a list 2 more for the reply primer
(`TokenCounter.count_messages`); `token_stats.system` includes the primer, so the tiers add up to
`total` exactly.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from embeddings.tokens import TOKENS_PER_CONVERSATION, TOKENS_PER_MESSAGE
from store import sentences, vectors
from store.errors import InvalidInputError

if TYPE_CHECKING:
    from store.store import Store

TIER_SHARES = (0.10, 0.35, 0.55)
TRUNCATED = "... (truncated)"
RETRIEVE_K = 5  # memories retrieved for the query
MIN_SIMILARITY = 0.35  # a memory found only semantically must be at least this close (all-MiniLM-L6-v2 scale)
RETRIEVE_CHARS = 1000  # of a long latest message, the start is what keyword retrieval reads
MIN_PARTIAL = 24  # a condensed message is cut to fit only when at least this much room is left
PAGE = 64  # messages read per query, walking back from the end


@dataclass(frozen=True, slots=True)
class TokenStats:
    system: int  # the system prompt and the 2-token reply primer
    memories: int
    summary: int  # summary and topics
    condensed: int
    recent: int
    total: int
    budget: int

    def to_json(self) -> dict[str, int]:
        return {"system": self.system, "memories": self.memories, "summary": self.summary,
                "condensed": self.condensed, "recent": self.recent, "total": self.total, "budget": self.budget}


@dataclass(frozen=True, slots=True)
class ContextMetadata:
    included_messages: int
    summarized_messages: int  # the thread's messages left out (the summary stands for them)
    used_summary: bool
    retrieved_memories: int
    pinned_memories: int

    def to_json(self) -> dict[str, Any]:
        return {"included_messages": self.included_messages, "summarized_messages": self.summarized_messages,
                "used_summary": self.used_summary, "retrieved_memories": self.retrieved_memories,
                "pinned_memories": self.pinned_memories}


@dataclass(frozen=True, slots=True)
class ContextResult:
    messages: list[dict[str, str]]
    token_stats: TokenStats
    metadata: ContextMetadata
    available: int  # budget after the safety margin and the output reserve
    memory_ids: list[int] = field(default_factory=list)  # pinned first, then retrieved
    condensed_seqs: list[int] = field(default_factory=list)
    recent_seqs: list[int] = field(default_factory=list)
    truncated_seqs: list[int] = field(default_factory=list)  # messages cut to fit

    def to_json(self) -> dict[str, Any]:
        return {"messages": self.messages, "token_stats": self.token_stats.to_json(),
                "metadata": self.metadata.to_json()}


@dataclass(slots=True)
class _Msg:
    seq: int
    role: str
    content: str
    cost: int  # 4 + role + content tokens


class _Counter:
    """Token costs of messages, with the per-role overhead computed once."""

    def __init__(self, store: Store) -> None:
        self.tokens = store.tokens
        self._role: dict[str, int] = {}

    def overhead(self, role: str) -> int:
        if role not in self._role:
            self._role[role] = TOKENS_PER_MESSAGE + self.tokens.count(role)
        return self._role[role]

    def cost(self, role: str, content: str, content_tokens: int | None = None) -> int:
        return self.overhead(role) + (self.tokens.count(content) if content_tokens is None else content_tokens)

    def fit(self, role: str, content: str, room: int) -> tuple[str, int] | None:
        """`content` cut (with the truncation marker) so the message costs at most `room`, or None."""
        marker = "\n" + TRUNCATED
        keep = room - self.overhead(role) - self.tokens.count(marker)
        while keep > 0:
            # A cut inside a multi-byte character decodes as U+FFFD: drop it.
            text = self.tokens.truncate(content, keep).rstrip("\ufffd").rstrip() + marker
            cost = self.cost(role, text)
            if cost <= room:
                return text, cost
            keep -= max(1, cost - room)
        return None


def condense(content: str, role: str, tool_chars: int) -> str:
    """A message as tier 2 shows it: no reasoning blocks; tool output cut to `tool_chars` characters."""
    if role == "tool":
        return content if len(content) <= tool_chars else content[:tool_chars] + TRUNCATED
    return sentences.strip_reasoning(content).strip() if sentences.has_reasoning(content) else content


def _backwards(store: Store, thread_id: int, before_seq: int) -> Iterator[tuple[int, str, str, int]]:
    """(seq, role, content, token_count) from newest to oldest, read a page at a time."""
    while True:
        rows = list(store.con.execute(
            "SELECT seq, role, content, token_count FROM messages WHERE thread_id = ? AND seq < ? "
            "ORDER BY seq DESC LIMIT ?", (thread_id, before_seq, PAGE)))
        yield from ((int(s), str(r), str(c), int(t)) for s, r, c, t in rows)
        if len(rows) < PAGE:
            return
        before_seq = int(rows[-1][0])


def _query_vector(store: Store, query: str | None, message_id: int | None) -> np.ndarray | None:
    """The query's embedding; for the latest user message, its stored chunk vectors (no model call)."""
    if store.vector_problem is not None or not vectors.tables_exist(store.con):
        return None
    if query is None and message_id is not None:
        vecs = []
        for (chunk_id,) in store.con.execute("SELECT id FROM message_chunks WHERE message_id = ?", (message_id,)):
            row = store.con.execute("SELECT embedding FROM vec_chunks WHERE chunk_id = ?", (chunk_id,)).fetchone()
            if row is not None:
                vecs.append(np.frombuffer(row[0], dtype=np.float32))
        if vecs:
            mean = np.mean(vecs, axis=0)
            return np.asarray(mean / max(float(np.linalg.norm(mean)), 1e-12), dtype=np.float32)
    return None


def retrieve_memories(store: Store, text: str, *, exclude: set[int], k: int = RETRIEVE_K,
                      qvec: np.ndarray | None = None) -> list[tuple[int, str, str]]:
    """(id, category, content) of up to k active memories relevant to `text`, best first.

    Keyword and semantic candidates come from the search engine and are fused the same way; a memory
    found only semantically must reach MIN_SIMILARITY, so an unrelated memory is not pulled in just
    because something has to be nearest.
    """
    from store.search import Filters, Fusion, fuse

    kinds = ("memory",)
    depth = k * 4
    kw = store.keyword_candidates(text, kinds, Filters(), depth)
    if qvec is None and store.vector_problem is None and vectors.tables_exist(store.con) and text.strip():
        qvec = store.embed_query(text)
    sem = [(key, s) for key, s, _ in store.semantic_candidates(qvec, kinds, Filters(), depth)] \
        if qvec is not None else []
    sims = dict(sem)
    fused = fuse(kw, sem, Fusion(rrf_k=store.config.search.rrf_k), text)
    chosen: list[int] = []
    for key, _, matched in fused:
        mid = key[1]
        if mid in exclude:
            continue
        sim = sims.get(key)
        keyword_hit = "keyword" in matched
        if sem and not ((sim is not None and sim >= MIN_SIMILARITY)
                        or (keyword_hit and sim is not None and sim >= MIN_SIMILARITY / 2)):
            continue
        if not sem and not keyword_hit:
            continue
        chosen.append(mid)
        if len(chosen) >= k:
            break
    if not chosen:
        return []
    rows = {int(r[0]): (str(r[1]), str(r[2])) for r in store.con.execute(
        "SELECT id, category, content FROM long_term_memories WHERE deleted_at IS NULL "
        "AND id IN (SELECT value FROM json_each(?))", (str(chosen),))}
    return [(mid, *rows[mid]) for mid in chosen if mid in rows]


def _memory_text(lines: list[str]) -> str:
    return "[Long-term memories about the user]\n" + "\n".join(lines)


def _memory_line(category: str, content: str, pinned: bool) -> str:
    return f"- ({category}{', pinned' if pinned else ''}) {' '.join(content.split())}"


def _summary_text(summary: str, topics: list[str]) -> str:
    parts = []
    if summary.strip():
        parts.append("[Conversation summary]\n" + summary.strip())
    if topics:
        parts.append("[Topics]: " + ", ".join(topics))
    return "\n\n".join(parts)


def _pinned(store: Store) -> list[tuple[int, str, str]]:
    return [(int(i), str(c), str(t)) for i, c, t in store.con.execute(
        "SELECT id, category, content FROM long_term_memories WHERE deleted_at IS NULL AND pinned "
        "ORDER BY importance DESC, updated_at DESC, id")]


def _has_unpinned(store: Store) -> bool:
    return store.con.execute(
        "SELECT 1 FROM long_term_memories WHERE deleted_at IS NULL AND NOT pinned LIMIT 1").fetchone() is not None


class _MemoryBlock:
    """The tier-1 memories message, grown line by line within a cap, costed exactly."""

    def __init__(self, counter: _Counter) -> None:
        self.counter = counter
        self.lines: list[str] = []
        self.ids: list[int] = []
        self.cost = 0

    def add(self, memory_id: int, line: str, cap: int) -> bool:
        cost = self.counter.cost("system", _memory_text([*self.lines, line]))
        if cost > cap:
            return False
        self.lines.append(line)
        self.ids.append(memory_id)
        self.cost = cost
        return True

    @property
    def text(self) -> str:
        return _memory_text(self.lines) if self.lines else ""


def _summary_block(store: Store, counter: _Counter, thread_id: int, room: int) -> tuple[str, int, bool]:
    """(text, cost, used_summary) of the summary-and-topics message that fits in `room`."""
    summary = store.get_summary(thread_id)
    content = summary.content if summary is not None else ""
    topics = [t for t, _ in store.get_topics(thread_id, 12)]
    lines = [ln for ln in content.splitlines() if ln.strip()]
    for with_topics in (True, False):
        shown = list(lines)
        while True:
            text = _summary_text("\n".join(shown), topics if with_topics else [])
            if not text:
                break
            cost = counter.cost("system", text)
            if cost <= room:
                return text, cost, bool(shown)
            if not shown:
                break
            shown.pop(0)  # the oldest part of the summary goes first
    return "", 0, False


def build_context(store: Store, thread_id: int, budget: int, query: str | None = None,
                  system: str | None = None, output_reserve: int | None = None, *,
                  touch: bool = True) -> ContextResult:
    """The messages to send a chat model for `thread_id` within `budget` tokens (see the module doc).

    `query`: what to retrieve memories for (default: the latest user message). `touch`: count the
    included memories as accessed (the TUI's preview passes False).
    """
    thread = store.get_thread(thread_id)
    cfg = store.config.context
    reserve = cfg.output_reserve if output_reserve is None else int(output_reserve)
    margin = float(cfg.safety_margin)
    if isinstance(budget, bool) or int(budget) <= 0:
        raise InvalidInputError(f"budget must be a positive number of tokens, got {budget}")
    if reserve < 0:
        raise InvalidInputError(f"output reserve must be 0 or more, got {reserve}")
    if not 0 <= margin < 1:
        raise InvalidInputError(f"context.safety_margin must be at least 0 and below 1, got {margin}")
    budget = int(budget)
    limit = math.floor(budget * (1 - margin)) - reserve
    counter = _Counter(store)
    primer = TOKENS_PER_CONVERSATION

    row = store.con.execute("SELECT seq, role, content, token_count FROM messages WHERE thread_id = ? "
                            "ORDER BY seq DESC LIMIT 1", (thread_id,)).fetchone()
    need = primer
    if row is not None:
        marker = counter.tokens.count("\n" + TRUNCATED)
        need += min(counter.cost(row[1], row[2], row[3]), counter.overhead(row[1]) + marker + 1)
    if limit < need:
        minimum = math.ceil((need + reserve) / (1 - margin))
        raise InvalidInputError(
            f"a budget of {budget} tokens is too small for thread {thread_id}: with the {margin:.0%} safety "
            f"margin and a {reserve}-token output reserve it needs at least {minimum}")

    truncated: list[int] = []
    last: _Msg | None = None
    if row is not None:
        seq, role, content, tc = int(row[0]), str(row[1]), str(row[2]), int(row[3])
        cost = counter.cost(role, content, tc)
        if primer + cost > limit:
            content, cost = counter.fit(role, content, limit - primer) or (TRUNCATED, counter.cost(role, TRUNCATED))
            truncated.append(seq)
        last = _Msg(seq, role, content, cost)
    last_cost = last.cost if last else 0

    sys_text, sys_cost = "", 0
    if system and system.strip():
        room = limit - primer - last_cost
        if counter.cost("system", system) <= room:
            sys_text, sys_cost = system, counter.cost("system", system)
        else:
            sys_text, sys_cost = counter.fit("system", system, room) or ("", 0)
    pool = limit - primer - sys_cost
    b1, b2 = int(pool * TIER_SHARES[0]), int(pool * TIER_SHARES[1])
    b3 = pool - b1 - b2
    t1_cap = min(b1, pool - last_cost)

    # Tier 1: pinned memories first (up to everything but the last message), then retrieved, then summary.
    block = _MemoryBlock(counter)
    for mid, category, content in _pinned(store):
        if not block.add(mid, _memory_line(category, content, True), pool - last_cost):
            break
    n_pinned = len(block.ids)
    retrieved: list[tuple[int, str, str]] = []
    if block.cost < t1_cap and _has_unpinned(store):
        text, message_id = query, None
        if not (query and query.strip()):
            urow = store.con.execute("SELECT id, content FROM messages WHERE thread_id = ? AND role = 'user' "
                                     "ORDER BY seq DESC LIMIT 1", (thread_id,)).fetchone()
            text, message_id = (str(urow[1])[:RETRIEVE_CHARS], int(urow[0])) if urow else (None, None)
        if text and text.strip():
            qvec = _query_vector(store, None if message_id is not None else text, message_id)
            retrieved = retrieve_memories(store, text, exclude=set(block.ids), qvec=qvec)
    for mid, category, content in retrieved:
        block.add(mid, _memory_line(category, content, False), max(block.cost, t1_cap))
    overhead = max(counter.overhead(r) for r in ("user", "assistant", "tool", "system"))
    whole_thread = thread.token_count + thread.message_count * overhead
    sum_text, sum_cost, used_summary = "", 0, False
    if whole_thread > pool - block.cost and t1_cap - block.cost > 0:
        sum_text, sum_cost, used_summary = _summary_block(store, counter, thread_id, t1_cap - block.cost)
    used1 = block.cost + sum_cost

    # Tier 3: the last messages verbatim, newest first; the last one is always there.
    b3_cap = min(b3 + max(0, b1 - used1), pool - used1)
    recent: list[_Msg] = [last] if last else []
    used3 = last_cost
    walk = _backwards(store, thread_id, last.seq) if last else iter(())
    pending = None
    for seq, role, content, tc in walk:
        cost = counter.cost(role, content, tc)
        if len(recent) >= cfg.recent_messages or used3 + cost > b3_cap:
            pending = (seq, role, content, tc)
            break
        recent.append(_Msg(seq, role, content, cost))
        used3 += cost

    # Tier 2: older messages condensed, newest first, until the rest of the pool is spent.
    b2_cap = pool - used1 - used3
    condensed: list[_Msg] = []
    used2 = 0
    older = walk if pending is None else _chain(pending, walk)
    for seq, role, content, tc in older:
        short = condense(content, role, cfg.tool_output_chars)
        cost = counter.cost(role, short, tc if short is content else None)
        if used2 + cost <= b2_cap:
            condensed.append(_Msg(seq, role, short, cost))
            used2 += cost
            continue
        if b2_cap - used2 >= MIN_PARTIAL:
            fitted = counter.fit(role, short, b2_cap - used2)
            if fitted is not None:
                condensed.append(_Msg(seq, role, fitted[0], fitted[1]))
                used2 += fitted[1]
                truncated.append(seq)
        break

    messages: list[dict[str, str]] = []
    if sys_text:
        messages.append({"role": "system", "content": sys_text})
    if block.lines:
        messages.append({"role": "system", "content": block.text})
    if sum_text:
        messages.append({"role": "system", "content": sum_text})
    included = condensed[::-1] + recent[::-1]
    messages += [{"role": m.role, "content": m.content} for m in included]
    stats = TokenStats(primer + sys_cost, block.cost, sum_cost, used2, used3,
                       primer + sys_cost + block.cost + sum_cost + used2 + used3, budget)
    meta = ContextMetadata(len(included), max(0, thread.message_count - len(included)), used_summary,
                           len(block.ids) - n_pinned, n_pinned)
    if touch and block.ids:
        store.touch_memories(block.ids)
    return ContextResult(messages, stats, meta, limit, list(block.ids), [m.seq for m in condensed[::-1]],
                         [m.seq for m in recent[::-1]], sorted(truncated))


def _chain(first: tuple[int, str, str, int], rest: Iterator[tuple[int, str, str, int]]
           ) -> Iterator[tuple[int, str, str, int]]:
    yield first
    yield from rest
