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
Unused budget flows on: tier 1's leftover to tier 3, tier 3's (it stops at 10 messages) to tier 2, so
nothing is wasted while the verbatim tail keeps its 55% cap. Tier 3 is chosen before tier 2 because tier
2 is "the messages before tier 3". The budget the tiers share is `budget * (1 - safety_margin) -
output_reserve` minus the system prompt. Tier 1's pieces live in `store.context.tier1`.

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

from embeddings.tokens import TOKENS_PER_CONVERSATION
from store.context.tier1 import (
    TRUNCATED,
    Costs,
    MemoryBlock,
    has_unpinned,
    memory_line,
    pinned_memories,
    query_vector,
    retrieve_memories,
    summary_block,
)
from store.errors import InvalidInputError
from store.extract import sentences
from store.secrets import redact_text

if TYPE_CHECKING:
    from store.store import Store

TIER_SHARES = (0.10, 0.35, 0.55)
RETRIEVE_CHARS = (
    400  # of a long latest message, the start is what keyword retrieval reads (semantic: all of it)
)
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
        return {
            "system": self.system,
            "memories": self.memories,
            "summary": self.summary,
            "condensed": self.condensed,
            "recent": self.recent,
            "total": self.total,
            "budget": self.budget,
        }


@dataclass(frozen=True, slots=True)
class ContextMetadata:
    included_messages: int
    summarized_messages: int  # the thread's messages left out (the summary stands for them)
    used_summary: bool
    retrieved_memories: int
    pinned_memories: int

    def to_json(self) -> dict[str, Any]:
        return {
            "included_messages": self.included_messages,
            "summarized_messages": self.summarized_messages,
            "used_summary": self.used_summary,
            "retrieved_memories": self.retrieved_memories,
            "pinned_memories": self.pinned_memories,
        }


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
        return {
            "messages": self.messages,
            "token_stats": self.token_stats.to_json(),
            "metadata": self.metadata.to_json(),
        }


@dataclass(slots=True)
class _Msg:
    seq: int
    role: str
    content: str
    cost: int  # 4 + role + content tokens


def condense(content: str, role: str, tool_chars: int) -> str:
    """A message as tier 2 shows it: no reasoning blocks; tool output cut to `tool_chars` characters."""
    out = sentences.strip_reasoning(content).strip() if sentences.has_reasoning(content) else content
    if role == "tool" and len(out) > tool_chars:
        out = out[:tool_chars] + TRUNCATED
    return out


def _outbound(content: str, token_count: int) -> tuple[str, int | None]:
    """A message as the context sends it: detected secrets replaced (its stored count then no longer
    applies: None, counted again)."""
    out = redact_text(content)
    return (content, token_count) if out is content else (out, None)


def _backwards(store: Store, thread_id: int, before_seq: int) -> Iterator[tuple[int, str, str, int | None]]:
    """(seq, role, content, token_count) from newest to oldest, read a page at a time."""
    while True:
        rows = list(
            store.con.execute(
                "SELECT seq, role, content, token_count FROM messages WHERE thread_id = ? AND seq < ? "
                "ORDER BY seq DESC LIMIT ?",
                (thread_id, before_seq, PAGE),
            )
        )
        yield from ((int(s), str(r), *_outbound(str(c), int(t))) for s, r, c, t in rows)
        if len(rows) < PAGE:
            return
        before_seq = int(rows[-1][0])


def build_context(
    store: Store,
    thread_id: int,
    budget: int,
    query: str | None = None,
    system: str | None = None,
    output_reserve: int | None = None,
    *,
    touch: bool = True,
) -> ContextResult:
    """The messages to send a chat model for `thread_id` within `budget` tokens (see the module doc).

    `query`: what to retrieve memories for (default: the latest user message). `touch`: count the
    included memories as accessed (the TUI's preview passes False).

    The steps, each a function below: the budget after margin and reserve (refused when even the last
    message cannot fit), the last message, the system prompt, then tier 1, tier 3 and tier 2 in that
    order (each takes what the earlier ones left), and the result with its accounting.
    """
    thread = store.get_thread(thread_id)
    counter = Costs(store)
    plan = _plan(store, budget, output_reserve)
    row = store.con.execute(
        "SELECT seq, role, content, token_count FROM messages WHERE thread_id = ? ORDER BY seq DESC LIMIT 1",
        (thread_id,),
    ).fetchone()
    _check_room(counter, plan, row, thread_id)
    truncated: list[int] = []
    last = _last_message(counter, plan, row, truncated)
    last_cost = last.cost if last else 0
    sys_text, sys_cost = _system_prompt(counter, system, plan.limit - plan.primer - last_cost)
    pool = plan.limit - plan.primer - sys_cost
    b1, b2 = int(pool * TIER_SHARES[0]), int(pool * TIER_SHARES[1])
    b3 = pool - b1 - b2
    t1 = _tier1(store, counter, thread_id, query, pool, last_cost, min(b1, pool - last_cost))
    overhead = max(counter.overhead(r) for r in ("user", "assistant", "tool", "system"))
    whole_thread = thread.token_count + thread.message_count * overhead
    if whole_thread > pool - t1.block.cost and t1.cap - t1.block.cost > 0:
        t1.summary = summary_block(store, counter, thread_id, t1.cap - t1.block.cost)
    used1 = t1.block.cost + t1.summary[1]
    recent, used3, older = _tier3(
        store, counter, thread_id, last, min(b3 + max(0, b1 - used1), pool - used1), store.config.context
    )
    condensed, used2 = _tier2(counter, older, pool - used1 - used3, store.config.context, truncated)
    if touch and t1.block.ids:
        store.touch_memories(t1.block.ids)
    return _result(plan, thread.message_count, (sys_text, sys_cost), t1, condensed, recent, sorted(truncated))


@dataclass(frozen=True, slots=True)
class _Plan:
    budget: int
    reserve: int
    margin: float
    limit: int  # the budget after the safety margin and the output reserve
    primer: int = TOKENS_PER_CONVERSATION


def _plan(store: Store, budget: int, output_reserve: int | None) -> _Plan:
    """The budget the messages share, after checking the caller's numbers and the configuration's."""
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
    return _Plan(budget, reserve, margin, math.floor(budget * (1 - margin)) - reserve)


def _check_room(counter: Costs, plan: _Plan, row: Any, thread_id: int) -> None:
    """Refuse a budget too small for the primer and (at least the truncation marker of) the last
    message, naming the smallest budget that would do."""
    need = plan.primer
    if row is not None:
        marker = counter.tokens.count("\n" + TRUNCATED)
        need += min(counter.cost(row[1], row[2], row[3]), counter.overhead(row[1]) + marker + 1)
    if plan.limit >= need:
        return
    minimum = math.ceil((need + plan.reserve) / (1 - plan.margin))
    while math.floor(minimum * (1 - plan.margin)) - plan.reserve < need:  # float rounding
        minimum += 1
    raise InvalidInputError(
        f"a budget of {plan.budget} tokens is too small for thread {thread_id}: with the {plan.margin:.0%} "
        f"safety margin and a {plan.reserve}-token output reserve it needs at least {minimum}"
    )


def _last_message(counter: Costs, plan: _Plan, row: Any, truncated: list[int]) -> _Msg | None:
    """The thread's last message, always sent: truncated when it alone exceeds the budget."""
    if row is None:
        return None
    seq, role = int(row[0]), str(row[1])
    content, tc = _outbound(str(row[2]), int(row[3]))
    cost = counter.cost(role, content, tc)
    if plan.primer + cost > plan.limit:
        content, cost = counter.fit(role, content, plan.limit - plan.primer) or (
            TRUNCATED,
            counter.cost(role, TRUNCATED),
        )
        truncated.append(seq)
    return _Msg(seq, role, content, cost)


def _system_prompt(counter: Costs, system: str | None, room: int) -> tuple[str, int]:
    """The caller's system prompt, cut to `room` when it does not fit (empty when nothing fits)."""
    if not (system and system.strip()):
        return "", 0
    if counter.cost("system", system) <= room:
        return system, counter.cost("system", system)
    return counter.fit("system", system, room) or ("", 0)


@dataclass(slots=True)
class _Tier1:
    block: MemoryBlock
    pinned: int  # the block's first `pinned` memories are the pinned ones
    cap: int
    summary: tuple[str, int, bool] = ("", 0, False)  # text, cost, used


def _tier1(
    store: Store, counter: Costs, thread_id: int, query: str | None, pool: int, last_cost: int, cap: int
) -> _Tier1:
    """Pinned memories first (up to everything but the last message), then retrieved ones up to `cap`;
    the caller adds the summary when some messages will be left out."""
    block = MemoryBlock(counter)
    for mid, category, content in pinned_memories(store):
        if not block.add(mid, memory_line(category, content, True), pool - last_cost):
            break
    n_pinned = len(block.ids)
    if block.cost < cap and has_unpinned(store):
        for mid, category, content in _retrieved(store, thread_id, query, set(block.ids)):
            block.add(mid, memory_line(category, content, False), max(block.cost, cap))
    return _Tier1(block, n_pinned, cap)


def _retrieved(
    store: Store, thread_id: int, query: str | None, exclude: set[int]
) -> list[tuple[int, str, str]]:
    """Memories retrieved for `query`, or for the latest user message (its stored vector reused)."""
    text, message_id = query, None
    if not (query and query.strip()):
        urow = store.con.execute(
            "SELECT id, content FROM messages WHERE thread_id = ? AND role = 'user' "
            "ORDER BY seq DESC LIMIT 1",
            (thread_id,),
        ).fetchone()
        text, message_id = (str(urow[1])[:RETRIEVE_CHARS], int(urow[0])) if urow else (None, None)
    if not (text and text.strip()):
        return []
    qvec = query_vector(store, message_id) if message_id is not None else None
    return retrieve_memories(store, text, exclude=exclude, qvec=qvec)


_Row = tuple[int, str, str, int | None]


def _tier3(
    store: Store, counter: Costs, thread_id: int, last: _Msg | None, cap: int, cfg: Any
) -> tuple[list[_Msg], int, Iterator[_Row]]:
    """The last messages verbatim, newest first (the last one always), within `cap`; returns them, their
    cost, and the walk back through the older messages, starting at the first one that did not fit."""
    recent: list[_Msg] = [last] if last else []
    used = last.cost if last else 0
    walk = _backwards(store, thread_id, last.seq) if last else iter(())
    for seq, role, content, tc in walk:
        cost = counter.cost(role, content, tc)
        if len(recent) >= cfg.recent_messages or used + cost > cap:
            return recent, used, _chain((seq, role, content, tc), walk)
        recent.append(_Msg(seq, role, content, cost))
        used += cost
    return recent, used, walk


def _tier2(
    counter: Costs, older: Iterator[_Row], cap: int, cfg: Any, truncated: list[int]
) -> tuple[list[_Msg], int]:
    """Older messages condensed, newest first, until `cap` is spent (the last one cut to fit when at
    least MIN_PARTIAL tokens are left)."""
    condensed: list[_Msg] = []
    used = 0
    for seq, role, content, tc in older:
        short = condense(content, role, cfg.tool_output_chars)
        cost = counter.cost(role, short, tc if short is content else None)
        if used + cost <= cap:
            condensed.append(_Msg(seq, role, short, cost))
            used += cost
            continue
        if cap - used >= MIN_PARTIAL:
            fitted = counter.fit(role, short, cap - used)
            if fitted is not None:
                condensed.append(_Msg(seq, role, fitted[0], fitted[1]))
                used += fitted[1]
                truncated.append(seq)
        break
    return condensed, used


def _result(
    plan: _Plan,
    message_count: int,
    system: tuple[str, int],
    t1: _Tier1,
    condensed: list[_Msg],
    recent: list[_Msg],
    truncated: list[int],
) -> ContextResult:
    """The message list in order (system prompt, memories, summary, condensed, recent) and its accounting."""
    (sys_text, sys_cost), (sum_text, sum_cost, used_summary) = system, t1.summary
    messages: list[dict[str, str]] = []
    if sys_text:
        messages.append({"role": "system", "content": sys_text})
    if t1.block.lines:
        messages.append({"role": "system", "content": t1.block.text})
    if sum_text:
        messages.append({"role": "system", "content": sum_text})
    included = condensed[::-1] + recent[::-1]
    messages += [{"role": m.role, "content": m.content} for m in included]
    used2, used3 = sum(m.cost for m in condensed), sum(m.cost for m in recent)
    head = plan.primer + sys_cost
    stats = TokenStats(
        head,
        t1.block.cost,
        sum_cost,
        used2,
        used3,
        head + t1.block.cost + sum_cost + used2 + used3,
        plan.budget,
    )
    meta = ContextMetadata(
        len(included),
        max(0, message_count - len(included)),
        used_summary,
        len(t1.block.ids) - t1.pinned,
        t1.pinned,
    )
    return ContextResult(
        messages,
        stats,
        meta,
        plan.limit,
        list(t1.block.ids),
        [m.seq for m in condensed[::-1]],
        [m.seq for m in recent[::-1]],
        truncated,
    )


def _chain(
    first: tuple[int, str, str, int | None], rest: Iterator[tuple[int, str, str, int | None]]
) -> Iterator[tuple[int, str, str, int | None]]:
    yield first
    yield from rest
