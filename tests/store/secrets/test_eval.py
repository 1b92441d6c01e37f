"""The secrets evaluation (bench/eval/secrets): the committed files are what make.py writes, and the
detector meets the issue's targets on the test half (recall >= 0.95, false positives <= 2 %) and on the
tuning half. The scoring is bench/perf/redaction.py's own (`python -m bench redaction`), so the test and the published figures agree."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from store.secrets import redact_text

ROOT = Path(__file__).resolve().parents[3]


BENCH: ModuleType = importlib.import_module("bench.perf.redaction")


def test_the_committed_set_is_what_make_writes() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "bench.eval.secrets.make", "--check"],
        cwd=ROOT,
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
