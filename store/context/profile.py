"""The session-start profile: what an assistant should know about the user before any thread exists.

Why apart from the context builder (store.context.builder): a new session has no thread, so there is
nothing to retrieve for and no messages to keep. The profile is memories only, taken by standing: every
pinned memory first (the user said "always include this"), then the most important, then the most used
(`access_count`), then the most recently changed. Each memory that fits is taken; one that does not is
skipped and the next, shorter one may still fit, but an unpinned memory can never push out a pinned one,
because all pinned memories are considered before any other.

Budget: the profile text (a header line, then one "- (category) text" line per memory, the same lines the
context builder's memories message uses) is counted with the store's tiktoken counter and never exceeds
the budget. Lines are costed one by one: the text is pieces that each end in a newline, and the next
starts with "- ", where tiktoken's pre-tokeniser always splits, so the pieces' counts add up exactly; the
finished text is counted whole once more and trimmed from the end if it is over, so the bound holds for any
counter, estimates included.

Memories in the profile count as accessed (README "MCP server": what counts as an access), unless
`touch=False`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from store.context.tier1 import memory_line
from store.errors import InvalidInputError
from store.records import Memory
from store.truth.current import current_memories

if TYPE_CHECKING:
    from store.store import Store

HEADER = "[Long-term memories about the user]"
MAX_SKIPS = 2000  # stop looking once this many memories in a row did not fit (the rest are no likelier to)


@dataclass(frozen=True, slots=True)
class Profile:
    text: str  # what to put in the session's system prompt ("" when nothing fits or nothing is stored)
    tokens: int  # of `text`, by the store's token counter; never more than `budget`
    budget: int
    memories: list[Memory] = field(default_factory=list)  # in the order of `text`: pinned first
    pinned_left_out: int = 0  # pinned memories that did not fit
    left_out: int = 0  # active memories not included (pinned or not)

    @property
    def pinned(self) -> int:
        return sum(1 for m in self.memories if m.pinned)

    def to_json(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "tokens": self.tokens,
            "budget": self.budget,
            "pinned": self.pinned,
            "pinned_left_out": self.pinned_left_out,
            "left_out": self.left_out,
            "memories": [m.to_json() for m in self.memories],
        }


def _by_standing(store: Store) -> Iterator[Memory]:
    # Only current memories (store.truth.current): a superseded one is not who the user is now.
    return current_memories(store, order="standing")


def _text(chosen: list[tuple[Memory, str]]) -> str:
    return "\n".join([HEADER, *(line for _, line in chosen)]) if chosen else ""


def build_profile(store: Store, budget: int, *, touch: bool = True) -> Profile:
    """The profile within `budget` tokens (see the module doc). `touch`: count the included memories as
    accessed (a preview passes False)."""
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 0:
        raise InvalidInputError(f"budget must be 0 or more tokens, got {budget!r}")
    tokens = store.tokens
    chosen: list[tuple[Memory, str]] = []
    used = tokens.count(HEADER + "\n")  # the text so far, each piece ending in a newline
    skips = 0
    for m in _by_standing(store):
        line = memory_line(m.category, m.content, m.pinned)
        if used + tokens.count(line) <= budget:  # the text if this line were the last
            chosen.append((m, line))
            used += tokens.count(line + "\n")
            skips = 0
        else:
            skips += 1
        if used >= budget or (skips >= MAX_SKIPS and not m.pinned):
            break  # no line costs less than one token; pinned ones are all looked at before this
    total, total_pinned = store.count_memories()
    text = _text(chosen)
    count = tokens.count(text)
    while chosen and count > budget:  # only when costs did not add up (estimated counts)
        chosen.pop()
        text = _text(chosen)
        count = tokens.count(text)
    memories = [m for m, _ in chosen]
    n_pinned = sum(1 for m in memories if m.pinned)
    if touch and memories:
        store.touch_memories([m.id for m in memories])
    return Profile(
        text,
        count,
        budget,
        memories,
        pinned_left_out=total_pinned - n_pinned,
        left_out=total - len(memories),
    )
