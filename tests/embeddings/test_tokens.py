"""Token counts: exact cl100k_base values from the shipped BPE file, offline; a flagged estimate without it."""

from __future__ import annotations

from pathlib import Path

import pytest

from embeddings import TokenCounter, estimate_tokens
from embeddings.data_files import data_file


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    return TokenCounter()


def test_bpe_file_ships_in_data_and_verifies() -> None:
    path = data_file("cl100k_base.tiktoken")
    assert path is not None and path.parent.name == "data"


def test_exact_known_token_ids(counter: TokenCounter) -> None:
    # Published cl100k_base ids (OpenAI cookbook "How to count tokens with tiktoken").
    assert counter.exact
    assert counter.encode("tiktoken is great!") == [83, 1609, 5963, 374, 2294, 0]
    assert counter.encode("hello world") == [15339, 1917]
    assert counter.count("tiktoken is great!") == 6


@pytest.mark.parametrize(
    ("text", "expected"),
    [("", 0), ("Hello, world!", 4), ("你好", 2), ("我们决定用向量数据库", 8), ("🎉", 3), ("c++ O'Reilly", 5)],
)
def test_counts_english_chinese_emoji(counter: TokenCounter, text: str, expected: int) -> None:
    assert counter.count(text) == expected
    assert counter.decode(counter.encode(text)) == text


def test_messages_overhead(counter: TokenCounter) -> None:
    msgs = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hello world"}]
    expected = 2 + (4 + counter.count("system") + counter.count("Be brief.")) + (4 + 1 + 2)
    assert counter.count_messages(msgs) == expected


def test_truncate_fits(counter: TokenCounter) -> None:
    text = "word " * 500
    out = counter.truncate(text, 50)
    assert counter.count(out) <= 50 and text.startswith(out)


def test_missing_file_falls_back_to_flagged_estimate(tmp_path: Path) -> None:
    c = TokenCounter(bpe_file=tmp_path / "missing.tiktoken")
    assert not c.exact
    assert "estimated" in c.status
    assert c.count("你好世界") == 4  # one per CJK character
    assert c.count("abcdefgh") == 2  # one per four other characters


def test_corrupt_file_is_rejected_by_sha256(tmp_path: Path) -> None:
    bad = tmp_path / "cl100k_base.tiktoken"
    bad.write_bytes(b"aGVsbG8= 0\n")
    c = TokenCounter(bpe_file=bad)
    assert not c.exact and "sha256" in (c.problem or "")


def test_estimate_is_cjk_aware() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("中文 text") == 2 + 1
