"""Is this value a credential, or something that only sits where one could (a placeholder, a reference,
a word)? Used for the values found by a name (`DB_PASSWORD=…`, `"client_secret": "…"`, `-u user:…`),
which have no format of their own to vouch for them; and the card-number check (Luhn and a scheme's
prefix, because any long number passes one of the two by chance).

Why so strict: a false alarm replaces real text in chat.db for good, while these names are everywhere
in code and prose (`password = getpass()`, `token: REDACTED`, `api_key: ${API_KEY}`, `password_policy:`).
detect-secrets' own heuristic filters (templated, sequential, UUID, indirect reference) run first; the
rest were added on the tuning half of the evaluation (bench/eval/secrets/), each for a family of texts
it wrongly redacted.
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter

# Values that stand in for a secret in docs, examples, templates and UIs.
PLACEHOLDER_WORDS = re.compile(
    r"example|your[_-]?|xxxx|placeholder|change[_-]?me|change[_-]?it|redact|dummy|sample|insert|replace|"
    r"\*\*\*|•|…|\.\.\.|<[^>]*>|\{\{|\$\{|^\{|\}$|%\(|(?-i:%s)$|#\{|^\$|lorem|fixme|todo|not[_-]?set|secret[_-]?here|"
    r"key[_-]?here|token[_-]?here|paste",
    re.IGNORECASE,
)
# A value that is exactly one of these words is a type, a default or a flag, not a secret.
STOP_VALUES = frozenset(
    [
        "password",
        "passwd",
        "pass",
        "secret",
        "token",
        "key",
        "apikey",
        "api_key",
        "null",
        "none",
        "nil",
        "undefined",
        "true",
        "false",
        "yes",
        "no",
        "string",
        "str",
        "int",
        "bool",
        "required",
        "optional",
        "empty",
        "blank",
        "default",
        "test",
        "demo",
        "value",
        "env",
        "auto",
        "bearer",
        "basic",
        "hidden",
        "masked",
        "unset",
        "redacted",
        "changeme",
        "secret_key",
        "access_token",
        "client_secret",
        "private_key",
        "public",
        "private",
        "sensitive",
        "encrypted",
        "na",
        "n/a",
        "tbd",
    ]
)
# Where a value is read from rather than written down: os.environ[...], process.env.X, settings.SECRET...
REFERENCE = re.compile(
    r"^(?:os\.|process\.env|env\.|env\[|ENV\[|settings\.|config\.|cfg\.|conf\.|self\.|this\.|args\.|"
    r"request\.|req\.|params\.|props\.|secrets\.|vault:|ref\+|op://|sm://|arn:|file:|!vault|!secret|"
    r"getenv|getpass|input\(|os\.environ)",
    re.IGNORECASE,
)
# list[str], Optional[bytes], dict<K,V>, cfg["x"]: a type or an index, not a value.
TYPE_OR_CALL = re.compile(r"^[A-Za-z_][\w.]*[\[(<]")
# A name or a dotted path (module.attr, Token.Name.Builtin, ed25519.Ed25519PrivateKey): code, not a value.
IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z_]*$|^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$")
# How variables are named in code (snake_case, camelCase, CONSTANT_CASE): `password=pw_input` passes
# a variable. A mixed-case random value (P4ssw0rd_jLHZPd, Rxx6gVG51S0Jokr...) is not named like one.
CODE_NAME = re.compile(r"^(?:[a-z_][a-z0-9_]*|[a-z]+(?:[A-Z][a-z0-9]+)+|[A-Z][A-Z0-9_]*)$")
# A digest's or a fingerprint's label (SHA256:..., sha1-...): what follows is a hash, not a secret.
HASH_LABEL = re.compile(r"^(?:sha\d*|md5|blake2b?)[:-]", re.IGNORECASE)
# Ed25519PrivateKey, TextGenerationStreamOutputToken: CamelCase words (a type), not a random value.
TYPE_NAME = re.compile(r"^[A-Z][a-z]*\d*(?:[A-Z][a-z]{2,}\d*){2,}$")
SECRET_WORD = re.compile(r"password|passwd|secret|token", re.IGNORECASE)
ENV_NAME = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")
KEBAB_WORDS = re.compile(r"^[a-z]+(?:[-_.][a-z]+)*$")
_SPACE = re.compile(r"\s")
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.IGNORECASE)


def entropy(value: str) -> float:
    """Shannon entropy in bits per character (detect-secrets' measure, over the value's own characters)."""
    if not value:
        return 0.0
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values())


def char_classes(value: str) -> int:
    """How many of lower, upper, digit, symbol the value mixes."""
    return (
        any(c.islower() for c in value)
        + any(c.isupper() for c in value)
        + any(c.isdigit() for c in value)
        + any(not c.isalnum() for c in value)
    )


# detect-secrets' heuristic filters is_sequential_string and is_templated_secret, the same tests (tests
# check they agree), so that judging a value does not import the package (store.secrets.snapshot: why).
_SEQUENCES = (
    string.ascii_uppercase * 2 + string.digits + "+/",
    string.digits + string.ascii_uppercase * 2 + "+/",
    (string.digits + string.ascii_uppercase) * 2,
    string.digits * 2,
    string.hexdigits.upper() * 2,
    string.ascii_uppercase + "=/",
)


def is_sequential_string(value: str) -> bool:
    """ABCDEF..., 0123..., a run of the base64 or hex alphabet: a doc's filler."""
    upper = value.upper()
    return any(upper in seq for seq in _SEQUENCES)


def is_templated_secret(value: str) -> bool:
    """{secret}, <secret>, ${secret}; or "" and "$" (where the package's indexing fails, it says True)."""
    if not value or value == "$":
        return True
    return (
        (value[0] == "{" and value[-1] == "}")
        or (value[0] == "<" and value[-1] == ">")
        or (value[0] == "$" and value[1] == "{" and value[-1] == "}")
    )


def is_placeholder(value: str) -> bool:
    """A value that stands for a secret without being one: `YOUR_API_KEY`, `<token>`, `${X}`, `****`,
    `changeme`, a repeated character, a sequence (detect-secrets' filters: templated, sequential)."""
    low = value.lower()
    if low in STOP_VALUES or PLACEHOLDER_WORDS.search(value):
        return True
    if len(set(low)) <= 2 or is_templated_secret(value) or is_sequential_string(value):
        return True
    return bool(_UUID.match(value)) and low.startswith("00000000")


def plausible(value: str, *, password: bool, quoted: bool, literal: bool) -> bool:
    """Could `value`, found by a secret-sounding name, be the secret itself?

    `password`: the name says password (short human-made values count); otherwise a token or key (long
    and random). `quoted`: the value was in quotes (a literal in code). `literal`: the context makes an
    unquoted value a literal too (an .env line, YAML, a header, a command-line flag), where in code an
    unquoted name is a variable (`password=password`)."""
    if not value or _SPACE.search(value) or is_placeholder(value) or REFERENCE.match(value):
        return False
    if HASH_LABEL.match(value):
        return False  # SHA256:cBvGAat63F... is a fingerprint
    if not quoted and (
        IDENTIFIER.match(value) or TYPE_NAME.match(value) or not literal and CODE_NAME.match(value)
    ):
        return False  # a variable or a type: login(password=pw_input), token: TokenCallback
    if not quoted and "=" in value.rstrip("="):
        return False  # an expression: pass: decided_mask==0
    if SECRET_WORD.search(value):
        return False  # challengePassword, my-secret-token, password1: a name or an example
    if ENV_NAME.match(value):
        return False  # the name of the variable that holds it: token = "GITHUB_TOKEN"
    if (
        TYPE_OR_CALL.match(value)
        or value[0] in "[{("
        or "(" in value
        or value.endswith((".txt", ".json", ".pem", ".key", ".env", ".yaml", ".yml"))
    ):
        return False  # a call or a file that holds the secret, not the secret
    if not any(c.isalnum() for c in value):
        return False  # detect-secrets' is_not_alphanumeric_string: '********'
    if KEBAB_WORDS.match(value):
        return False  # aws-secrets-manager, read-only, db.password: words, not a secret
    if value.isalpha() and (value.islower() or value.isupper() or value.istitle()):
        return False  # one plain word: required, REDACTED, Sunshine
    if value.isdigit() and len(value) < 12:
        return False  # a number: 3600, 8192, a port, a PIN-length setting
    if _UUID.match(value):
        return password  # an id, unless it is what a password field holds
    if password:
        return len(value) >= 6
    return len(value) >= 12 and (char_classes(value) >= 2 or entropy(value) >= 3.0)


# -- card numbers -------------------------------------------------------------------------------------

# Numbers every payment provider publishes for tests: never a person's card.
TEST_CARDS = frozenset(
    [
        "4242424242424242",
        "4000056655665556",
        "4111111111111111",
        "4012888888881881",
        "5555555555554444",
        "5200828282828210",
        "5105105105105100",
        "2223003122003222",
        "378282246310005",
        "371449635398431",
        "6011111111111117",
        "6011000990139424",
        "3056930009020004",
        "36227206271667",
        "3566002020360505",
        "4000000000000002",
        "4000000000009995",
        "4000000000000077",
        "4000002500003155",
        "4000000000003220",
    ]
)
CARD_CONTEXT = re.compile(
    r"card|visa|master\s?card|amex|american express|discover|credit|debit|\bcc\b|cvv|cvc|expir|\bexp\b|"
    r"pay|charge|billing|checkout|卡",
    re.IGNORECASE,
)


def luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


def card_scheme(digits: str) -> bool:
    """The prefix and length of a real scheme (Visa, Mastercard, Amex, Discover, JCB, Diners, UnionPay)."""
    n = len(digits)
    two, four = int(digits[:2]), int(digits[:4])
    if digits[0] == "4":
        return n in (13, 16, 19)
    if 51 <= two <= 55 or 2221 <= four <= 2720:
        return n == 16
    if two in (34, 37):
        return n == 15
    if digits.startswith(("6011", "65")) or 644 <= int(digits[:3]) <= 649:
        return n in (16, 19)
    if 3528 <= four <= 3589:
        return n in (16, 19)
    if two in (36, 38, 30):
        return n == 14
    if two == 62:
        return 16 <= n <= 19
    return False


def card_number(text: str, context: str) -> bool:
    """`text` (digits with optional space or dash groups) is a payment card number: a real scheme's
    prefix and length, a valid Luhn check digit, not a published test number, and either written in a
    card's groups (4-4-4-4, 4-6-5) or said to be a card by the words around it."""
    digits = "".join(c for c in text if c.isdigit())
    if not 13 <= len(digits) <= 19 or digits in TEST_CARDS or not card_scheme(digits) or not luhn(digits):
        return False
    groups = [len(g) for g in re.split(r"[ -]", text)]
    card_shaped = (
        groups in ([4, 4, 4, 4], [4, 6, 5], [4, 6, 4], [4, 4, 4, 4, 3])
        and len(set(re.findall(r"[ -]", text))) == 1
    )
    return card_shaped or bool(CARD_CONTEXT.search(context))
