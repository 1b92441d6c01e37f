"""The detector runs on detect-secrets' patterns and filters without importing the package (its import
costs ~0.15 s of CPU per process, store.secrets.snapshot): these tests keep the copies equal to the
installed library, so a detect-secrets upgrade that changes a pattern fails here until the snapshot is
refreshed."""

from __future__ import annotations

import json
from pathlib import Path

from detect_secrets.filters.heuristic import is_sequential_string, is_templated_secret
from detect_secrets.plugins.jwt import JwtTokenDetector

from store.secrets import snapshot
from store.secrets.formats import jwt_formally_valid
from store.secrets.values import is_sequential_string as our_sequential
from store.secrets.values import is_templated_secret as our_templated

ROOT = Path(__file__).resolve().parents[3]
EVAL = ROOT / "bench" / "eval" / "secrets"


def _eval_values() -> list[str]:
    values = []
    for split in ("tune", "test"):
        for line in (EVAL / f"{split}.jsonl").read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            values += [s["value"] for s in row["secrets"]]
            values += row["text"].split()[:40]  # words of code and prose: the values a name meets
    return values


EDGES = ["", "$", "{", "}", "<", "a", "${", "${X}", "{x}", "<token>", "<>", "$x}", "ABCDEF", "abcdef",
         "0123456789", "89ABCDEF", "XYZ=/", "YZ0123", "+/0123", "sk-proj-abc"]  # fmt: skip


def test_the_snapshot_is_the_installed_packages_patterns() -> None:
    assert snapshot.installed_version() == snapshot.VERSION, (
        "detect-secrets was upgraded: refresh store/secrets/snapshot.py from snapshot.live()"
    )
    assert snapshot.live() == snapshot.PATTERNS


def test_the_filters_agree_with_detect_secrets() -> None:
    values = _eval_values() + EDGES
    assert len(values) > 1000
    for v in values:
        assert our_sequential(v) == is_sequential_string(v), v
        assert our_templated(v) == is_templated_secret(v), v


def test_the_jwt_check_agrees_with_detect_secrets() -> None:
    tokens = [v for v in _eval_values() if v.startswith("eyJ")]
    assert len(tokens) >= 10
    mangled = [t[:n] for t in tokens[:10] for n in (10, 25, 37, len(t) - 1)]
    mangled += [t.replace(".", ".x", 1) for t in tokens[:10]] + ["eyJ.a.b", "eyJhbGciOiJub25lIn0.e30.", "a.b"]
    assert any(not JwtTokenDetector.is_formally_valid(t) for t in mangled)
    for t in tokens + mangled:
        assert jwt_formally_valid(t) == JwtTokenDetector.is_formally_valid(t), t
