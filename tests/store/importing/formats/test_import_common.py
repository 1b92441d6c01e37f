"""Shared pieces: timestamp units, streaming JSON, titles, memory categories."""

from __future__ import annotations

import io
import json

import pytest

from store.importing.formats._common import guess_category, parse_ts, title_or_fallback
from store.importing.formats._json import JsonError, JsonStream
from store.records import MessageIn


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1700000000, 1700000000.0),
        (1700000000.25, 1700000000.25),
        (1700000000123, 1700000000.123),  # ms
        (1700000000123456, 1700000000.123456),  # µs
        ("1700000000.5", 1700000000.5),
        ("2023-11-14T22:13:20Z", 1700000000.0),
        ("2023-11-14T22:13:20+00:00", 1700000000.0),
        ("2023-11-15T00:13:20+02:00", 1700000000.0),
        ("2023-11-14T22:13:20", 1700000000.0),  # naive: UTC
        (None, None),
        ("", None),
        ("yesterday", None),
        (True, None),
        (0, None),
        (-5, None),
        (float("inf"), None),
        ([1], None),
    ],
)
def test_parse_ts(value: object, expected: float | None) -> None:
    got = parse_ts(value)
    assert got == pytest.approx(expected) if expected is not None else got is None


def _elements(data: bytes, chunk: int = 3) -> list[object]:
    return list(JsonStream(io.BytesIO(data), chunk_size=chunk).iter_array())


def test_stream_reads_elements_across_tiny_chunks() -> None:
    values = [1, 22, 333, {"a": [1, 2, "xyz"]}, True, None, 4.5e3, "é ☃ 𝄞", 12345678901234]
    assert _elements(json.dumps(values, ensure_ascii=False).encode()) == values
    assert _elements(b"\xef\xbb\xbf[1]") == [1]  # BOM


def test_stream_large_elements_are_linear() -> None:
    values = [{"i": i, "t": "x" * 50_000} for i in range(40)]
    assert _elements(json.dumps(values).encode(), chunk=1024) == values


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b'[{"a":1},{"b":', "truncated"),
        (b'[{"a":1},{"b":"unterminated', "truncated"),
        (b'[{"a":1} {"b":2}]', "expected ',' or ']'"),
        (b"[1,2]  x", "unexpected data"),
        (b"[1,]", "invalid JSON"),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    ],
)
def test_stream_errors(data: bytes, message: str) -> None:
    with pytest.raises(JsonError, match=message):
        _elements(data)


def test_stream_yields_what_precedes_a_cut() -> None:
    got = []
    with pytest.raises(JsonError):
        for item in JsonStream(io.BytesIO(b'[{"a":1},{"b":2},{"c":'), chunk_size=4).iter_array():
            got.append(item)
    assert got == [{"a": 1}, {"b": 2}]


def test_title_fallback() -> None:
    long_line = "word " * 40
    messages = [MessageIn("assistant", "hi"), MessageIn("user", f"{long_line}\nsecond line")]
    assert title_or_fallback("  A title\r\nmore", messages) == "A title"
    assert title_or_fallback(None, messages) == long_line[:79].rstrip() + "…"
    assert title_or_fallback("", [MessageIn("user", "Short question?")]) == "Short question?"
    assert title_or_fallback(17, []) == "Untitled"


@pytest.mark.parametrize(
    ("text", "full", "expected"),
    [
        ("User prefers dark mode.", False, "preference"),
        ("Doesn't like cilantro", False, "preference"),
        ("Is working on a compiler project", False, "fact"),
        ("Is working on a compiler project", True, "project"),
        ("Knows how to use Kubernetes", True, "skill"),
        ("Has two cats", True, "fact"),
    ],
)
def test_guess_category(text: str, full: bool, expected: str) -> None:
    assert guess_category(text, full=full) == expected


def test_invalid_utf8_is_replaced_and_recorded_not_fatal() -> None:
    """Issue 20, D19: a bad byte used to end the stream (and the rest of the file) there."""
    stream = JsonStream(io.BytesIO(b'["a\xffb", "c"]'))
    assert list(stream.iter_array()) == ["a\ufffdb", "c"]
    assert stream.bad_utf8 == [3]
