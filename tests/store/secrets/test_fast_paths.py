"""The detector's shortcuts (store.secrets.detector) give the answers of a plain line-by-line reading:
the whole-text prefilter's maps split into lines (non-ASCII text, runs cut by a newline), and the cache of
lines already read (the same line at another place, in another text, a full cache, a long line)."""

from __future__ import annotations

import pytest

from store.secrets import detector, find_secrets, redact_text

GHP = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
LINE = f"export GITHUB_TOKEN={GHP}"


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    detector.forget_lines()


def test_a_run_cut_by_a_newline_is_not_a_long_run() -> None:
    """The prefilter's token-run map keeps newlines, so two short runs on two lines never make one."""
    assert not detector.worth_a_look("abcdefghij\nklmnopqrst")
    assert detector.worth_a_look("abcdefghijklmnopqrst")


def test_lines_after_non_ascii_text_are_read_as_themselves() -> None:
    """The maps are made on the UTF-8 bytes and split at 0x0A: characters of 2-4 bytes (and a lone
    surrogate) before a line must not shift which line a map belongs to."""
    lead = "é" * 30 + "\n" + "日本語のテキスト" * 5 + "\n🙂🙂 \ud800 x\n"
    assert redact_text(lead + LINE) == lead + "export GITHUB_TOKEN=[secret: github-token]"
    # The other way round: a long run only in the non-ASCII line's bytes must not open the next line.
    assert find_secrets("ü" * 40 + "\nAKIA" + "Q" * 4) == []
    card = "4929 8765 4321 0986"  # a Visa-shaped Luhn number in card groups
    assert redact_text("Grüße 🙂\npay with " + card) == "Grüße 🙂\npay with [secret: card-number]"


def test_a_cached_line_is_placed_where_it_stands_in_each_text() -> None:
    first = redact_text(LINE)
    assert LINE in detector._seen
    again = redact_text(f"some output\n  {LINE}\nmore output")
    assert first == "export GITHUB_TOKEN=[secret: github-token]"
    assert again == "some output\n  export GITHUB_TOKEN=[secret: github-token]\nmore output"
    assert [(f.kind, f.start) for f in find_secrets(f"x\n{LINE}")] == [
        ("github-token", 2 + len("export GITHUB_TOKEN="))
    ]


def test_the_cache_is_bounded_and_long_lines_skip_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(detector, "_CACHE_SIZE", 50)
    for i in range(120):
        redact_text(f"line {i}: token = 'aB3dE5gH7jK9mN1pQ3sT{i:04d}'")
        assert len(detector._seen) <= 50
    long_line = "x = 1; " * 400 + LINE
    assert len(long_line) > detector._CACHE_LINE
    assert redact_text(long_line).endswith("[secret: github-token]")
    assert long_line not in detector._seen
