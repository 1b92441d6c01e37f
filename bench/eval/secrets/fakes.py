"""Fake credentials in their real formats, and the random-looking values that are not credentials.

Every value is drawn from a seeded `random.Random`, so no real key is ever written, and each follows
the format its issuer documents, checksum included where there is one: GitHub and npm tokens end in the
base62 CRC32 of their random part, card numbers pass Luhn and start with a real scheme's prefix, an age
secret key is bech32 with its checksum, a JWT is three base64url parts whose first two decode to JSON,
a PyPI token is a macaroon whose base64 starts with the "pypi.org" location. A detector that checks a
checksum or decodes a part sees what it would see in a real transcript.

The second half are the look-alikes (git SHAs, digests, UUIDs, ULIDs, nanoids, base64 images, SSH public
keys): what a transcript is full of and what a careless detector destroys.
"""

from __future__ import annotations

import base64
import binascii
import json
import random
import string
import uuid

B62 = string.digits + string.ascii_uppercase + string.ascii_lowercase
ALNUM = string.ascii_letters + string.digits
URLSAFE = ALNUM + "-_"
B64 = ALNUM + "+/"
HEX = "0123456789abcdef"


def pick(rng: random.Random, chars: str, n: int) -> str:
    return "".join(rng.choice(chars) for _ in range(n))


def base62(n: int, width: int) -> str:
    out = ""
    while n:
        n, r = divmod(n, 62)
        out = B62[r] + out
    return out.rjust(width, "0")


def crc_token(rng: random.Random, prefix: str, n: int = 30) -> str:
    """GitHub's (and npm's) token layout: prefix, 30 random base62, the CRC32 of those in 6 base62."""
    body = pick(rng, ALNUM, n)
    return prefix + body + base62(binascii.crc32(body.encode()), 6)


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


# -- bech32 (age keys) --------------------------------------------------------------------------------

_BECH = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"


def _polymod(values: list[int]) -> int:
    gen = [0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3]
    chk = 1
    for v in values:
        top = chk >> 25
        chk = (chk & 0x1FFFFFF) << 5 ^ v
        for i in range(5):
            chk ^= gen[i] if (top >> i) & 1 else 0
    return chk


def bech32(hrp: str, data: bytes) -> str:
    acc, bits, five = 0, 0, []
    for b in data:
        acc = (acc << 8) | b
        bits += 8
        while bits >= 5:
            bits -= 5
            five.append((acc >> bits) & 31)
    if bits:
        five.append((acc << (5 - bits)) & 31)
    expanded = [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp]
    pm = _polymod(expanded + five + [0] * 6) ^ 1
    check = [(pm >> 5 * (5 - i)) & 31 for i in range(6)]
    return hrp + "1" + "".join(_BECH[d] for d in five + check)


# -- Luhn --------------------------------------------------------------------------------------------


def luhn_digit(partial: str) -> str:
    total = 0
    for i, ch in enumerate(reversed(partial)):
        d = int(ch)
        if i % 2 == 0:
            d *= 2
            d -= 9 if d > 9 else 0
        total += d
    return str((10 - total % 10) % 10)


def card(rng: random.Random, grouped: str = "space") -> str:
    prefix, length = rng.choice([("4", 16), ("51", 16), ("55", 16), ("2221", 16), ("37", 15), ("6011", 16)])
    body = prefix + pick(rng, string.digits, length - len(prefix) - 1)
    number = body + luhn_digit(body)
    if grouped == "none":
        return number
    sep = " " if grouped == "space" else "-"
    if length == 15:
        return sep.join([number[:4], number[4:10], number[10:]])
    return sep.join(number[i : i + 4] for i in range(0, 16, 4))


# -- secrets, by kind --------------------------------------------------------------------------------


def _jwt(rng: random.Random) -> str:
    header = {"alg": rng.choice(["HS256", "RS256", "ES256"]), "typ": "JWT"}
    claims = {
        "sub": str(rng.randrange(10**5, 10**9)),
        "iat": rng.randrange(1_600_000_000, 1_800_000_000),
        rng.choice(["email", "name", "role"]): rng.choice(["ana@example.org", "Dana", "admin", "service"]),
    }
    sig = bytes(rng.randrange(256) for _ in range(rng.choice([32, 64])))
    return ".".join(
        [
            b64url(json.dumps(header, separators=(",", ":")).encode()),
            b64url(json.dumps(claims).encode()),
            b64url(sig),
        ]
    )


def _private_key(rng: random.Random) -> str:
    kind = rng.choice(["RSA PRIVATE KEY", "PRIVATE KEY", "OPENSSH PRIVATE KEY", "EC PRIVATE KEY"])
    raw = base64.b64encode(bytes(rng.randrange(256) for _ in range(rng.choice([120, 240, 400])))).decode()
    lines = [raw[i : i + 64] for i in range(0, len(raw), 64)]
    return "\n".join([f"-----BEGIN {kind}-----", *lines, f"-----END {kind}-----"])


def _password(rng: random.Random) -> str:
    words = ["Tiger", "Maple", "orbit", "Quartz", "river", "Falcon", "ember", "Nimbus", "cobalt", "Saffron"]
    style = rng.randrange(4)
    if style == 0:
        return pick(rng, ALNUM + "!@#%^&*", rng.randint(12, 20))
    if style == 1:
        return rng.choice(words) + str(rng.randint(10, 9999)) + rng.choice("!#$%?")
    if style == 2:
        return "-".join(rng.choice(words).lower() for _ in range(3)) + str(rng.randint(1, 99))
    return rng.choice(["S3cure", "P4ssw0rd", "Adm1n", "R00t", "Ch4ng3d"]) + "_" + pick(rng, ALNUM, 6)


def _openai(rng: random.Random) -> str:
    """Project and service-account keys (sk-proj-, sk-svcacct-) use - and _; the legacy sk- keys are 20
    alphanumerics, "T3BlbkFJ", 20 more."""
    prefix = rng.choice(["sk-proj-", "sk-svcacct-", "sk-"])
    chars = ALNUM if prefix == "sk-" else URLSAFE
    n = 20 if prefix == "sk-" else rng.choice([20, 74])
    return prefix + pick(rng, chars, n) + "T3BlbkFJ" + pick(rng, chars, n)


def _discord(rng: random.Random) -> str:
    user = base64.b64encode(str(rng.randrange(10**17, 10**18)).encode()).decode().rstrip("=")
    return f"{user}.{pick(rng, URLSAFE, 6)}.{pick(rng, URLSAFE, 27)}"


def _pypi(rng: random.Random) -> str:
    tail = bytes(rng.randrange(256) for _ in range(rng.randint(110, 130)))
    return "pypi-AgEIcHlwaS5vcmc" + b64url(tail)


SECRETS = {
    "aws-access-key": lambda r: r.choice(["AKIA", "ASIA"]) + pick(r, string.ascii_uppercase + "234567", 16),
    "aws-secret-key": lambda r: pick(r, B64, 40),
    "github-token": lambda r: crc_token(r, r.choice(["ghp_", "gho_", "ghu_", "ghs_", "ghr_"])),
    "github-fine-grained": lambda r: (
        f"github_pat_11{pick(r, string.ascii_uppercase + string.digits, 20)}_{pick(r, ALNUM, 59)}"
    ),
    "gitlab-token": lambda r: "glpat-" + pick(r, URLSAFE, 20),
    "slack-token": lambda r: (
        f"{r.choice(['xoxb', 'xoxp'])}-{r.randrange(10**10, 10**13)}-{r.randrange(10**10, 10**13)}-{pick(r, ALNUM, 24)}"
    ),
    "slack-webhook": lambda r: (
        f"https://hooks.slack.com/services/T{pick(r, string.ascii_uppercase + string.digits, 8)}/B{pick(r, string.ascii_uppercase + string.digits, 10)}/{pick(r, ALNUM, 24)}"
    ),
    "stripe-key": lambda r: (
        r.choice(["sk_live_", "rk_live_", "sk_test_"]) + pick(r, ALNUM, r.choice([24, 99]))
    ),
    "private-key": _private_key,
    "jwt": _jwt,
    "password": _password,
    "anthropic-key": lambda r: r.choice(["sk-ant-api03-", "sk-ant-admin01-"]) + pick(r, URLSAFE, 93) + "AA",
    "openai-key": _openai,
    "deepseek-key": lambda r: "sk-" + pick(r, HEX, 32),
    "huggingface-token": lambda r: "hf_" + pick(r, string.ascii_letters, 34),
    "google-api-key": lambda r: "AIza" + pick(r, URLSAFE, 35),
    "google-oauth-token": lambda r: "ya29." + pick(r, URLSAFE, r.randint(120, 180)),
    "npm-token": lambda r: crc_token(r, "npm_"),
    "pypi-token": _pypi,
    "twilio-key": lambda r: "SK" + pick(r, HEX, 32),
    "sendgrid-key": lambda r: f"SG.{pick(r, URLSAFE, 22)}.{pick(r, URLSAFE, 43)}",
    "groq-key": lambda r: "gsk_" + pick(r, ALNUM, 52),
    "xai-key": lambda r: "xai-" + pick(r, ALNUM, 80),
    "replicate-token": lambda r: "r8_" + pick(r, ALNUM, 37),
    "perplexity-key": lambda r: "pplx-" + pick(r, ALNUM, 48),
    "digitalocean-token": lambda r: "dop_v1_" + pick(r, HEX, 64),
    "shopify-token": lambda r: r.choice(["shpat_", "shpss_"]) + pick(r, HEX, 32),
    "docker-token": lambda r: "dckr_pat_" + pick(r, URLSAFE, 27),
    "vault-token": lambda r: "hvs." + pick(r, URLSAFE, 90),
    "databricks-token": lambda r: "dapi" + pick(r, HEX, 32),
    "age-secret-key": lambda r: bech32("age-secret-key-", bytes(r.randrange(256) for _ in range(32))).upper(),
    "telegram-bot-token": lambda r: f"{r.randrange(10**8, 10**10)}:AA{pick(r, URLSAFE, 33)}",
    "discord-bot-token": _discord,
    "mailchimp-key": lambda r: pick(r, HEX, 32) + f"-us{r.randint(1, 21)}",
    "azure-storage-key": lambda r: base64.b64encode(bytes(r.randrange(256) for _ in range(64))).decode(),
    "square-secret": lambda r: "sq0csp-" + pick(r, URLSAFE, 43),
    "postman-key": lambda r: f"PMAK-{pick(r, HEX, 24)}-{pick(r, HEX, 34)}",
    "linear-key": lambda r: "lin_api_" + pick(r, ALNUM, 40),
    "notion-token": lambda r: "ntn_" + pick(r, ALNUM, 46),
    "new-relic-key": lambda r: "NRAK-" + pick(r, string.ascii_uppercase + string.digits, 27),
    "grafana-token": lambda r: f"glsa_{pick(r, ALNUM, 32)}_{pick(r, HEX, 8)}",
    "supabase-token": lambda r: "sbp_" + pick(r, HEX, 40),
    "doppler-token": lambda r: "dp.pt." + pick(r, ALNUM, 43),
    "sentry-token": lambda r: (
        "sntrys_"
        + b64url(json.dumps({"iat": r.randrange(10**9, 2 * 10**9), "url": "https://sentry.io"}).encode())
        + "_"
        + pick(r, URLSAFE, 43)
    ),
    "generic-token": lambda r: pick(
        r, ALNUM, r.choice([32, 40, 48])
    ),  # no prefix: only its name says what it is
    "hex-secret": lambda r: pick(r, HEX, r.choice([32, 40, 64])),
    "card-number": lambda r: card(r, r.choice(["space", "dash", "none"])),
}

# Kinds that are a bare random token: the surrounding name (MISTRAL_API_KEY=, "auth_token":) is the only clue.
UNPREFIXED = ("generic-token", "hex-secret", "aws-secret-key", "password")


def secret(rng: random.Random, kind: str) -> str:
    return str(SECRETS[kind](rng))


# -- look-alikes that are not secrets ----------------------------------------------------------------


def _png(rng: random.Random, n: int) -> str:
    raw = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(rng.randrange(256) for _ in range(n))
    return base64.b64encode(raw).decode()


def _ssh_pub(rng: random.Random) -> str:
    key = b"\x00\x00\x00\x0bssh-ed25519\x00\x00\x00\x20" + bytes(rng.randrange(256) for _ in range(32))
    return "ssh-ed25519 " + base64.b64encode(key).decode()


def _ulid(rng: random.Random) -> str:
    return pick(rng, "0123456789ABCDEFGHJKMNPQRSTVWXYZ", 26)


LOOKALIKES = {
    "git-sha": lambda r: pick(r, HEX, 40),
    "short-sha": lambda r: pick(r, HEX, r.choice([7, 8, 12])),
    "sha256": lambda r: pick(r, HEX, 64),
    "md5": lambda r: pick(r, HEX, 32),
    "sha512-integrity": lambda r: (
        "sha512-" + base64.b64encode(bytes(r.randrange(256) for _ in range(64))).decode()
    ),
    "uuid": lambda r: str(uuid.UUID(int=r.getrandbits(128), version=4)),
    "ulid": _ulid,
    "nanoid": lambda r: pick(r, URLSAFE, 21),
    "png-base64": lambda r: _png(r, r.choice([60, 200, 700])),
    "ssh-public-key": _ssh_pub,
    "docker-id": lambda r: pick(r, HEX, 64),
    "pod-suffix": lambda r: (
        f"{pick(r, 'bcdfghjklmnpqrstvwxz2456789', 10)}-{pick(r, 'bcdfghjklmnpqrstvwxz2456789', 5)}"
    ),
    "request-id": lambda r: f"req_{pick(r, ALNUM, 24)}",
    "go-sum": lambda r: "h1:" + base64.b64encode(bytes(r.randrange(256) for _ in range(32))).decode(),
    "order-number": lambda r: str(r.randrange(10**15, 10**16)),
    "anthropic-msg-id": lambda r: "msg_01" + pick(r, ALNUM, 22),
    "tool-use-id": lambda r: "toolu_01" + pick(r, ALNUM, 22),
    "openai-completion-id": lambda r: "chatcmpl-" + pick(r, ALNUM, 29),
    "openai-object-id": lambda r: (
        r.choice(["asst_", "thread_", "file-", "batch_", "run_"]) + pick(r, ALNUM, 24)
    ),
    "stripe-object-id": lambda r: r.choice(["cus_", "pi_3", "price_1", "sub_1", "ch_3"]) + pick(r, ALNUM, 24),
    "eth-address": lambda r: "0x" + pick(r, HEX + "ABCDEF", 40),
    "base64-json-cursor": lambda r: base64.b64encode(
        json.dumps({"id": r.randrange(10**6), "dir": "next"}).encode()
    ).decode(),
    "slack-channel-id": lambda r: "C0" + pick(r, string.ascii_uppercase + string.digits, 9),
}


def lookalike(rng: random.Random, kind: str) -> str:
    return str(LOOKALIKES[kind](rng))
