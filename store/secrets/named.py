"""Secrets known by where they stand rather than by their shape: after a secret-sounding name
(`DB_PASSWORD=…`, `"client_secret": "…"`, `-H "x-api-key: …"`), in a URL's password, after `Bearer`, in
a command's password flag (`curl -u user:…`, `mysql -p…`, `sshpass -p …`), or a quoted random string.

The names build on detect-secrets' KeywordDetector: its denylist (password, secret, api_key,
private_key, ...) extended with the names today's tools use (token, credentials, auth, pat, ...). A
name counts when the secret word is its *last* part (`password_policy`, `token_type`, `key_id` are about
a secret, not one), and the value must pass store.secrets.values.plausible. The quoted-string rule is
detect-secrets' Base64HighEntropyString (its regex and its 4.5 bits limit), used only for a quoted
string that no name describes (a name that is not a secret's says what the string is: an id, a hash).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator
from dataclasses import dataclass

from store.secrets.values import card_number, char_classes, entropy, plausible

# detect-secrets' keyword denylist roots, plus the names its list lacks.
PASSWORD_WORDS = frozenset(
    {"password", "passwd", "pass", "pwd", "passphrase", "contraseña", "contrasena", "passcode"}
)
SECRET_WORDS = frozenset({"secret", "token", "apikey", "credential", "credentials", "auth", "pat", "creds"})
# "key" is a secret's name only after one of these (api_key, AccountKey, SecretAccessKey, signing_key);
# after anything else (cache_key, sort_key, public_key) only for a long random value.
KEY_QUALIFIERS = frozenset(
    [
        "api",
        "access",
        "secret",
        "private",
        "priv",
        "auth",
        "client",
        "account",
        "service",
        "signing",
        "encryption",
        "encrypt",
        "master",
        "app",
        "consumer",
        "license",
        "session",
        "webhook",
        "db",
        "database",
        "hmac",
        "jwt",
        "storage",
        "subscription",
        "admin",
        "deploy",
        "bot",
        "x",
    ]
)
NOT_KEY_QUALIFIERS = frozenset(
    [
        "public",
        "pub",
        "primary",
        "foreign",
        "sort",
        "partition",
        "cache",
        "idempotency",
        "object",
        "map",
        "dict",
        "hot",
        "composite",
        "unique",
        "index",
        "ssh",
        "gpg",
        "pgp",
        "host",
        "known",
    ]
)
# A token word after these is a language-model token or a page cursor, not a credential.
NOT_TOKEN_QUALIFIERS = frozenset(
    [
        "page",
        "next",
        "continuation",
        "sync",
        "cursor",
        "pagination",
        "max",
        "num",
        "total",
        "prompt",
        "completion",
        "input",
        "output",
        "eos",
        "bos",
        "pad",
        "unk",
        "sep",
        "cls",
        "mask",
        "special",
        "stop",
        "start",
        "end",
        "csrf",
        "xsrf",
    ]
)

_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
ENV_LINE = re.compile(r"^\s*(?:export\s+|set\s+|-\s+)?[\"']?[A-Z][A-Z0-9_]*[\"']?\s*[:=]")


@dataclass(frozen=True, slots=True)
class Hit:
    kind: str
    start: int
    end: int


def name_parts(name: str) -> list[str]:
    """`SecretAccessKey` -> [secret, access, key]; `db.password` -> [db, password]; `x-api-key` -> [x, api, key]."""
    parts: list[str] = []
    for chunk in re.split(r"[_.\-$]+", name):
        parts += [p.lower() for p in _CAMEL.findall(chunk)] or ([chunk.lower()] if chunk else [])
    return parts


# Parts after the secret word that do not change what the name holds (secret_key_base, password_value).
NEUTRAL_SUFFIXES = frozenset(
    [
        "base",
        "value",
        "val",
        "str",
        "string",
        "raw",
        "plain",
        "hex",
        "b64",
        "base64",
        "bytes",
        "material",
        "prod",
        "production",
        "dev",
        "live",
        "test",
        "staging",
        "secure",
        "new",
        "old",
        "current",
    ]
)
_GLUED = re.compile(r"^(.*?)(password|passwd|passphrase|secret|token|apikey|key)$")


def name_kind(name: str) -> tuple[str, bool] | None:
    """(marker kind, strong) when `name` names a secret; None otherwise. `strong` is False for a name
    like `mistral_key` that a long random value must confirm."""
    parts = name_parts(name)
    while len(parts) > 1 and (parts[-1] in NEUTRAL_SUFFIXES or parts[-1].isdigit()):
        parts.pop()
    if len(parts) == 1 and (glued := _GLUED.match(parts[0])) and glued.group(1):
        parts = [glued.group(1), glued.group(2)]  # identitytoken, accesskey, clientsecret: one word
    if not parts:
        return None
    last, before = parts[-1], parts[-2] if len(parts) > 1 else ""
    if last in PASSWORD_WORDS or (last.endswith(("password", "passwd")) and len(parts) == 1):
        return "password", True
    if last == "word" and before == "pass":
        return "password", True
    if last in ("key", "keys") and before == "api" or last == "apikey":
        return "api-key", True
    if "aws" in parts and "secret" in parts:
        return "aws-secret-key", True
    if last in SECRET_WORDS:
        if last == "token" and before in NOT_TOKEN_QUALIFIERS:
            return None
        kind = {"token": "token", "pat": "token", "auth": "token"}.get(last, "secret")
        return kind, True
    if last == "key":
        if before in NOT_KEY_QUALIFIERS:
            return None
        return "secret", before in KEY_QUALIFIERS
    return None


_TOKEN_LIKE = re.compile(r"^[A-Za-z0-9+/=_~-]+$")
_FILE_OR_PATH = re.compile(r"\.[A-Za-z]{2,4}$|^\.?/|/[a-z]+/|^\d+(?:\.\d+)+$")


# node-modules-55e2919a…, build.3f9a8b7c…: words and a hex digest (a cache key, an artifact), not a secret.
_WORDS_AND_DIGEST = re.compile(r"^(?:[A-Za-z]+[-_.:/])*[0-9a-f]{16,}$")


def _strong_value(value: str) -> bool:
    """A long random token: what a weakly named value must be (`mistral_key = <this>`)."""
    return (
        not _WORDS_AND_DIGEST.match(value)
        and len(value) >= 20
        and bool(_TOKEN_LIKE.match(value))
        and not _FILE_OR_PATH.search(value)
        and entropy(value) >= 3.5
        and sum(1 for c in value if c.isdigit()) >= 2
    )


# An unquoted value ends at a space, a quote, a separator, or an escape (text quoted inside JSON: \\n).
_UNQUOTED = re.compile(r"(?:[^\s\"'`,;)}\]\\]|\\(?![nrt\"'\\]))+(?<!:)")


def _read_value(line: str, at: int) -> tuple[int, int, bool] | None:
    """The value starting at `at` (after the operator): (start, end, quoted)."""
    if at >= len(line):
        return None
    if line[at] == "@" and line[at + 1 : at + 2] == '"':  # Objective-C's @"..."
        at += 1
    if at < len(line) and line[at] in "\"'`":
        quote = line[at]
        end = line.find(quote, at + 1)
        if end == -1:
            return None
        return at + 1, end, True
    m = _UNQUOTED.match(line, at)
    if m is None:
        return None
    return m.start(), m.end(), False


# The words a secret's name holds (lowercased): names are found around them, not by scanning every word.
NAME_KEYWORDS = ("pass", "pwd", "secret", "token", "key", "auth", "credential", "contrase", "creds")
_OP = re.compile(r"[\"'`]?\]?[ \t]*(:=|=>|={1,3}|!={1,2}|:(?!//))[ \t]*")
_NAME_CHAR = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-$ñ")


def _names(line: str, low: str, words: Collection[str]) -> Iterator[tuple[int, int]]:
    """(start, end) of each name in `line` that holds a keyword (a name with two is given once). `words`:
    the keywords `low` holds (the caller knows: each absent one asked again would be a scan of the line)."""
    seen: set[int] = set()
    for word in NAME_KEYWORDS:
        if word not in words:
            continue
        i = low.find(word)
        while i != -1:
            start, end = i, i + len(word)
            while start > 0 and line[start - 1] in _NAME_CHAR:
                start -= 1
            while end < len(line) and line[end] in _NAME_CHAR:
                end += 1
            while start < end and not (line[start].isalpha() or line[start] == "_"):
                start += 1
            if start < end and start not in seen:
                seen.add(start)
                yield start, end
            i = low.find(word, end)


_WORD_BEFORE = re.compile(r"([A-Za-z]+)[ \t]+$")


def _with_word_before(line: str, start: int, name: str) -> str:
    """A bare `key` or `token` takes the word before it as its qualifier: "cache key: x" is a cache key,
    "api key: x" an API key (prose and YAML comments name things in two words)."""
    if name.lower() not in ("key", "token", "secret"):
        return name
    m = _WORD_BEFORE.search(line, 0, start)
    return f"{m.group(1)}_{name}" if m else name


def assignments(line: str, low: str, words: Collection[str] = NAME_KEYWORDS) -> Iterator[Hit]:
    """`name <op> value` where the name says secret and the value could be one (`low`: line.lower();
    `words`: which of NAME_KEYWORDS it holds, when the caller knows)."""
    env_style: bool | None = None
    for name_start, name_end in _names(line, low, words):
        m = _OP.match(line, name_end)
        if m is None:
            continue
        name, op = line[name_start:name_end], m.group(1)
        named = name_kind(_with_word_before(line, name_start, name))
        if named is None or line.endswith("://", 0, name_start):
            continue  # (https://user:pass@ is the URL rule's)
        kind, strong = named
        read = _read_value(line, m.end())
        if read is None:
            continue
        start, end, quoted = read
        value = line[start:end]
        if op == ":" and not quoted and not line[m.end(1) : m.end(1) + 1].isspace() and "-" not in name:
            continue  # `pass:|env` is not YAML (a space follows its colon) nor a header (x-api-key:v)
        if value.startswith(("Bearer ", "Basic ", "Token ", "token ", "bearer ")):
            continue  # an Authorization header: the bearer rule takes the token
        if env_style is None:
            env_style = bool(ENV_LINE.match(line))
        # Literal text, not code: YAML/JSON/headers (:), .env lines, connection strings and query strings
        # (;Password=x; ?api_key=x&), where an unquoted value is the value itself, not a variable.
        literal = op in (":", "=>") or env_style or line[name_start - 1 : name_start] in (";", "&", "?")
        if not plausible(value, password=kind == "password", quoted=quoted, literal=literal):
            continue
        if not strong and not _strong_value(value):
            continue
        yield Hit(kind, start, end)


# -- URLs, headers, commands --------------------------------------------------------------------------

# The password runs to the last @ before the host: pasted passwords hold raw @ and # more often than not.
URL_PASSWORD = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]{1,20}://([^\s:/?#@'\"]*):([^\s/'\"]+)@(?=[\w\[])")
# `Bearer x` anywhere; the other schemes only in an Authorization header (prose says "Token dispatch").
BEARER = re.compile(
    r"(?:\b(Bearer|bearer)|(?i:authorization)[\"']?\s*[:=]\s*[\"']?(Basic|Token|token|Bot|Digest))"
    r"\s+([A-Za-z0-9._~+/-]{16,}=*)"
)
# (needles, pattern): the pattern is tried only on a line whose lowercase holds one of the needles.
COMMANDS: tuple[tuple[tuple[str, ...], re.Pattern[str]], ...] = (
    # curl -u user:password, wget --user= / --password=
    ((" -u", "--user"), re.compile(r"(?:^|\s)(?:-u|--user)[ =]+[\"']?[^\s:\"']+:([^\s\"']+)")),
    # --password x, --token=x, --api-key x, --requirepass x
    (
        ("-pass", "--token", "-api", "-apikey", "-secret", "-auth-token", "-access-token", "requirepass"),
        re.compile(
            r"(?:^|\s)--?(?:password|passwd|pass|token|api-key|apikey|secret|auth-token|access-token|"
            r"requirepass|client-secret)(?:=|\s+)(?!-|pass:|env:|file:|fd:|stdin)[\"']?([^\s\"']+)",
            re.IGNORECASE,
        ),
    ),
    # openssl -pass pass:x, -passin pass:x
    (("pass:",), re.compile(r"\s-pass(?:in|out)?\s+pass:([^\s\"']+)")),
    # mysql -pSECRET (no space), mysqldump, mysqladmin
    (("mysql",), re.compile(r"\bmysql(?:dump|admin)?\b[^\n|;]*?\s-p([^\s\"'-][^\s\"']*)")),
    # sshpass -p 'x'; docker/podman/helm/skopeo login -p x; twine upload -p x
    (("sshpass",), re.compile(r"\bsshpass\s+-p\s*[\"']?([^\s\"']+)")),
    (
        ("login", "upload"),
        re.compile(
            r"\b(?:(?:docker|podman|helm|skopeo)\s+(?:registry\s+)?login|twine\s+upload)\b[^\n|;]*?\s-p\s+[\"']?([^\s\"']+)"
        ),
    ),
    # htpasswd -b[c] file user password
    (
        ("htpasswd",),
        re.compile(r"\bhtpasswd\s+(?:-\w+\s+)*-\w*b\w*\s+(?:-\w+\s+)*\S+\s+\S+\s+[\"']?([^\s\"']+)"),
    ),
    # SQL: IDENTIFIED BY 'x', WITH PASSWORD 'x'
    (("identified", "password '"), re.compile(r"(?i)\b(?:identified\s+by|password)\s+'([^'\s]+)'")),
    # .netrc: machine host login user password x
    (("password ",), re.compile(r"^\s*(?:machine\s+\S+\s+login\s+\S+\s+)?password\s+(\S+)\s*$")),
)


def urls(line: str) -> Iterator[Hit]:
    for m in URL_PASSWORD.finditer(line):
        if plausible(m.group(2), password=True, quoted=True, literal=True):
            yield Hit("url-password", m.start(2), m.end(2))


def _random_looking(value: str) -> bool:
    """Letters and digits, or a long mix of cases: a token, not words (`Token dispatch/combine`)."""
    if any(c.isdigit() for c in value) and any(c.isalpha() for c in value):
        return True
    return (
        len(value) >= 20
        and any(c.isupper() for c in value)
        and any(c.islower() for c in value)
        and entropy(value) >= 4.0
    )


def bearers(line: str, low: str, words: Collection[str] = ("bearer", "auth")) -> Iterator[Hit]:
    """(`words`: whether "bearer" and "auth" are in the line, when the caller knows.)"""
    if ("bearer" not in words or "bearer" not in low) and ("auth" not in words or "authorization" not in low):
        return
    for m in BEARER.finditer(line):
        value = m.group(3)
        if not _random_looking(value):
            continue
        if plausible(value, password=False, quoted=True, literal=True):
            yield Hit("basic-auth" if m.group(2) == "Basic" else "bearer-token", m.start(3), m.end(3))


# Chat: "the wifi password at the office is X", "the root password on staging is X", "with secret X".
# (A bare "key is X" is left out: a map key, a host key's fingerprint, a cache key; "api key is X" is in.)
PROSE_WORDS = ("password", "passcode", "passphrase", "secret", "token", "api key", "access key")
# The keyword (store.secrets.detector.KEYWORDS) each prose word holds: a line without it is not searched.
_PROSE_ROOT = {w: "pass" if "pass" in w else "key" if w.endswith("key") else w for w in PROSE_WORDS}
_PROSE_IS = re.compile(r"[a-z ]{0,10}\b[^.\n:=]{0,40}?\b(?:is|was)\b:?\s+[`\"']?([^\s`\"']+)", re.IGNORECASE)
_PROSE_WITH = re.compile(r"\b(?:with|and|plus)\s+(?:the\s+)?$", re.IGNORECASE)
_PROSE_NEXT = re.compile(r"\s+[`\"']?([^\s`\"']+)")


# "my admin login is ana / X", "creds: ana / X": a user and a password given together.
_LOGIN = re.compile(
    r"(?i)\b(?:login|credentials?|creds)\b[^.\n]{0,40}?(?:\bis\b|\bare\b|:)\s*\S+\s*(?:/|:)\s*[`\"']?([^\s`\"']+)"
)


def prose(line: str, low: str, words: Collection[str] = ("pass", "secret", "token", "key")) -> Iterator[Hit]:
    """(`words`: which of the prose words' roots, `_PROSE_ROOT`, the line holds, when the caller knows.)"""
    if "login" in low or "cred" in low:
        for login in _LOGIN.finditer(line):
            yield from _prose_value(line, login, "password", need_digit=False)
    for word in PROSE_WORDS:
        if _PROSE_ROOT[word] not in words:
            continue
        i = low.find(word)
        while i != -1:
            after = i + len(word)
            if i == 0 or not line[i - 1].isalnum():
                m: re.Match[str] | None = _PROSE_IS.match(line, after)
                if (
                    m is None
                    and word in ("password", "secret", "token")
                    and _PROSE_WITH.search(line, max(0, i - 12), i)
                ):
                    m = _PROSE_NEXT.match(line, after)
                if m is not None:
                    kind = "password" if word.startswith("pass") else "secret"
                    yield from _prose_value(line, m, kind, need_digit=False)
            i = low.find(word, after)


def _prose_value(line: str, m: re.Match[str], kind: str, *, need_digit: bool = True) -> Iterator[Hit]:
    value = m.group(1).rstrip(".,;:)")
    mixed = any(c.isdigit() for c in value) or (not need_digit and char_classes(value) >= 3)
    if not mixed or not any(c.isalpha() for c in value):
        return  # a sentence goes on in words; a secret mixes letters and digits (or symbols)
    if plausible(value, password=kind == "password", quoted=False, literal=True):
        yield Hit(kind, m.start(1), m.start(1) + len(value))


def _command_gate(needle: str) -> str:
    """A shorter string every line holding `needle` holds: "-" (a memchr) or "pass"."""
    return "-" if "-" in needle else "pass" if "pass" in needle else needle


# The few strings that gate every command pattern: a line holding none of them skips all nine, and a
# needle is looked for only where its gate was found.
_COMMAND_GATES = tuple(dict.fromkeys(_command_gate(n) for needles, _ in COMMANDS for n in needles))
_GATED_COMMANDS = tuple((tuple((n, _command_gate(n)) for n in needles), p) for needles, p in COMMANDS)


def commands(line: str, low: str) -> Iterator[Hit]:
    gates = [g for g in _COMMAND_GATES if g in low]
    if not gates:
        return
    for needles, pattern in _GATED_COMMANDS:
        # A plain loop: a generator per pattern per line cost a tenth of a line's time.
        for n, gate in needles:
            if gate in gates and n in low:
                break
        else:
            continue
        for m in pattern.finditer(line):
            value = m.group(1).rstrip(",.;)")
            if plausible(value, password=True, quoted=True, literal=True):
                yield Hit("password", m.start(1), m.start(1) + len(value))


# -- cards --------------------------------------------------------------------------------------------

CARD = re.compile(r"(?<![\d.-])\d(?:[ -]?\d){12,18}(?![ -]?\d)")


def cards(line: str) -> Iterator[Hit]:
    for m in CARD.finditer(line):
        context = line[max(0, m.start() - 60) : m.end() + 60]
        if card_number(m.group(0), context):
            yield Hit("card-number", m.start(), m.end())


# -- quoted random strings (detect-secrets' Base64HighEntropyString) -----------------------------------

QUOTED = re.compile(r"([\"'])([A-Za-z0-9+/]{32,100}={0,2})\1")
_NAME_BEFORE = re.compile(r"[\w-]+[\"'`]?\s*(?:[:=]|=>)\s*[\"']?$")
_OBJECT_ID = re.compile(r"^[a-z][a-z0-9]{0,15}[_-]")
BASE64_LIMIT = 4.5  # detect-secrets' default for Base64HighEntropyString


def quoted_random(line: str) -> Iterator[Hit]:
    for m in QUOTED.finditer(line):
        value = m.group(2)
        if _NAME_BEFORE.search(line, 0, m.start()):
            continue  # a name says what it is: a secret's name was the assignment rule's to judge
        if _OBJECT_ID.match(value) or not (
            any(c.islower() for c in value)
            and any(c.isupper() for c in value)
            and any(c.isdigit() for c in value)
        ):
            continue  # msg_01…, toolu_01…, cus_…: object ids; a string without all three classes: a word or a hash
        if entropy(value) > BASE64_LIMIT:
            yield Hit("high-entropy-string", m.start(2), m.end(2))
