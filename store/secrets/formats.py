"""Credentials that carry their own format: a fixed prefix, a length, a charset (and sometimes a checksum).

Two sources. detect-secrets' plugins (AWS, GitHub, GitLab, Slack, Stripe, JWT, npm, PyPI, SendGrid,
Twilio, Discord, Telegram, Mailchimp, Azure storage, Square): their maintained patterns are used as they
are, each found match checked the way the plugin does (a JWT's parts must decode). Then the formats it
lacks, mostly today's AI services and developer platforms (Anthropic, OpenAI project and service keys,
Hugging Face, Google, Groq, xAI, Replicate, Perplexity, OpenRouter, DigitalOcean, Docker, Vault, age...).

Every rule names the kind that goes in the marker (`[secret: anthropic-key]`). A match must stand alone
(no letter or digit glued before it) and must not be a placeholder made of the format's prefix and
x's or a doc's EXAMPLE.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache


@dataclass(frozen=True)
class Rule:
    kind: str
    pattern: re.Pattern[str]
    group: int = 0  # the group that holds the secret (0: the whole match)
    skip: int = 0  # characters of the match that are its label, not the secret (AccountKey=)
    check: Callable[[str], bool] | None = None  # a further test the plugin makes (a JWT decodes)
    # Literal strings one of which a line must hold for the pattern to be tried there (empty: always):
    # `in` is a fast substring search, a regex is a slow one (store.secrets.detector says why it matters).
    needles: tuple[str, ...] = ()


def _c(pattern: str, flags: int = 0) -> re.Pattern[str]:
    return re.compile(pattern, flags)


# The formats detect-secrets does not know (checked against each issuer's documentation).
OWN_RULES: tuple[Rule, ...] = (
    Rule(
        "anthropic-key", _c(r"sk-ant-(?:api|admin|oat|ort)\d{2}-[A-Za-z0-9_-]{80,120}"), needles=("sk-ant-",)
    ),
    Rule("openai-key", _c(r"sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{40,200}"), needles=("sk-",)),
    Rule("openrouter-key", _c(r"sk-or-v1-[a-f0-9]{64}"), needles=("sk-or-v1-",)),
    Rule("huggingface-token", _c(r"\bhf_[A-Za-z]{34,40}\b"), needles=("hf_",)),
    Rule("google-api-key", _c(r"AIza[0-9A-Za-z_-]{35}"), needles=("AIza",)),
    Rule("google-oauth-token", _c(r"\bya29\.[0-9A-Za-z_-]{30,}"), needles=("ya29.",)),
    Rule("github-token", _c(r"github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}"), needles=("github_pat_",)),
    Rule("npm-token", _c(r"\bnpm_[A-Za-z0-9]{36}\b"), needles=("npm_",)),
    Rule("stripe-key", _c(r"\b(?:sk|rk)_(?:live|test)_[0-9a-zA-Z]{24,247}"), needles=("k_live_", "k_test_")),
    Rule("stripe-webhook-secret", _c(r"\bwhsec_[A-Za-z0-9+/=]{24,}"), needles=("whsec_",)),
    Rule("groq-key", _c(r"\bgsk_[A-Za-z0-9]{48,56}\b"), needles=("gsk_",)),
    Rule("xai-key", _c(r"\bxai-[A-Za-z0-9]{70,90}\b"), needles=("xai-",)),
    Rule("replicate-token", _c(r"\br8_[A-Za-z0-9]{37}\b"), needles=("r8_",)),
    Rule("perplexity-key", _c(r"\bpplx-[A-Za-z0-9]{40,56}\b"), needles=("pplx-",)),
    Rule("tavily-key", _c(r"\btvly-(?:dev-|prod-)?[A-Za-z0-9]{32}\b"), needles=("tvly-",)),
    Rule("langsmith-key", _c(r"\blsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}\b"), needles=("lsv2_",)),
    Rule("pinecone-key", _c(r"\bpcsk_[A-Za-z0-9_]{40,}\b"), needles=("pcsk_",)),
    Rule("digitalocean-token", _c(r"\bdo[opr]_v1_[a-f0-9]{64}\b"), needles=("do",)),
    Rule("shopify-token", _c(r"\bshp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}\b"), needles=("shp",)),
    Rule("docker-token", _c(r"\bdckr_pat_[A-Za-z0-9_-]{27,}"), needles=("dckr_pat_",)),
    Rule("vault-token", _c(r"\bhv[sbr]\.[A-Za-z0-9_-]{24,}"), needles=("hv",)),
    Rule("databricks-token", _c(r"\bdapi[a-f0-9]{32}(?:-\d)?\b"), needles=("dapi",)),
    Rule(
        "age-secret-key",
        _c(r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"),
        needles=("AGE-SECRET-KEY-1",),
    ),
    Rule("postman-key", _c(r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b"), needles=("PMAK-",)),
    Rule("linear-key", _c(r"\blin_(?:api|oauth)_[A-Za-z0-9]{40}\b"), needles=("lin_",)),
    Rule(
        "notion-token",
        _c(r"\b(?:ntn_[A-Za-z0-9]{40,50}|secret_[A-Za-z0-9]{43})\b"),
        needles=("ntn_", "secret_"),
    ),
    Rule("new-relic-key", _c(r"\bNR(?:AK|AA|II)-[A-Z0-9]{27}\b"), needles=("NR",)),
    Rule(
        "grafana-token",
        _c(r"\b(?:glsa_[A-Za-z0-9]{32}_[a-f0-9]{8}|glc_[A-Za-z0-9+/]{32,}={0,2})"),
        needles=("glsa_", "glc_"),
    ),
    Rule("supabase-token", _c(r"\bsbp_[a-f0-9]{40}\b"), needles=("sbp_",)),
    Rule("doppler-token", _c(r"\bdp\.(?:pt|st|ct|sa|scim|audit)\.[A-Za-z0-9]{40,44}\b"), needles=("dp.",)),
    Rule("sentry-token", _c(r"\bsntry[su]_[A-Za-z0-9+/=_-]{40,}"), needles=("sntry",)),
    Rule("atlassian-token", _c(r"\bATATT3[A-Za-z0-9_=-]{150,}"), needles=("ATATT3",)),
    Rule("figma-token", _c(r"\bfigd_[A-Za-z0-9_-]{40,}"), needles=("figd_",)),
    Rule("pulumi-token", _c(r"\bpul-[a-f0-9]{40}\b"), needles=("pul-",)),
    Rule("fly-token", _c(r"\bfo1_[A-Za-z0-9_-]{43}\b"), needles=("fo1_",)),
    Rule("mailgun-key", _c(r"\bkey-[0-9a-f]{32}\b"), needles=("key-",)),
    Rule("tailscale-key", _c(r"\btskey-[a-z]+-[A-Za-z0-9]{6,}-[A-Za-z0-9]{16,}"), needles=("tskey-",)),
    Rule("firecrawl-key", _c(r"\bfc-[a-f0-9]{32}\b"), needles=("fc-",)),
)

# Which plugin pattern is which kind: (module, class, index in its denylist or None for all, kind,
# group, needles: literals one of which a line must hold for the pattern to be tried; empty: always).
_PLUGINS: tuple[tuple[str, str, int | None, str, int, tuple[str, ...]], ...] = (
    ("aws", "AWSKeyDetector", 0, "aws-access-key", 0, ("A3T", "ABIA", "ACCA", "AKIA", "ASIA")),
    ("aws", "AWSKeyDetector", 1, "aws-secret-key", 1, ("aws",)),
    ("azure_storage_key", "AzureStorageKeyDetector", None, "azure-storage-key", 0, ("AccountKey=",)),
    ("discord", "DiscordBotTokenDetector", None, "discord-bot-token", 0, ()),
    (
        "github_token",
        "GitHubTokenDetector",
        None,
        "github-token",
        0,
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    ),
    ("gitlab_token", "GitLabTokenDetector", None, "gitlab-token", 0, ("gl", "GR1348941")),
    ("jwt", "JwtTokenDetector", None, "jwt", 0, ("eyJ",)),
    ("mailchimp", "MailchimpDetector", None, "mailchimp-key", 0, ("-us",)),
    ("npm", "NpmDetector", None, "npm-token", 1, ("_authToken",)),
    ("openai", "OpenAIDetector", None, "openai-key", 0, ("T3BlbkFJ",)),
    ("pypi_token", "PypiTokenDetector", None, "pypi-token", 0, ("pypi-",)),
    ("sendgrid", "SendGridDetector", None, "sendgrid-key", 0, ("SG.",)),
    ("slack", "SlackDetector", 0, "slack-token", 0, ("xox",)),
    ("slack", "SlackDetector", 1, "slack-webhook", 0, ("hooks.slack.com",)),
    ("square_oauth", "SquareOAuthDetector", None, "square-secret", 0, ("sq0csp-",)),
    ("stripe", "StripeDetector", None, "stripe-key", 0, ("k_live_",)),
    ("telegram_token", "TelegramBotTokenDetector", None, "telegram-bot-token", 0, (":",)),
    ("twilio", "TwilioKeyDetector", None, "twilio-key", 0, ("AC", "SK")),
)


def jwt_formally_valid(token: str) -> bool:
    """detect-secrets' JwtTokenDetector.is_formally_valid, the same steps (tests check they agree): every
    dot-separated part decodes as base64url, and the first two are JSON. Here so that checking a JWT does
    not import the package (store.secrets.snapshot says why)."""
    for i, part_str in enumerate(token.split(".")):
        try:
            part = part_str.encode("ascii")
            pad = len(part) % 4
            if pad == 1:
                return False
            decoded = base64.urlsafe_b64decode(part + {0: b"", 2: b"==", 3: b"==="}[pad])
            if i < 2:
                json.loads(decoded.decode("utf-8"))
        except (TypeError, ValueError, UnicodeDecodeError):
            return False
    return True


@cache
def plugin_rules() -> tuple[Rule, ...]:
    """detect-secrets' own patterns as rules: from store.secrets.snapshot when it is the installed
    version's (no import), else from the package itself (~0.15 s to load)."""
    import importlib

    from store.secrets import snapshot

    from_snapshot = snapshot.current()
    rules = []
    for module, cls_name, index, kind, group, needles in _PLUGINS:
        if from_snapshot:
            patterns = [re.compile(p, f) for p, f in snapshot.PATTERNS[(module, cls_name)]]
            check = jwt_formally_valid if kind == "jwt" else None
        else:
            cls = getattr(importlib.import_module(f"detect_secrets.plugins.{module}"), cls_name)
            patterns = list(cls.denylist)
            check = getattr(cls, "is_formally_valid", None)
        chosen = patterns if index is None else [patterns[index]]
        skip = len("AccountKey=") if kind == "azure-storage-key" else 0
        rules += [Rule(kind, p, group, skip, check, needles) for p in chosen]
    return tuple(rules)


@cache
def all_rules() -> tuple[Rule, ...]:
    """Every rule, detect-secrets' first (built once: the detector asks for them on every line)."""
    return (*plugin_rules(), *OWN_RULES)
