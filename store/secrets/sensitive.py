"""Is a sentence about a credential's value? For what memapp *proposes* to remember (issue 31.7): a
memory suggestion must never carry a password, token, PIN or card number, detected or not.

The detector (store.secrets.detector) finds secrets by their shape; a suggestion needs more, because
"my bank PIN is 4821" or "my Netflix password is sunflower" hold a secret no shape gives away. So a
sentence is sensitive when it holds a detected secret or a marker, or when it names a credential and
then gives it ("... password is X", "PIN: X", "card number 4111 ..."). A preference about credentials
("I keep my passwords in 1Password") names one but gives none, and stays a suggestion.
"""

from __future__ import annotations

import re

from store.secrets.detector import MARKER_RE, find_secrets

_NOUN = (
    r"pass(?:word|wd|phrase|code)s?|pin(?: code| number)?|cvv|cvc|security code|api[ _-]?keys?|access keys?|"
    r"tokens?|secrets?|credentials?|card(?: number)?|credit card|debit card|account number|routing number|"
    r"iban|ssn|social security(?: number)?|login|2fa(?: code)?|otp|one[- ]time code|recovery codes?|"
    r"seed phrase|mnemonic|private key|wi-?fi key|door code|alarm code|combination"
)
# The credential named, then given: "is X", "was X", ": X", "= X", "- X".
GIVEN = re.compile(
    rf"(?i)\b(?:{_NOUN})\b[^.!?\n]{{0,30}}?(?:\b(?:is|was|are|were)\b|[:=])\s*[`\"']?[^\s`\"'.]+"
)
# Or named near a number of four or more digits (a PIN, a card, an account).
NUMBER = re.compile(r"\d(?:[ -]?\d){3,}")
NOUN = re.compile(rf"(?i)\b(?:{_NOUN})\b")


def sensitive(text: str) -> bool:
    """`text` gives a credential's value (detected or stated), so memapp must not propose remembering it."""
    if MARKER_RE.search(text) or find_secrets(text):
        return True
    if NOUN.search(text) is None:
        return False
    return bool(GIVEN.search(text) or NUMBER.search(text))
