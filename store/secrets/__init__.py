"""Secrets never stored in the clear (SPEC "Privacy"): find API keys, tokens, passwords, private keys and
card numbers in text and replace each with a marker naming its kind, `[secret: openai-key]`.

    from store.secrets import redact_text, find_secrets
    redact_text("OPENAI_API_KEY=sk-proj-…")   # 'OPENAI_API_KEY=[secret: openai-key]'

The detector (store.secrets.detector) is detect-secrets' plugins and filters plus the formats it lacks
(store.secrets.formats) and the secrets known by their name or place (store.secrets.named). Where it
is applied: every text entering chat.db passes Store.redact (store.redaction) when `[privacy] redact =
"store"` (the default); every text leaving for an assistant or an export passes `redact_text` whatever
the setting. detect-secrets' patterns and filters are kept in store.secrets.snapshot (tests check them
against the installed package), so redacting never imports it.
"""

from __future__ import annotations

from store.secrets.detector import MARKER_RE, Finding, find_secrets, marker, redact, warm


def redact_text(text: str) -> str:
    """`text` with every detected secret replaced by its marker (the same text when there is none)."""
    return redact(text)[0]


__all__ = ["MARKER_RE", "Finding", "find_secrets", "marker", "redact", "redact_text", "warm"]
