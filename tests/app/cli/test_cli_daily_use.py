"""The CLI for daily use: managing threads (rename, archive, rm), refusing a mistyped database, version
and help texts, backup onto an existing file, and memory text from stdin."""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path

import pytest

from app.cli import build_parser, main
from store import Store, ThreadIn
from store.records import MessageIn


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _thread(db_path: Path, title: str = "A private chat") -> int:
    with Store(db_path, embedder=None) as s:
        t = ThreadIn(
            source="generic",
            external_id="t1",
            title=title,
            messages=[MessageIn(role="user", content="my secret zanzibar plan", external_id="m1")],
        )
        return s.write_thread(t).thread_id


def test_threads_rename_archive_unarchive_and_rm(capsys, no_model_config, db_path) -> None:  # type: ignore[no-untyped-def]
    db = ["--db", str(db_path)]
    tid = _thread(db_path)
    code, out, _ = run(capsys, *db, "threads", "rename", str(tid), "Renamed chat")
    assert code == 0 and "renamed thread" in out
    code, out, _ = run(capsys, *db, "threads", "archive", str(tid))
    assert code == 0 and "archived" in out
    assert json.loads(run(capsys, *db, "threads", "list", "--json")[1]) == []
    listed = json.loads(run(capsys, *db, "threads", "list", "--archived", "--json")[1])
    assert [t["title"] for t in listed] == ["Renamed chat"] and listed[0]["archived_at"]
    assert "(archived)" in run(capsys, *db, "threads", "list", "--all")[1]
    hits = json.loads(run(capsys, *db, "search", "zanzibar", "--keyword-only", "--json")[1])
    assert hits["results"] == []
    shown = json.loads(
        run(capsys, *db, "search", "zanzibar", "--keyword-only", "--include-archived", "--json")[1]
    )
    assert [r["thread_id"] for r in shown["results"]] == [tid]
    by_source = ["search", "zanzibar", "--keyword-only", "--include-archived", "--json", "--source"]
    assert len(json.loads(run(capsys, *db, *by_source, "generic")[1])["results"]) == 1
    assert json.loads(run(capsys, *db, *by_source, "claude")[1])["results"] == []
    assert run(capsys, *db, "threads", "unarchive", str(tid))[0] == 0
    assert len(json.loads(run(capsys, *db, "threads", "list", "--json")[1])) == 1
    # rm is for good: a script must say --yes (stdin is not a terminal here), and nothing is deleted without it.
    code, _, err = run(capsys, *db, "threads", "rm", str(tid))
    assert code == 2 and "--yes" in err
    assert len(json.loads(run(capsys, *db, "threads", "list", "--json")[1])) == 1
    code, out, _ = run(capsys, *db, "threads", "rm", str(tid), "--yes")
    assert code == 0 and "deleted thread" in out
    assert json.loads(run(capsys, *db, "threads", "list", "--all", "--json")[1]) == []
    assert run(capsys, *db, "threads", "rename", "999", "x")[0] == 2


@pytest.mark.parametrize(
    "command",
    [["stats"], ["memory", "list"], ["search", "x"], ["threads", "list"], ["doctor"], ["backup", "b.db"]],
)
def test_read_commands_refuse_a_missing_database(capsys, no_model_config, tmp_path, command) -> None:  # type: ignore[no-untyped-def]
    db = tmp_path / "typo" / "chat.db"
    code, _, err = run(capsys, "--db", str(db), *command)
    assert code == 2
    assert "there is no database at" in err and "memapp import" in err
    assert not db.parent.exists()  # nothing was created


def test_a_missing_database_named_by_the_environment_says_so(
    capsys, no_model_config, tmp_path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("MEMAPP_DB", str(tmp_path / "nope.db"))
    code, _, err = run(capsys, "stats")
    assert code == 2 and "MEMAPP_DB" in err


def test_creating_commands_still_create_the_database(capsys, no_model_config, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    db = tmp_path / "new" / "chat.db"
    monkeypatch.setattr("sys.stdin", io.StringIO("A long memory\nover two lines\n"))
    code, out, err = run(capsys, "--db", str(db), "memory", "add", "-", "-c", "fact", "--json")
    assert code == 0, err
    assert json.loads(out)["content"] == "A long memory\nover two lines"
    assert db.exists()
    monkeypatch.setattr("sys.stdin", io.StringIO("   \n"))
    code, _, err = run(capsys, "--db", str(db), "memory", "add", "-", "-c", "fact")
    assert code == 2 and "empty" in err


def test_version_help_and_json_help(capsys) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = run(capsys, "--version")
    assert code == 0 and out.startswith("memapp ")
    code, out, _ = run(capsys, "--help")
    assert code == 0 and "with no command to open the" in " ".join(out.split())
    code, out, _ = run(capsys, "context", "--help")
    assert "(~10%)" in out and "%%" not in out
    missing: list[str] = []
    seen = 0

    def walk(parser: argparse.ArgumentParser, name: str) -> None:
        nonlocal seen
        for action in parser._actions:  # noqa: SLF001 - argparse keeps its options there
            if "--json" in action.option_strings:
                seen += 1
                if not action.help:
                    missing.append(name)
            choices = getattr(action, "choices", None)
            for sub_name, sub in choices.items() if isinstance(choices, dict) else ():
                if isinstance(sub, argparse.ArgumentParser):
                    walk(sub, f"{name} {sub_name}".strip())

    walk(build_parser(), "")
    assert seen > 20 and missing == []


def test_backup_onto_an_existing_file_is_a_usage_error(capsys, no_model_config, db_path, tmp_path) -> None:  # type: ignore[no-untyped-def]
    _thread(db_path)
    existing = tmp_path / "already.db"
    existing.write_bytes(b"keep me")
    code, _, err = run(capsys, "--db", str(db_path), "backup", str(existing))
    assert code == 2 and "already exists" in err
    assert existing.read_bytes() == b"keep me"


def test_threads_list_columns_line_up_with_cjk_and_long_titles(capsys, no_model_config, db_path) -> None:  # type: ignore[no-untyped-def]
    """Issue 28.10: the CLI cut and padded titles by characters, so a CJK title (two cells a character)
    pushed its row's columns to the right. Titles are measured in terminal cells, as in the TUI."""
    from rich.cells import cell_len

    titles = [
        "京都五日游计划",
        "学做红烧肉" * 12,
        "Home-lab backup strategy",
        "x" * 80,
        "Café ünïcode tab\there",
    ]
    with Store(db_path, embedder=None) as s:
        for i, title in enumerate(titles):
            msgs = [MessageIn(role="user", content=f"hello {i}", external_id=f"m{i}")]
            s.write_thread(ThreadIn(source="generic", external_id=f"t{i}", title=title, messages=msgs))
    code, out, _ = run(capsys, "--db", str(db_path), "threads", "list")
    assert code == 0
    rows = [line for line in out.splitlines() if "generic" in line]
    assert len(rows) == len(titles)
    starts = {cell_len(row[: row.index("generic")]) for row in rows}
    assert len(starts) == 1, out  # the source column starts at the same cell on every row
    assert any("京都五日游计划" in row for row in rows) and any("…" in row for row in rows)
