"""Find the secrets in a text and replace each with a marker naming its kind: `[secret: aws-access-key]`.

Speed is the point of this module's shape. Every message of every import passes through here, and
detect-secrets' own scan (every plugin's regexes, then its filters, line by line) costs about a
millisecond per line of code. So a text first meets a prefilter made of substring tests and two simple
regexes (`worth_a_look`: a long token-like run, a secret-sounding word, a URL with a password, a -u/-p
flag, a long number); a text with none of them, which is most prose, is done. Otherwise only its lines
that pass go on, each rule family runs only where its own gate holds in the line, and each format's
pattern only in a line holding one of its literal needles. bench/perf/redaction.py measures both paths.

Private keys are found on the whole text first (a PEM block spans lines); everything else line by line.
Overlapping findings merge into one span, named after the most specific rule (a format beats a name,
a name beats a bare random string). Markers already in a text are never touched, so redacting twice
gives the same text as redacting once.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache

from store.secrets import named
from store.secrets.formats import Rule, all_rules

MARKER_RE = re.compile(r"\[secret: [a-z0-9-]{1,40}\]")

# The prefilter. Every formatted secret is a run of at least 16 token characters; every secret known by
# its name has one of KEYWORDS nearby (lowercased); a command's password follows -u or -p; a card is a
# long number; a URL's password sits between :// and @. A substring test (`in`) runs at memory speed,
# where one regex alternating over every prefix cost ~450 us per KB of prose (measured; bench/perf/redaction.py).
LONG_RUN = re.compile(r"[A-Za-z0-9_+/.-]{16,}")
KEYWORDS = (
    "pass",
    "pwd",
    "secret",
    "token",
    "key",
    "auth",
    "credential",
    "contrase",
    "creds",
    "bearer",
    "identified",
)
COMMAND_NEEDLES = (" -u", " -p", "--user", "\t-u", "\t-p")
DIGIT_RUN = re.compile(r"\d(?:[ -]?\d){12,18}")
# bytes.translate runs at memory speed where a character-class regex restarts at every letter of every
# word (~15 us per KB of prose): token characters become "a" (a 16-long run of them is one `in`), digits "0".
_RUNS = bytes(ord("a") if chr(b) in "+/._-" or chr(b).isalnum() and b < 128 else ord(" ") for b in range(256))
_DIGITS = bytes(ord("0") if chr(b).isdigit() and b < 128 else ord(" ") for b in range(256))
_RUN16 = b"a" * 16


def _has_long_run(text: str) -> bool:
    return _RUN16 in text.encode("utf-8", "surrogatepass").translate(_RUNS)


def _may_hold_card(text: str) -> bool:
    return text.encode("utf-8", "surrogatepass").translate(_DIGITS).count(b"0") >= 13


def _has_keyword(text: str) -> bool:
    low = text.lower()
    return any(k in low for k in KEYWORDS)


def worth_a_look(text: str) -> bool:
    """False when `text` cannot hold a secret (most prose): nothing else is run on it."""
    return bool(
        _has_keyword(text)
        or _has_long_run(text)
        or ("://" in text and "@" in text)
        or any(n in text for n in COMMAND_NEEDLES)
        or (_may_hold_card(text) and DIGIT_RUN.search(text))
    )


PRIVATE_KEY_BEGIN = re.compile(
    r"-----BEGIN ((?:RSA |DSA |EC |OPENSSH |ENCRYPTED |SSH2 ENCRYPTED |PGP )?PRIVATE KEY(?: BLOCK)?)-----"
)
# The body of a key whose END line is missing (cut off, or escaped in JSON as \n): base64 lines after it.
_KEY_BODY = re.compile(r"(?:(?:\\n|\r?\n|\s)+(?:[A-Za-z0-9+/=]{16,}|[A-Za-z-]+: [^\n\\]*))+")
_KEY_MATERIAL = re.compile(r"[A-Za-z0-9+/=]{40}")
PUTTY = re.compile(r"PuTTY-User-Key-File-\d: [^\n]*(?:\n[^\n]*){0,40}?\nPrivate-MAC: [0-9a-f]+")

# Lower wins when findings overlap: a format names the secret best, then where it stands, then its looks.
_GENERIC = {"password": 5, "api-key": 5, "token": 5, "secret": 5, "card-number": 6, "high-entropy-string": 7}
_WHERE = {"url-password": 3, "bearer-token": 4, "basic-auth": 4}


def priority(kind: str) -> int:
    if kind == "private-key":
        return 0
    return _GENERIC.get(kind, _WHERE.get(kind, 1))


@dataclass(frozen=True, slots=True)
class Finding:
    """A secret at text[start:end], of `kind` (the name its marker shows)."""

    kind: str
    start: int
    end: int


def marker(kind: str) -> str:
    return f"[secret: {kind}]"


_JWT_TAIL = re.compile(r"[A-Za-z0-9_.+/=-]*")


def _placeholder_token(value: str) -> bool:
    """A format's prefix padded with x's, a run of one character, or a doc's EXAMPLE key."""
    upper = value.upper()
    return "XXXX" in upper or "EXAMPLE" in upper or re.search(r"(.)\1{7,}", value) is not None


def _standalone(text: str, start: int, end: int) -> bool:
    """Nothing alphanumeric glued to either side: AKIA inside a longer word is not a key. (Telegram's
    API puts its token right after "bot" in the URL path: /bot123456789:AA…)"""
    left_ok = start == 0 or not text[start - 1].isalnum() or text.endswith("/bot", 0, start)
    return left_ok and (end == len(text) or not text[end].isalnum())


def _rule_hits(rules: Iterable[Rule], line: str) -> Iterator[named.Hit]:
    for rule in rules:
        for m in rule.pattern.finditer(line):
            start, end = m.span(rule.group)
            start += rule.skip
            if start < 0 or end <= start:
                continue
            value = line[start:end]
            if rule.kind == "npm-token":  # the plugin's pattern runs to the end of the line
                value = value.split()[0].strip("\"'")
                end = start + len(value)
            elif rule.kind == "jwt":  # the plugin's pattern stops before the signature (lazy *?)
                tail = _JWT_TAIL.match(line, end)
                end = tail.end() if tail else end
                value = line[start:end]
            if not _standalone(line, start, end) or _placeholder_token(value):
                continue
            if rule.check is not None and not rule.check(value):
                continue
            yield named.Hit(rule.kind, start, end)


def _private_keys(text: str) -> Iterator[Finding]:
    """PEM blocks, BEGIN to END (or to the end of the base64 after BEGIN when END is missing). A header
    with no key material after it (code that names the header, prose about it) reveals nothing."""
    for m in PRIVATE_KEY_BEGIN.finditer(text):
        end_marker = f"-----END {m.group(1)}-----"
        end = text.find(end_marker, m.end(), m.end() + 20_000)
        if end != -1:
            if _KEY_MATERIAL.search(text, m.end(), end):
                yield Finding("private-key", m.start(), end + len(end_marker))
            continue
        body = _KEY_BODY.match(text, m.end())
        if body and _KEY_MATERIAL.search(text, m.end(), body.end()):
            yield Finding("private-key", m.start(), body.end())
    for m in PUTTY.finditer(text):
        yield Finding("private-key", m.start(), m.end())


@cache
def _needles() -> tuple[tuple[str, tuple[Rule, ...]], ...]:
    """Each literal needle with the rules it gates; rules without one are under the empty needle."""
    by: dict[str, list[Rule]] = {}
    for rule in all_rules():
        for needle in rule.needles or ("",):
            by.setdefault(needle, []).append(rule)
    return tuple((n, tuple(rules)) for n, rules in by.items())


def _rules_for(line: str) -> list[Rule]:
    """The rules whose needle is in `line`, in rule order, each once."""
    chosen = {id(r): r for needle, rules in _needles() if needle in line for r in rules}
    return [r for r in all_rules() if id(r) in chosen]


def _line_hits(line: str) -> Iterator[named.Hit]:
    """Each rule family, where its own gate holds in the line (nothing at all for most lines)."""
    if len(line) < 6:
        return
    low = line.lower()
    keyword = any(k in low for k in KEYWORDS)
    if _has_long_run(line):
        yield from _rule_hits(_rules_for(line), line)
        yield from named.quoted_random(line)
    if keyword:
        yield from named.assignments(line, low)
        yield from named.bearers(line, low)
        yield from named.prose(line, low)
    if "://" in line and "@" in line:
        yield from named.urls(line)
    if keyword or any(n in line for n in COMMAND_NEEDLES):
        yield from named.commands(line, low)
    if _may_hold_card(line):
        yield from named.cards(line)


def _merge(findings: list[Finding], protected: list[tuple[int, int]]) -> list[Finding]:
    """One finding per overlapping group (their union, the best kind), none inside an existing marker."""
    kept = [f for f in findings if not any(a < f.end and f.start < b for a, b in protected)]
    kept.sort(key=lambda f: (f.start, -f.end))
    out: list[Finding] = []
    for f in kept:
        if out and f.start < out[-1].end:
            last = out[-1]
            kind = f.kind if priority(f.kind) < priority(last.kind) else last.kind
            out[-1] = Finding(kind, last.start, max(last.end, f.end))
        else:
            out.append(f)
    return out


def find_secrets(text: str) -> list[Finding]:
    """Every secret in `text`, in order, non-overlapping."""
    if not text:
        return []
    multiline = "\n" in text
    if multiline and not worth_a_look(text):
        return []
    findings = list(_private_keys(text)) if "PRIVATE KEY" in text or "PuTTY" in text else []
    pos = 0
    for line in text.split("\n") if multiline else (text,):
        findings += [Finding(h.kind, pos + h.start, pos + h.end) for h in _line_hits(line)]
        pos += len(line) + 1
    if not findings:
        return []
    protected = [m.span() for m in MARKER_RE.finditer(text)] if "[secret: " in text else []
    return _merge(findings, protected)


def redact(text: str) -> tuple[str, list[Finding]]:
    """`text` with every secret replaced by its marker, and what was replaced."""
    findings = find_secrets(text)
    if not findings:
        return text, findings
    parts, pos = [], 0
    for f in findings:
        parts += [text[pos : f.start], marker(f.kind)]
        pos = f.end
    parts.append(text[pos:])
    return "".join(parts), findings


@cache
def warm() -> None:
    """Load detect-secrets now (about 0.1 s), e.g. before an import times itself."""
    all_rules()
