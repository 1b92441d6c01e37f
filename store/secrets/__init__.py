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

from typing import TYPE_CHECKING

from store.lazy import exports
from store.secrets.detector import MARKER_RE, Finding, find_secrets, marker, redact, warm

if TYPE_CHECKING:
    from store.secrets.database import RedactReport, ScanReport, redact_database, scan
    from store.secrets.rows import redact_tree

# Whole-database scans and row redaction pull in the Store: handed out on first use (store/lazy.py).
_WHERE = {
    "RedactReport": "store.secrets.database",
    "ScanReport": "store.secrets.database",
    "redact_database": "store.secrets.database",
    "scan": "store.secrets.database",
    "redact_tree": "store.secrets.rows",
}


def redact_text(text: str) -> str:
    """`text` with every detected secret replaced by its marker (the same text when there is none)."""
    return redact(text)[0]


__all__ = [
    "MARKER_RE",
    "Finding",
    "RedactReport",
    "ScanReport",
    "find_secrets",
    "marker",
    "redact",
    "redact_database",
    "redact_text",
    "redact_tree",
    "scan",
    "warm",
]

__getattr__, __dir__ = exports(__name__, _WHERE, globals())
