"""detect-secrets' plugin patterns, read once from the package and kept here, so that a process does not
import it to get them.

Why: importing any detect_secrets module runs the package's __init__, which loads its scan machinery and
`requests` (its plugins can verify a key online, which memapp never does): ~0.15 s of CPU in every
process that meets a text the prefilter lets through. An import of 3,000 messages without embedding
costs ~1 s, so that alone was half of the 1.2x budget the secret gate has (`python -m bench redaction`).

The patterns stay the library's: `live()` reads them from the installed package, tests/store/secrets/
test_snapshot.py checks that they equal these, and when the installed version is not VERSION the
detector reads them from the package as before (store.secrets.formats.plugin_rules). To refresh after
an upgrade: print `live()` and paste it below with the new VERSION.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

VERSION = "1.5.0"

# (plugin module, class) -> its denylist as (pattern, flags), in the package's order.
PATTERNS: dict[tuple[str, str], tuple[tuple[str, int], ...]] = {
    ("aws", "AWSKeyDetector"): (
        ("(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{16}", 32),
        ("aws.{0,20}?(?:key|pwd|pw|password|pass|token).{0,20}?[\\'\\\"]([0-9a-zA-Z/+]{40})[\\'\\\"]", 34),
    ),
    ("azure_storage_key", "AzureStorageKeyDetector"): (("AccountKey=[a-zA-Z0-9+\\/=]{88}", 32),),
    ("discord", "DiscordBotTokenDetector"): (
        ("[MNO][a-zA-Z\\d_-]{23,25}\\.[a-zA-Z\\d_-]{6}\\.[a-zA-Z\\d_-]{27}", 32),
    ),
    ("github_token", "GitHubTokenDetector"): (("(ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9_]{36}", 32),),
    ("gitlab_token", "GitLabTokenDetector"): (
        ("(glpat|gldt|glft|glsoat|glrt)-[A-Za-z0-9_\\-]{20,50}(?!\\w)", 32),
        ("GR1348941[A-Za-z0-9_\\-]{20,50}(?!\\w)", 32),
        ("glcbt-([0-9a-fA-F]{2}_)?[A-Za-z0-9_\\-]{20,50}(?!\\w)", 32),
        ("glimt-[A-Za-z0-9_\\-]{25}(?!\\w)", 32),
        ("glptt-[A-Za-z0-9_\\-]{40}(?!\\w)", 32),
        ("glagent-[A-Za-z0-9_\\-]{50,1024}(?!\\w)", 32),
        ("gloas-[A-Za-z0-9_\\-]{64}(?!\\w)", 32),
    ),
    ("jwt", "JwtTokenDetector"): (("eyJ[A-Za-z0-9-_=]+\\.[A-Za-z0-9-_=]+\\.?[A-Za-z0-9-_.+/=]*?", 32),),
    ("mailchimp", "MailchimpDetector"): (("[0-9a-z]{32}-us[0-9]{1,2}", 32),),
    ("npm", "NpmDetector"): (("\\/\\/.+\\/:_authToken=\\s*((npm_.+)|([A-Fa-f0-9-]{36})).*", 32),),
    ("openai", "OpenAIDetector"): (("sk-[A-Za-z0-9-_]*[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}", 32),),
    ("pypi_token", "PypiTokenDetector"): (
        ("pypi-AgEIcHlwaS5vcmc[A-Za-z0-9-_]{70,}", 32),
        ("pypi-AgENdGVzdC5weXBpLm9yZw[A-Za-z0-9-_]{70,}", 32),
    ),
    ("sendgrid", "SendGridDetector"): (("SG\\.[a-zA-Z0-9_-]{22}\\.[a-zA-Z0-9_-]{43}", 32),),
    ("slack", "SlackDetector"): (
        ("xox(?:a|b|p|o|s|r)-(?:\\d+-)+[a-z0-9]+", 34),
        ("https://hooks\\.slack\\.com/services/T[a-zA-Z0-9_]+/B[a-zA-Z0-9_]+/[a-zA-Z0-9_]+", 98),
    ),
    ("square_oauth", "SquareOAuthDetector"): (("sq0csp-[0-9A-Za-z\\\\\\-_]{43}", 32),),
    ("stripe", "StripeDetector"): (("(?:r|s)k_live_[0-9a-zA-Z]{24}", 32),),
    ("telegram_token", "TelegramBotTokenDetector"): (("\\d{8,10}:[0-9A-Za-z_-]{35}", 32),),
    ("twilio", "TwilioKeyDetector"): (
        ("AC[a-z0-9]{32}", 32),
        ("SK[a-z0-9]{32}", 32),
    ),
}


def installed_version() -> str | None:
    """The installed detect-secrets' version, read from its __version__.py without importing the package
    (its __init__ is the cost this module avoids); None when it is not installed."""
    spec = importlib.util.find_spec("detect_secrets")
    if spec is None or spec.origin is None:
        return None
    try:
        text = (Path(spec.origin).parent / "__version__.py").read_text(encoding="utf-8")
    except OSError:
        return None
    m = re.search(r"VERSION\s*=\s*['\"]([^'\"]+)['\"]", text)
    return m.group(1) if m else None


def current() -> bool:
    """Whether PATTERNS are the installed package's (same version)."""
    return installed_version() == VERSION


def live() -> dict[tuple[str, str], tuple[tuple[str, int], ...]]:
    """The same table read from the installed package (imports it)."""
    out = {}
    for module, cls_name in PATTERNS:
        cls = getattr(importlib.import_module(f"detect_secrets.plugins.{module}"), cls_name)
        out[(module, cls_name)] = tuple((p.pattern, int(p.flags)) for p in cls.denylist)
    return out
