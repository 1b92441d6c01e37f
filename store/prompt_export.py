"""`memapp export --format prompt`: memories as a block to paste into another assistant's memory.

Why a token budget: the places that take such a block (Claude's "import memory", ChatGPT's custom
instructions, a system prompt) are small, and a block cut off by the assistant loses whatever came
last. So the block is built to fit: pinned memories first, then the most important (then most used,
most recently updated), each whole or not at all, grouped by category under plain headings; the whole
block is counted with the same tokenizer as everything else (tiktoken, exact when its file is present)
and never exceeds the budget. What did not fit is counted, so the person knows what was left out.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from store.records import CATEGORIES, Memory, iso, now
from store.store import Store
from store.truth.current import current_memories

DEFAULT_BUDGET = 1500
_HEADINGS = {"preference": "Preferences", "project": "Projects", "skill": "Skills", "fact": "About me"}
_INTRO = "Here is what I'd like you to remember about me (exported from memapp on {day}):"


@dataclass(frozen=True)
class PromptBlock:
    text: str
    tokens: int
    budget: int
    included: list[Memory]
    left_out: int
    exact: bool  # whether tokens were counted exactly (tiktoken) or estimated

    def to_json(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "tokens": self.tokens,
            "budget": self.budget,
            "tokens_exact": self.exact,
            "included": [m.id for m in self.included],
            "left_out": self.left_out,
            "exported_at": iso(now()),
        }


def ranked_memories(store: Store) -> list[Memory]:
    """Every current memory (store.truth.current: never a superseded one), best first: pinned,
    importance, times used, last updated; detected secrets replaced (the block goes to another
    assistant: docs/guide/privacy.md)."""
    memories = list(current_memories(store))
    return sorted(memories, key=lambda m: (not m.pinned, -m.importance, -m.access_count, -m.updated_at, m.id))


def render(memories: list[Memory], day: str) -> str:
    """The block for these memories: an intro line, then one bulleted section per category."""
    lines = [_INTRO.format(day=day)]
    for category in CATEGORIES:
        chosen = [m for m in memories if m.category == category]
        if chosen:
            lines += ["", f"{_HEADINGS[category]}:"]
            lines += ["- " + " ".join(m.content.split()) for m in chosen]
    return "\n".join(lines) + "\n"


def prompt_block(store: Store, budget: int = DEFAULT_BUDGET) -> PromptBlock:
    """The best memories that fit in `budget` tokens, as one paste-ready block."""
    if budget < 1:
        raise ValueError("the budget must be at least 1 token")
    day = dt.datetime.now(tz=dt.UTC).date().isoformat()
    ranked = ranked_memories(store)
    count = store.tokens.count
    chosen: list[Memory] = []
    # Greedy by rank with a running estimate (line tokens), then the exact count of the rendered block
    # decides: a memory that does not fit is skipped, a shorter one after it may still fit.
    used = count(render([], day))
    for m in ranked:
        line = count("- " + " ".join(m.content.split()) + "\n")
        heading = (
            0 if any(c.category == m.category for c in chosen) else count(f"\n{_HEADINGS[m.category]}:\n")
        )
        if used + line + heading > budget:
            continue
        chosen.append(m)
        used += line + heading
    text = render(chosen, day)
    while chosen and count(text) > budget:  # the estimate was short (tokens merged across lines)
        chosen.pop()
        text = render(chosen, day)
    return PromptBlock(text, count(text), budget, chosen, len(ranked) - len(chosen), store.tokens.exact)
