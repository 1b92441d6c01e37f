"""Odd command-line arguments end with one line and exit 2 (or a clean answer), never a traceback
(issue 20, D14 and D19: 22 of 56 odd argument cases once gave tracebacks)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from app.cli import main

HUGE = "99999999999999999999"  # past SQLite's 64-bit integers


@pytest.fixture
def seeded(db_path: Path, no_model_config: Path) -> Path:
    assert main(["--db", str(db_path), "memory", "add", "hello there", "--category", "fact"]) == 0
    return db_path


@pytest.mark.parametrize(
    "args",
    [
        ["memory", "show", HUGE],
        ["memory", "rm", HUGE],
        ["memory", "restore", HUGE],
        ["memory", "pin", HUGE],
        ["memory", "edit", HUGE, "--text", "x"],
        ["threads", "show", HUGE],
        ["threads", "list", "--limit", HUGE],
        ["context", HUGE, "--budget", "1000"],
        ["search", "hello", "--thread", HUGE, "--keyword-only"],
        ["search", "hello", "-k", HUGE, "--keyword-only"],
        ["search", "hello", "--since", "not-a-date", "--keyword-only"],
        ["search", "hello", "--until", "2025-13-45", "--keyword-only"],
        ["memory", "add", "x", "--category", "fact", "--importance", HUGE],
        ["memory", "add", "x", "--category", "nope"],
    ],
)
def test_out_of_range_and_malformed_values_are_usage_errors(
    seeded: Path, args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["--db", str(seeded), *args])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("memapp: "), err


def test_the_far_future_and_past_are_valid_dates(seeded: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for flag, date in (("--until", "9999-12-31"), ("--since", "0001-01-01")):
        code = main(["--db", str(seeded), "search", "hello", flag, date, "--keyword-only", "--json"])
        out = json.loads(capsys.readouterr().out)
        assert code == 0 and [r["id"] for r in out["results"]] == [1]


def test_one_bad_batch_line_is_answered_and_the_others_run(
    seeded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    batch = tmp_path / "q.jsonl"
    batch.write_text(
        "\n".join(
            [
                json.dumps({"query": "hello", "keyword_only": True}),
                '{"query": "hello", "thread": ' + HUGE + "}",
                "[" * 100_000 + "]" * 100_000,
                "not json",
                json.dumps({"query": "hello", "keyword_only": True}),
            ]
        )
    )
    code = main(["--db", str(seeded), "search", "--batch", str(batch)])
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == 1 and len(lines) == 5
    assert [("error" in line) for line in lines] == [False, True, True, True, False]
    assert lines[4]["results"][0]["id"] == 1


def test_empty_db_and_missing_config_are_refused(
    db_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--db", "", "memory", "list"]) == 2
    assert "--db is empty" in capsys.readouterr().err
    assert main(["--db", str(db_path), "--config", str(tmp_path / "missing.toml"), "memory", "list"]) == 2
    assert "missing.toml: no such file" in capsys.readouterr().err
    assert not db_path.exists()  # nothing was created on the way


def test_a_dangling_symlink_as_db_is_one_line_and_creates_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    link = tmp_path / "chat.db"
    os.symlink(tmp_path / "gone" / "chat.db", link)
    assert main(["--db", str(link), "memory", "list"]) == 1
    err = capsys.readouterr().err
    assert "symbolic link" in err and err.count("\n") == 1
    assert not (tmp_path / "gone").exists()


def test_a_symlink_to_a_real_database_is_refused_and_left_untouched(
    db_path: Path, tmp_path: Path, no_model_config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--db", str(db_path), "memory", "add", "hello there", "--category", "fact"]) == 0
    before = db_path.read_bytes()
    link = tmp_path / "link.db"
    os.symlink(db_path, link)
    capsys.readouterr()
    assert main(["--db", str(link), "memory", "list"]) == 1
    err = capsys.readouterr().err
    assert "is a symbolic link to" in err and err.count("\n") == 1
    assert db_path.read_bytes() == before
