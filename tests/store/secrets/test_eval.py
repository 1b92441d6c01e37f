"""The secrets evaluation (bench/eval/secrets): the committed files are what make.py writes, and the
detector meets the issue's targets on the test half (recall >= 0.95, false positives <= 2 %) and on the
tuning half. The scoring is bench/redaction.py's own, so the test and the published figures agree."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from store.secrets import redact_text

ROOT = Path(__file__).resolve().parents[3]


def _bench() -> ModuleType:
    sys.path.insert(0, str(ROOT / "bench"))
    spec = importlib.util.spec_from_file_location("bench_redaction", ROOT / "bench" / "redaction.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BENCH = _bench()


def test_the_committed_set_is_what_make_writes() -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "eval" / "secrets" / "make.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr


@pytest.mark.parametrize("split", ["tune", "test"])
def test_targets(split: str) -> None:
    rows = BENCH.load(split)
    score = BENCH.score(rows, redact_text)
    assert score["texts_with_secrets"] >= 150 and score["secret_free_texts"] >= 150
    assert score["kinds"] >= 20
    assert score["recall"] >= 0.95, score["misses"]
    assert score["false_positive_rate"] <= 0.02, score["false_alarms"]


def test_scoring_counts_a_partly_left_secret_as_missed() -> None:
    value = "ghp_4f9KzQ2mN7xR1tV8bW3yC6pL0sD5hJ2gE9aB"
    text = f"token {value}"
    assert BENCH.caught(value, text, "token [secret: github-token]")
    assert not BENCH.caught(value, text, "token ghp_4f9KzQ2mN7x[secret: x]")
    assert BENCH.exact(text, [value], "token [secret: github-token]")
    assert not BENCH.exact(text, [value], "[secret: token] [secret: github-token]")
