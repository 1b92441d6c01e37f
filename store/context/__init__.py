"""Building the message list a chat model should see, within a token budget.

- builder.py: build_context and the tiers' budget.
- tier1.py: tier 1 (pinned and retrieved memories, the summary and topics).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from store.lazy import exports

if TYPE_CHECKING:
    from store.context.builder import ContextMetadata, ContextResult, TokenStats, build_context
    from store.context.profile import Profile, build_profile

_WHERE = {
    "ContextMetadata": "store.context.builder",
    "ContextResult": "store.context.builder",
    "TokenStats": "store.context.builder",
    "build_context": "store.context.builder",
    "Profile": "store.context.profile",
    "build_profile": "store.context.profile",
}

__all__ = ["ContextMetadata", "ContextResult", "Profile", "TokenStats", "build_context", "build_profile"]

__getattr__, __dir__ = exports(__name__, _WHERE, globals())
