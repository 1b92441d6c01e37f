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
# A one-character `in` is a memchr (~0.05 us per KB); a longer needle's costs 1-4 us per KB of prose, where
# its last letter is everywhere. So a rare character every needle of a family holds is asked first: "-"
# for the command flags, "@" for a URL's password (each alone cost more than all of the rest of a prose
# text's prefilter but the keywords).
DIGIT_RUN = re.compile(r"\d(?:[ -]?\d){12,18}")
# bytes.translate runs at memory speed where a character-class regex restarts at every letter of every
# word (~15 us per KB of prose): token characters become "a" (a 16-long run of them is one `in`), digits
# "0". A newline stays one, so a whole text's map splits into its lines' maps (UTF-8 has no other 0x0A).
_RUNS = bytes(
    b if b == 10 else ord("a") if chr(b) in "+/._-" or chr(b).isalnum() and b < 128 else ord(" ")
    for b in range(256)
)
_DIGITS = bytes(b if b == 10 else ord("0") if chr(b).isdigit() and b < 128 else ord(" ") for b in range(256))
_RUN16 = b"a" * 16


def _holds_any(text: str, needles: Iterable[str]) -> bool:
    # A plain loop: `any(genexpr)` cost twice as much on a short line (measured).
    for n in needles:  # noqa: SIM110
        if n in text:
            return True
    return False


@dataclass(frozen=True, slots=True)
class _Scan:
    """The prefilter's work on a whole text, kept for its lines so that none is redone line by line:
    each line's lowercase (None when the text holds no secret-sounding word), token-run and digit maps."""

    lows: list[str] | None
    words: list[str]  # the keywords the whole text holds: a line is asked about these alone
    runs: list[bytes]
    digits: list[bytes]


def _scan(text: str) -> _Scan | None:
    """None when `text` cannot hold a secret (most prose): nothing else is run on it."""
    low = text.lower()
    words = [k for k in KEYWORDS if k in low]
    data = text.encode("utf-8", "surrogatepass")
    runs, digits = data.translate(_RUNS), data.translate(_DIGITS)
    if not (
        words
        or _RUN16 in runs
        or ("@" in text and "://" in text)
        or ("-" in text and _holds_any(text, COMMAND_NEEDLES))
        or (digits.count(b"0") >= 13 and DIGIT_RUN.search(text))
    ):
        return None
    # str.lower never makes or removes a newline, nor lowers across one: low's lines are the lines' lows.
    return _Scan(low.split("\n") if words else None, words, runs.split(b"\n"), digits.split(b"\n"))


def worth_a_look(text: str) -> bool:
    """False when `text` cannot hold a secret (most prose): nothing else is run on it."""
    return _scan(text) is not None


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
def _needles() -> tuple[tuple[str, tuple[int, ...]], ...]:
    """Each literal needle with the indices (in all_rules()) of the rules it gates; rules without one
    are under the empty needle, which every line holds."""
    by: dict[str, list[int]] = {}
    for i, rule in enumerate(all_rules()):
        for needle in rule.needles or ("",):
            by.setdefault(needle, []).append(i)
    return tuple((n, tuple(ids)) for n, ids in by.items())


def _rules_for(line: str) -> list[Rule]:
    """The rules whose needle is in `line`, in rule order, each once."""
    chosen: set[int] = set()
    for needle, ids in _needles():
        if needle in line:
            chosen.update(ids)
    rules = all_rules()
    return [rules[i] for i in sorted(chosen)]


# Lines already read, and what was found in them (positions within the line). A coding session repeats
# itself: the same files read again, the same command output, the same reminders (in the evaluation-mixed
# bench export a third of the lines that reach the rules are repeats). Bounded: lines up to _CACHE_LINE
# characters (a line of code or output; 99 % of the evaluation's are under 230, while a prose paragraph
# is one long line that never comes back), at most _CACHE_SIZE of them (~4 MB at worst), dropped
# wholesale when full. A line's findings depend on the line alone (every gate below is the line's own).
# Threads share it safely: a dict's get and set are atomic, and a race costs at most one line read twice.
_CACHE_SIZE = 10_000
_CACHE_LINE = 300
_seen: dict[str, tuple[named.Hit, ...]] = {}


def forget_lines() -> None:
    """Empty the cache of lines read (a benchmark reading the same texts again measures the rules)."""
    _seen.clear()


def _line_hits(line: str, scan: _Scan, i: int) -> tuple[named.Hit, ...]:
    """What the rules find in line `i` of a text, from the cache when the line was read before."""
    if len(line) > _CACHE_LINE:
        return tuple(_read_line(line, scan, i))
    hits = _seen.get(line)
    if hits is None:
        if len(_seen) >= _CACHE_SIZE:
            _seen.clear()
        hits = _seen[line] = tuple(_read_line(line, scan, i))
    return hits


def _read_line(line: str, scan: _Scan, i: int) -> Iterator[named.Hit]:
    """Each rule family, where its own gate holds in the line (nothing at all for most lines)."""
    low = scan.lows[i] if scan.lows is not None else None
    # Which keywords the line holds, asked once: each family below looks only for those.
    words = [k for k in scan.words if k in low] if low is not None else []
    keyword = bool(words)
    if _RUN16 in scan.runs[i]:
        yield from _rule_hits(_rules_for(line), line)
        yield from named.quoted_random(line)
    if keyword:
        assert low is not None
        yield from named.assignments(line, low, words)
        yield from named.bearers(line, low, words)
        yield from named.prose(line, low, words)
    if "@" in line and "://" in line:
        yield from named.urls(line)
    if keyword or ("-" in line and _holds_any(line, COMMAND_NEEDLES)):
        yield from named.commands(line, low if low is not None else line.lower())
    if scan.digits[i].count(b"0") >= 13:
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
    scan = _scan(text)
    if scan is None:
        return []
    findings = list(_private_keys(text)) if "PRIVATE KEY" in text or "PuTTY" in text else []
    pos = 0
    for i, line in enumerate(text.split("\n")):
        if len(line) >= 6:
            findings += [Finding(h.kind, pos + h.start, pos + h.end) for h in _line_hits(line, scan, i)]
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
    """Compile the rules now (a few ms), e.g. before an import times itself."""
    all_rules()
