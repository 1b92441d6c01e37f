"""The secret detector (store.secrets): every format it knows, the look-alikes it must leave alone, the
markers, idempotence, multi-line keys, card numbers, and the prefilter that keeps prose off the slow path.

Fake values come from the evaluation's generator (bench/eval/secrets/fakes.py: real formats, checksums
included, seeded random: never a real key).
"""

from __future__ import annotations

import importlib.util
import random
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from store.secrets import find_secrets, redact_text
from store.secrets.detector import worth_a_look
from store.secrets.values import card_number, luhn

ROOT = Path(__file__).resolve().parents[3]


def _fakes() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "secret_fakes", ROOT / "bench" / "eval" / "secrets" / "fakes.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


FAKES = _fakes()
# Kinds whose marker names them (a bare random value is named by its place instead: token, password...).
NAMED_BY_FORMAT = [
    "aws-access-key",
    "github-token",
    "github-fine-grained",
    "gitlab-token",
    "slack-token",
    "stripe-key",
    "jwt",
    "anthropic-key",
    "openai-key",
    "huggingface-token",
    "google-api-key",
    "google-oauth-token",
    "npm-token",
    "pypi-token",
    "sendgrid-key",
    "groq-key",
    "xai-key",
    "replicate-token",
    "perplexity-key",
    "digitalocean-token",
    "shopify-token",
    "docker-token",
    "vault-token",
    "databricks-token",
    "age-secret-key",
    "telegram-bot-token",
    "postman-key",
    "linear-key",
    "notion-token",
    "new-relic-key",
    "grafana-token",
    "supabase-token",
    "doppler-token",
]


@pytest.mark.parametrize("kind", NAMED_BY_FORMAT)
def test_each_format_is_found_in_prose_and_named(kind: str) -> None:
    rng = random.Random(kind)
    for _ in range(3):
        value = FAKES.secret(rng, kind)
        text = f"here it is: {value} (rotate it later)"
        out = redact_text(text)
        assert value not in out
        assert out.startswith("here it is: [secret: ") and out.endswith("] (rotate it later)")
        expected = "github-token" if kind == "github-fine-grained" else kind
        assert f"[secret: {expected}]" in out, out


def test_the_ai_keys_get_their_own_names() -> None:
    out = redact_text(
        "ANTHROPIC_API_KEY=sk-ant-api03-" + "a1B2c3D4e5" * 9 + "xyzAA\n"
        "OPENAI_API_KEY=sk-proj-" + "Zq9" * 20 + "T3BlbkFJ" + "k7L" * 20 + "\n"
        "HF_TOKEN=hf_" + "abcdefghijKLMNOPQRSTuvwxyzABCDEFgh" + "\n"
        "GOOGLE_API_KEY=AIza" + "SyD3x9-AbCdEfGhIjKlMnOpQrStUvWxYz01"
    )
    assert out.splitlines() == [
        "ANTHROPIC_API_KEY=[secret: anthropic-key]",
        "OPENAI_API_KEY=[secret: openai-key]",
        "HF_TOKEN=[secret: huggingface-token]",
        "GOOGLE_API_KEY=[secret: google-api-key]",
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("DB_PASSWORD=Tr0ub4dor&3x", "DB_PASSWORD=[secret: password]"),
        ('config = {"api_key": "f8Kq2LmX9vRt4WzB7nY3cP6s"}', 'config = {"api_key": "[secret: api-key]"}'),
        ("  password: S3cure_Q5l1kz\n", "  password: [secret: password]\n"),
        (
            "curl -u admin:Hunter2-Prod http://localhost:15672/api",
            "curl -u admin:[secret: password] http://localhost:15672/api",
        ),
        (
            "postgres://app:Pa55w0rd!x@db.internal:5432/app",
            "postgres://app:[secret: url-password]@db.internal:5432/app",
        ),
        (
            '-H "Authorization: Bearer 8f3kd93lKs02mZxQ71pAw"',
            '-H "Authorization: Bearer [secret: bearer-token]"',
        ),
        ("mysql -u root -pQw3rty99 -h 127.0.0.1", "mysql -u root -p[secret: password] -h 127.0.0.1"),
        (
            "The wifi password at the office is Maple2024!",
            "The wifi password at the office is [secret: password]",
        ),
        (
            "AWS_SECRET_ACCESS_KEY=gsCAOhOh8aGfm5xENKTXCgMg72vKQjGB2kjs3Z9C",
            "AWS_SECRET_ACCESS_KEY=[secret: aws-secret-key]",
        ),
    ],
)
def test_secrets_known_by_their_name_or_place(text: str, expected: str) -> None:
    assert redact_text(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "commit 3f786850e387550fdab836ed7e6dc881de23001b",
        '"integrity": "sha512-Dpv2cuD7x1y8rSs1nQ3cJx9Ck5gGj3WmP1T1XnQvKZ2WZrB0yqK9y8G4z1a7b6c5d4e3f2g1h0i9j8k7l6m5n4o3p2q1r0s==",',
        '{"id": "6f1c2a9e-3b7d-4c1e-9a2f-8d7e6c5b4a3f", "status": "ok"}',
        '{"id": "msg_01XFDUDYJgAACzvnptvVoYEL", "type": "message"}',
        '{"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "Bash"}',
        '<img src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==">',
        "OPENAI_API_KEY=sk-...",
        'export OPENAI_API_KEY="YOUR_API_KEY"',
        'api_key = os.environ["OPENAI_API_KEY"]',
        "password: ${DB_PASSWORD}",
        "GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}",
        "DATABASE_URL=postgres://user:password@localhost:5432/mydb",
        "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE",
        "Use the test card 4242 4242 4242 4242 with any future date.",
        "password_policy:\n  min_length: 12",
        "token usage: 1532 prompt + 410 completion",
        "class AbstractSingletonProxyFactoryBean extends Base {}",
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl ana@laptop",
        "Rotate your AWS access keys every 90 days and never commit them.",
        "def test_refresh_token_is_rotated_after_password_change(client):",
        "elif token == TOKEN_STRING:",
        "self, private_key: ed25519.Ed25519PrivateKey",
        'print(f"password={password!r}")',
        "Order #4539578763621486 shipped on 3 Nov.",
    ],
)
def test_look_alikes_survive(text: str) -> None:
    assert redact_text(text) == text
    assert find_secrets(text) == []


def test_a_private_key_block_goes_whole_and_a_lone_header_stays() -> None:
    body = "\n".join(
        "MIIEowIBAAKCAQEA1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8s9t0u1v2w3x4y5z6A7B8"[:64] for _ in range(5)
    )
    text = f"before\n-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----\nafter"
    assert redact_text(text) == "before\n[secret: private-key]\nafter"
    # escaped inside JSON (a service-account file), END cut off
    escaped = '{"private_key": "-----BEGIN PRIVATE KEY-----\\n' + body.replace("\n", "\\n") + '", "x": 1}'
    out = redact_text(escaped)
    assert "MIIEowIBAAKCAQEA" not in out and out.endswith('", "x": 1}')
    header_only = '_SK_START = b"-----BEGIN OPENSSH PRIVATE KEY-----"'
    assert redact_text(header_only) == header_only


def test_markers_are_left_alone_so_redacting_twice_changes_nothing() -> None:
    rng = random.Random(7)
    text = "\n".join(
        f"{name}={FAKES.secret(rng, kind)}"
        for name, kind in [
            ("GH", "github-token"),
            ("DB_PASSWORD", "password"),
            ("X", "jwt"),
            ("K", "anthropic-key"),
        ]
    )
    once = redact_text(text)
    assert once.count("[secret: ") == 4
    assert redact_text(once) == once
    assert redact_text("password: [secret: password]") == "password: [secret: password]"


def test_card_numbers_need_luhn_a_scheme_and_card_shape_or_words() -> None:
    rng = random.Random(3)
    number = FAKES.card(rng, "none")
    assert luhn(number)
    assert card_number(number, f"pay with {number}")
    assert not card_number(number, f"order {number}")  # no card words, no card groups
    grouped = " ".join(number[i : i + 4] for i in range(0, 16, 4)) if len(number) == 16 else number
    if len(number) == 16:
        assert card_number(grouped, grouped)
    broken = number[:-1] + str((int(number[-1]) + 1) % 10)
    assert not card_number(broken, f"my card {broken}")
    assert redact_text(f"my Visa is {number}, exp 09/27") == "my Visa is [secret: card-number], exp 09/27"


def test_prose_never_reaches_the_slow_path() -> None:
    prose = (
        "We walked along the river after lunch and talked about the new kitchen, the garden, and "
        "whether the children would like the museum on Saturday morning."
    )
    assert not worth_a_look(prose)
    assert find_secrets(prose * 20) == []


def test_detect_secrets_is_not_imported_to_find_secrets() -> None:
    """Its patterns and filters come from store.secrets.snapshot (tests/store/secrets/test_snapshot.py
    keeps them equal): importing the package (and `requests`) cost ~0.15 s of CPU per process."""
    code = (
        "import sys\n"
        "from store.secrets import redact_text\n"
        "redact_text('a plain sentence about the weather and the garden')\n"
        "out = redact_text('OPENAI_API_KEY=sk-proj-' + 'a1' * 30 + '\\nAuthorization: Bearer eyJhbGciOiJIUzI1NiJ9.'"
        " 'eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U\\npassword = \"Tr0ub4dor&3x\"')\n"
        "print(out.count('[secret: '), 'detect_secrets' in sys.modules, 'requests' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.split() == ["3", "False", "False"]
