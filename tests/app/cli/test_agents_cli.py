"""`memapp hook claude-code`, `memapp watch`, `memapp import -` and `memapp export --format prompt`."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import apsw
import pytest

from app.cli import main
from tests.store.importing.formats.agent_fixtures import claude_session_lines, write_session
from tests.store.importing.formats.import_helpers import FIXTURES

CLAUDE = FIXTURES / "claude-code" / "-home-ana-src-tide" / "5f0c7a52-3d0e-4b7a-9c11-2a9b1f3e8d01.jsonl"


def _dump(db: Path) -> list[object]:
    con = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return [
            list(con.execute(f"SELECT * FROM {t} ORDER BY 1"))
            for t in ("threads", "messages", "import_files", "memory_suggestions", "long_term_memories")
        ]
    finally:
        con.close()


def _hook(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], db: Path, stdin: str
) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    code = main(["--db", str(db), "hook", "claude-code"])
    out, err = capsys.readouterr()
    return code, out, err


def test_hook_imports_the_session_and_a_second_run_writes_nothing(  # type: ignore[no-untyped-def]
    monkeypatch, capsys, no_model_config, db_path, tmp_path
) -> None:
    event = {
        "session_id": "5f0c7a52-3d0e-4b7a-9c11-2a9b1f3e8d01",
        "transcript_path": str(CLAUDE),
        "cwd": "/home/ana/src/tide",
        "hook_event_name": "SessionEnd",
        "reason": "prompt_input_exit",
    }
    code, out, err = _hook(monkeypatch, capsys, db_path, json.dumps(event))
    assert (code, err) == (0, "")
    assert out == f"memapp: 6 new messages from {CLAUDE.name}\n"
    before = _dump(db_path)
    mtime = db_path.stat().st_mtime_ns
    code, out, err = _hook(monkeypatch, capsys, db_path, json.dumps({**event, "hook_event_name": "Stop"}))
    assert (code, out, err) == (0, "", "")
    assert _dump(db_path) == before
    assert db_path.stat().st_mtime_ns == mtime


@pytest.mark.parametrize(
    "stdin", ["", "not json", "[1]", '{"session_id": "x"}', '{"transcript_path": "/nonexistent/x.jsonl"}']
)
def test_hook_failures_exit_1_never_2(monkeypatch, capsys, no_model_config, db_path, stdin) -> None:  # type: ignore[no-untyped-def]
    code, out, err = _hook(monkeypatch, capsys, db_path, stdin)
    assert code == 1 and out == ""  # 2 would tell Claude Code's Stop hook to keep the agent working
    assert err.startswith("memapp: hook: ") and err.count("\n") == 1


@pytest.mark.parametrize(
    "argv",
    [
        ["hook", "claude-code", "--no-such-flag"],
        ["hook", "codex"],  # not an agent with hooks
        ["hook"],
        ["hook", "claude-code", "extra"],
        ["--db", "", "hook", "claude-code"],
        ["--config", "/nonexistent/config.toml", "hook", "claude-code"],
        ["--db", "{db}", "--bogus", "hook", "claude-code"],
    ],
)
def test_hook_bad_arguments_exit_1_never_2(monkeypatch, capsys, no_model_config, db_path, argv) -> None:  # type: ignore[no-untyped-def]
    """28.3: a bad flag in the hook's command line is reported in one line and exits 1: argparse's usual 2
    would tell Claude Code's Stop hook to keep the agent working."""
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps({"transcript_path": str(CLAUDE)})))
    code = main([a.replace("{db}", str(db_path)) for a in argv])
    out, err = capsys.readouterr()
    assert code == 1, (code, err)
    assert err.startswith("memapp: ") and err.count("\n") == 1 and "Traceback" not in err


def test_hook_help_still_exits_0(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["hook", "--help"]) == 0
    assert "never 2" in capsys.readouterr().out


def test_import_text_from_stdin_gives_suggestions_only(monkeypatch, capsys, no_model_config, db_path) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(
        sys, "stdin", io.TextIOWrapper(io.BytesIO(b"- Prefers dark mode in every app\n- Lives in Bergen\n"))
    )
    code = main(["--db", str(db_path), "import", "-", "--format", "text", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["suggestions_added"] == 2 and report["memories_added"] == 0
    code = main(["--db", str(db_path), "memory", "list", "--json"])
    assert code == 0 and json.loads(capsys.readouterr().out) == []
    code = main(["--db", str(db_path), "extract", "list", "--json"])
    pending = json.loads(capsys.readouterr().out)
    assert [s["content"] for s in pending] == ["Prefers dark mode in every app", "Lives in Bergen"]


def test_export_prompt_under_budget(capsys, no_model_config, db_path) -> None:  # type: ignore[no-untyped-def]
    for text, imp in (
        ("Prefers metric units.", "9"),
        ("Lives in Bergen, Norway.", "5"),
        ("Plays the cello badly.", "1"),
    ):
        assert main(["--db", str(db_path), "memory", "add", text, "-c", "fact", "--importance", imp]) == 0
    capsys.readouterr()
    assert main(["--db", str(db_path), "export", "--format", "prompt", "--json"]) == 0
    whole = json.loads(capsys.readouterr().out)
    assert whole["left_out"] == 0 and whole["budget"] == 1500
    budget = str(whole["tokens"] - 2)  # one memory too many: the least important is left out
    assert main(["--db", str(db_path), "export", "--format", "prompt", "--budget", budget]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("Here is what I'd like you to remember about me")
    assert "- Prefers metric units.\n- Lives in Bergen, Norway.\n" in out and "cello" not in out
    assert err.startswith("memapp: 2 memories, ") and "1 left out" in err
    assert main(["--db", str(db_path), "export", "--format", "prompt", "--budget", budget, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["tokens"] <= int(budget) and data["left_out"] == 1 and data["text"] == out
    assert main(["--db", str(db_path), "export", "--format", "prompt", "--budget", "0"]) == 2


def _read_until(proc: subprocess.Popen[str], needle: str, timeout: float) -> list[str]:
    assert proc.stdout is not None
    lines: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line)
        if needle in line:
            return lines
    raise AssertionError(f"{needle!r} not seen in {lines}")


@pytest.mark.serial  # a child process that polls on a timer, then a signal: not beside a busy parallel pass
def test_watch_imports_a_growing_file_and_stops_on_sigint(no_model_config, db_path, tmp_path) -> None:  # type: ignore[no-untyped-def]
    lines = claude_session_lines(6, 2)
    folder = tmp_path / "projects" / "-home-ana-src-tide"
    path = write_session(folder, lines[:12])  # two whole turns
    env = {**os.environ, "MEMAPP_DB": str(db_path), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from app.cli import main; sys.exit(main())",
            "watch",
            str(tmp_path / "projects"),
            "--interval",
            "0.1",
            "--debounce",
            "0.3",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        first = _read_until(proc, "new messages", 60)
        assert "6 new messages" in first[-1] and '"Turn 0: please check' in first[-1]
        with path.open("a", encoding="utf-8") as fp:  # the session goes on, a line at a time
            for line in lines[12:-1]:
                fp.write(line + "\n")
                fp.flush()
                time.sleep(0.02)
            fp.write(lines[-1][:-20])  # and a line still being written
        more = _read_until(proc, "new messages", 60)
        assert "11 new messages" in more[-1]  # 4 turns x 3, less the last answer (half-written)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert out.strip().endswith("stopped") and "Traceback" not in err
    con = apsw.Connection(str(db_path), flags=apsw.SQLITE_OPEN_READONLY)
    assert con.execute("SELECT count(*) FROM messages").fetchall() == [(17,)]
    con.close()


def test_threads_show_prints_tool_runs_as_one_line(capsys, no_model_config, db_path) -> None:  # type: ignore[no-untyped-def]
    assert main(["--db", str(db_path), "import", str(CLAUDE), "--json"]) == 0
    capsys.readouterr()
    assert main(["--db", str(db_path), "threads", "show", "1"]) == 0
    out = capsys.readouterr().out
    assert "project /home/ana/src/tide · branch fix/parser-flake · model claude-sonnet-4-5-20250929\n" in out
    assert "[2] tool  2025-10-02T09:00:09Z  (0 tok)\n  (3 tool calls: Read, Bash, Task · 1 failed)\n" in out
    assert "  (attached: 1 image)\nGreat, that fixed it." in out
    assert main(["--db", str(db_path), "threads", "show", "1", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["metadata"]["git_branch"] == "fix/parser-flake"
    run = data["messages"][2]
    assert run["content"] == "" and run["notes"] == ["3 tool calls: Read, Bash, Task · 1 failed"]
    assert [c["name"] for c in run["tool_calls"]] == ["Read", "Bash", "Task"]


@pytest.mark.model
def test_stop_hook_without_vectors_then_session_end_embeds_the_session(  # type: ignore[no-untyped-def]
    monkeypatch, capsys, db_path
) -> None:
    """The README's two hooks with the real model: Stop (--no-embed) imports every turn quickly, SessionEnd
    embeds what the session lacks; its text is then found by meaning; a re-run writes nothing."""
    event = json.dumps({"session_id": "s", "transcript_path": str(CLAUDE), "hook_event_name": "Stop"})
    monkeypatch.setattr(sys, "stdin", io.StringIO(event))
    assert main(["--db", str(db_path), "hook", "claude-code", "--no-embed"]) == 0
    assert capsys.readouterr().out.startswith("memapp: 6 new messages")
    code, out, err = _hook(monkeypatch, capsys, db_path, event.replace("Stop", "SessionEnd"))
    assert (code, out, err) == (0, "", "")  # nothing new to import, but the vectors are written
    from store import Store

    with Store(db_path) as s:  # the configured encoder, as the hook used (int8; real_embedder is float32)
        assert s.messages_missing_vectors(100) == [] and s.stats()["embedded_chunks"] == 5
        found = s.search("flaky test: one station has no timezone", scope="messages", k=3, keyword_only=False)
        assert found.mode == "hybrid"
        assert any("shuffles stations" in r.content for r in found.results)
    before = _dump(db_path)
    assert _hook(monkeypatch, capsys, db_path, event)[0] == 0
    assert _dump(db_path) == before
