"""Batch token counting: `TokenCounter.count_many` and the helper process an import counts in
(embeddings/token_worker.py). Both must give exactly what `count` gives, and a helper that cannot run
must not be waited for past its timeouts, nor leave a process behind."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from embeddings import TokenCounter, token_worker
from embeddings.token_worker import TokenCountProcess

TEXTS = [
    "",
    "tiktoken is great!",
    "Hello, world!",
    "我们决定用向量数据库",
    "🎉 emoji and café",
    "<|endoftext|> is text here, not a special token",
    "trailing spaces and lines  \n\n  ",
    "\ud800 an unpaired surrogate",
    "word " * 3000,
]


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    return TokenCounter()


def test_count_many_is_count_of_each(counter: TokenCounter) -> None:
    assert counter.exact
    assert counter.count_many(TEXTS) == [counter.count(t) for t in TEXTS]
    assert counter.count_many([]) == []


def test_count_many_estimates_when_count_does() -> None:
    est = TokenCounter(bpe_file="/nonexistent/cl100k_base.tiktoken")
    assert not est.exact
    assert est.count_many(TEXTS) == [est.count(t) for t in TEXTS]


def wait_ready(helper: TokenCountProcess) -> None:
    helper._started.result(timeout=60)
    assert helper.problem is None, helper.problem


def test_helper_counts_exactly_like_this_process_and_ends_on_close(counter: TokenCounter) -> None:
    helper = TokenCountProcess(counter)
    try:
        wait_ready(helper)
        futures = [helper.submit(TEXTS), helper.submit(TEXTS[::-1]), helper.submit(["x"])]
        answers = [helper.counts(f) for f in futures]
        assert answers == [counter.count_many(TEXTS), counter.count_many(TEXTS[::-1]), [1]]
        proc = helper._proc
        assert proc is not None and proc.poll() is None
    finally:
        helper.close()
    assert proc.poll() is not None  # ended, not left running
    assert helper.submit(["after close"]) is None


@pytest.mark.serial  # a time limit
def test_a_helper_that_does_not_start_in_time_is_given_up(
    counter: TokenCounter, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    silent = tmp_path / "silent-python"
    silent.write_text("#!/bin/sh\nexec sleep 60\n")
    silent.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(silent))
    monkeypatch.setattr(token_worker, "START_TIMEOUT_S", 0.3)
    helper = TokenCountProcess(counter)
    try:
        t0 = time.monotonic()
        assert helper.counts(helper.submit(["hello"])) is None
        assert time.monotonic() - t0 < 5
        assert helper.problem is not None and "not started" in helper.problem
        proc = helper._proc
    finally:
        helper.close()
    assert proc is not None and proc.poll() is not None


def test_a_helper_that_cannot_start_is_reported_and_not_used(
    counter: TokenCounter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "executable", "/nonexistent/python")
    helper = TokenCountProcess(counter)
    try:
        future = helper.submit(["hello"])
        deadline = time.monotonic() + 30
        while helper.problem is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert helper.problem is not None and "did not start" in helper.problem
        assert helper.counts(future) is None
        assert helper.submit(["more"]) is None
    finally:
        helper.close()


def test_a_helper_that_dies_is_dropped(counter: TokenCounter) -> None:
    helper = TokenCountProcess(counter)
    try:
        wait_ready(helper)
        assert helper._proc is not None
        helper._proc.kill()
        helper._proc.wait()
        assert helper.counts(helper.submit(["hello"])) is None
        assert helper.problem is not None
    finally:
        helper.close()


def test_the_helper_ends_when_its_importer_is_gone() -> None:
    """A killed importer cannot close its helper: the helper ends by itself when its stdin closes."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "embeddings.token_worker", "cl100k_base", ""],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.close()
    assert proc.wait(timeout=60) == 0
    proc.stdout.close()
