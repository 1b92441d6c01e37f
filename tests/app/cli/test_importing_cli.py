"""`memapp import`: the JSON report scripts rely on, exit codes, messages for bad input, the demo."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from store import Store

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "import"
DEMO = Path(__file__).resolve().parents[3] / "data" / "demo.json"
REPORT_KEYS = {
    "notes",
    "summaries_background",
    "threads_added",
    "threads_updated",
    "messages_added",
    "memories_added",
    "suggestions_added",
    "files_read",
    "files_unchanged",
    "skipped",
    "errors",
}


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def import_json(capsys: pytest.CaptureFixture[str], db: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    code, out, err = run(capsys, "--db", str(db), "import", *args, "--json")
    return code, json.loads(out), err


def test_json_report_and_a_second_run_adding_nothing(capsys, no_model_config, db_path) -> None:  # type: ignore[no-untyped-def]
    code, report, err = import_json(capsys, db_path, str(FIXTURES / "generic" / "list.json"))
    assert code == 0 and err == ""
    assert set(report) == REPORT_KEYS and report["threads_added"] > 0 and report["errors"] == []
    code, again, _ = import_json(capsys, db_path, str(FIXTURES / "generic" / "list.json"))
    assert code == 0
    assert again == {
        "threads_added": 0,
        "threads_updated": 0,
        "messages_added": 0,
        "memories_added": 0,
        "suggestions_added": 0,
        "files_read": 0,
        "files_unchanged": 0,
        "summaries_background": 0,
        "skipped": 0,
        "errors": [],
        "notes": [],
    }


def test_skipped_parts_give_exit_1_with_file_and_conversation(
    capsys,
    no_model_config,
    db_path,  # type: ignore[no-untyped-def]
    tmp_path,
) -> None:
    export = tmp_path / "two.jsonl"
    export.write_text(
        json.dumps({"id": "fine", "messages": [{"id": "1", "role": "user", "content": "hello"}]})
        + "\n"
        + json.dumps({"id": "broken", "messages": [{"id": "1", "role": "robot", "content": "x"}]})
        + "\n"
    )
    code, report, _ = import_json(capsys, db_path, str(export))
    assert code == 1
    assert (report["threads_added"], report["messages_added"], report["skipped"]) == (1, 1, 1)
    assert report["errors"] == [
        {"file": str(export), "conversation": "broken", "error": report["errors"][0]["error"]}
    ]
    assert "robot" in report["errors"][0]["error"]
    with Store(db_path, embedder=None) as s:
        assert [t.external_id for t in s.list_threads()] == ["fine"]


def test_unknown_format_names_the_formats_we_read(capsys, no_model_config, db_path, tmp_path) -> None:  # type: ignore[no-untyped-def]
    junk = tmp_path / "photo.jpg"
    junk.write_bytes(b"\xff\xd8\xff\xe0" + bytes(range(256)) * 8)
    code, out, err = run(capsys, "--db", str(db_path), "import", str(junk))
    assert code == 1
    for name in ("ChatGPT", "Claude", "llm", "Open WebUI", "generic"):
        assert name in err
    assert str(junk) in err and "skipped:  1" in out


def test_a_missing_path_is_a_usage_error_and_writes_nothing(
    capsys, no_model_config, db_path, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    code, _, err = run(capsys, "--db", str(db_path), "import", str(DEMO), str(tmp_path / "nope.json"))
    assert code == 2 and "nope.json" in err
    assert not db_path.exists()


def test_format_choice_is_checked_and_forced_format_reports_mismatch(
    capsys,
    no_model_config,  # type: ignore[no-untyped-def]
    db_path,
) -> None:
    code, _, err = run(capsys, "--db", str(db_path), "import", str(DEMO), "--format", "word")
    assert code == 2 and "chatgpt" in err
    code, report, _ = import_json(capsys, db_path, str(DEMO), "--format", "chatgpt")
    assert code == 1 and report["threads_added"] == 0 and report["skipped"] >= 1


def test_import_demo_from_the_command_line(capsys, no_model_config, db_path) -> None:  # type: ignore[no-untyped-def]
    data = json.loads(DEMO.read_text(encoding="utf-8"))
    code, out, err = run(capsys, "--db", str(db_path), "import", str(DEMO))
    assert code == 0, err
    assert f"threads:  {len(data['threads'])} new" in out and f"memories: {len(data['memories'])} new" in out
    code, out, _ = run(capsys, "--db", str(db_path), "stats", "--json")
    stats = json.loads(out)
    assert stats["threads"] == len(data["threads"])
    assert stats["messages"] == sum(len(t["messages"]) for t in data["threads"])
    assert stats["memories"]["pinned"] == sum(1 for m in data["memories"] if m.get("pinned")) > 0


@pytest.mark.model
def test_no_embed_then_embed_with_the_real_model(capsys, db_path, real_embedder) -> None:  # type: ignore[no-untyped-def]
    code, report, _ = import_json(capsys, db_path, str(FIXTURES / "generic" / "list.json"), "--no-embed")
    assert code == 0 and report["messages_added"] > 0
    code, out, _ = run(capsys, "--db", str(db_path), "stats", "--json")
    assert json.loads(out)["embedded_chunks"] == 0
    code, out, _ = run(capsys, "--db", str(db_path), "embed", "--json")
    assert code == 0 and json.loads(out)["messages"] > 0
    with Store(db_path, embedder=real_embedder) as s:
        assert s.check_indexes() == [] and s.stats()["embedded_chunks"] > 0


def test_a_memapp_export_is_restored_whole_into_an_empty_database(capsys, no_model_config, tmp_path) -> None:  # type: ignore[no-untyped-def]
    src, dst, dump = tmp_path / "src.db", tmp_path / "dst.db", tmp_path / "dump.json"
    assert run(capsys, "--db", str(src), "import", str(DEMO))[0] == 0
    assert run(capsys, "--db", str(src), "export", "-o", str(dump))[0] == 0
    code, report, _ = import_json(capsys, dst, str(dump))
    assert code == 0, report
    with Store(src, embedder=None) as a, Store(dst, embedder=None) as b:
        sa, sb = a.stats(), b.stats()
        assert (report["threads_added"], report["messages_added"], report["memories_added"]) == (
            sa["threads"],
            sa["messages"],
            sa["memories"]["active"],
        )
        assert sb == sa and b.check_indexes() == []
        assert [m.to_json() for m in b.list_memories()] == [m.to_json() for m in a.list_memories()]
    code, again, _ = import_json(capsys, dst, str(dump))  # not empty any more: refused, nothing written
    assert code == 1 and again["threads_added"] == 0
    assert again["errors"][0]["file"] == str(dump) and "not empty" in again["errors"][0]["error"]
    with Store(dst, embedder=None) as b:
        assert b.stats() == sa


def test_a_lone_surrogate_in_a_thread_id_or_source_is_repaired(  # type: ignore[no-untyped-def]
    capsys, no_model_config, db_path, tmp_path
) -> None:
    """Issue 20, D11 ended the whole import on such an id; issue 28.1 then lost the thread. Now the half
    character becomes U+FFFD, every thread imports, and a note says so (exit 0: nothing was skipped)."""
    path = tmp_path / "t.jsonl"
    path.write_text(
        '{"id": "a\\ud800b", "messages": [{"id": "m1", "role": "user", "content": "hi"}]}\n'
        '{"id": "ok", "messages": [{"id": "m1", "role": "user", "content": "hello"}]}\n'
        '{"id": "s", "source": "x\\udc00", "messages": [{"id": "m1", "role": "user", "content": "hey"}]}\n'
    )
    code, report, _ = import_json(capsys, db_path, str(path))
    assert code == 0 and report["threads_added"] == 3 and report["skipped"] == 0
    [note] = report["notes"]
    assert note["conversation"] == "a\ufffdb" and "2 lone UTF-16 surrogates" in note["note"]
    with Store(db_path, embedder=None) as store:
        assert {(t.source, t.external_id) for t in store.list_threads()} == {
            ("jsonl", "a\ufffdb"),
            ("jsonl", "ok"),
            ("x\ufffd", "s"),
        }
    code, out, err = run(capsys, "--db", str(db_path), "import", str(path))  # the text report prints too
    assert code == 0 and "U+FFFD" in err and "Traceback" not in err


_SESSION = "5f0c7a52-3d0e-4b7a-9c11-2a9b1f3e8d01"
_CLAUDE_LINE = json.dumps(
    {
        "parentUuid": None,
        "isSidechain": False,
        "cwd": "/home/ana/src/tide",
        "sessionId": _SESSION,
        "type": "user",
        "message": {"role": "user", "content": "Why does the tide parser flake? " + "x" * 70_000},
        "uuid": "a0000000-0000-4000-8000-000000000001",
        "timestamp": "2025-10-02T09:00:05.000Z",
    }
)
_CODEX_LINE = (
    json.dumps(
        {
            "timestamp": "2025-10-03T14:05:09.000Z",
            "type": "session_meta",
            "payload": {"id": _SESSION, "cwd": "/home/ana/src/tide", "instructions": "be brief"},
        }
    )
    + "\n"
    + json.dumps(
        {
            "timestamp": "2025-10-03T14:05:10.000Z",
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "hello"}],
            },
        }
    )
)
_GENERIC = '{"id": "a", "messages": [{"role": "user", "content": "first"}]}\n' + json.dumps(
    {"id": "b", "messages": [{"role": "user", "content": "second"}]}
)


@pytest.mark.parametrize(
    ("name", "text", "cut"),
    [
        (f"{_SESSION}.jsonl", _CLAUDE_LINE, 200),  # a session's first line, still being written
        (f"{_SESSION}.jsonl", _CLAUDE_LINE, 68_000),  # ... longer than what format detection reads
        (f"rollout-2025-10-03T14-05-09-{_SESSION}.jsonl", _CODEX_LINE, 90),
        ("log.jsonl", _GENERIC, len(_GENERIC) - 20),  # a generic log whose last line is half written
    ],
    ids=["claude-code", "claude-code-long-line", "codex", "generic-jsonl"],
)
def test_importing_a_file_still_being_written_is_not_an_error(  # type: ignore[no-untyped-def]
    capsys, no_model_config, db_path, tmp_path, name, text, cut
) -> None:
    """28.4: `memapp import FILE` of a file another program is still writing: the line without its end
    is left for next time (as the hook and `watch` do), never reported as an error; once the line is
    complete, the next import takes it."""
    path = tmp_path / name
    path.write_text(text[:cut], encoding="utf-8")
    code, report, err = import_json(capsys, db_path, str(path))
    assert (code, report["errors"]) == (0, []), (report, err)
    path.write_text(text + "\n", encoding="utf-8")
    code, report, err = import_json(capsys, db_path, str(path))
    assert (code, report["errors"], report["notes"]) == (0, [], []), (report, err)
    with Store(db_path, embedder=None) as store:
        contents = [m.content for t in store.list_threads() for m in store.get_messages(t.id)]
    assert any(c.startswith(("Why does", "hello", "second")) for c in contents), contents


@pytest.mark.model
def test_embed_writes_only_its_result_to_stdout(capsys, db_path, real_embedder) -> None:  # type: ignore[no-untyped-def]
    """28.14: progress went to stdout with `\\r` redraws, so `memapp embed > log` kept them (a stray `)`).
    Now stdout holds the one result line; progress is plain lines on stderr when it is not a terminal."""
    code, report, _ = import_json(capsys, db_path, str(FIXTURES / "generic" / "list.json"), "--no-embed")
    assert code == 0 and report["messages_added"] > 0
    code, out, err = run(capsys, "--db", str(db_path), "embed")
    assert code == 0
    assert out == f"embedded {report['messages_added']} messages and 0 memories\n"
    assert "\r" not in out + err
    assert err.splitlines()[-1].startswith(
        f"embedding: {report['messages_added']}/{report['messages_added']} ("
    )


def test_embed_progress_redraws_only_on_a_terminal(monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    from app.cli.admin import _Progress

    plain = _Progress("embedding")
    for done in range(0, 101, 5):
        plain(done, 100)
    plain.close()
    out, err = capsys.readouterr()
    assert out == "" and "\r" not in err and len(err.splitlines()) == 10  # every 10 %, 100 % included

    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    shown = _Progress("embedding")
    shown(1, 2)
    shown(2, 2)
    shown.close()
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("\rembedding: 1/2") and err.count("\r") == 2 and err.endswith("\n")


def test_a_context_memapp_saved_is_refused_with_one_line(capsys, no_model_config, db_path, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """28.15: a context built by memapp (`memapp context --json`, its printout, the TUI preview's save)
    imported as a new chat thread: memapp's own output, its memories and summary included, as if it were
    a conversation. It is recognised and refused with one line; nothing is written."""
    from app.tui.screens.context_preview import context_text
    from store.context.builder import build_context

    assert run(capsys, "--db", str(db_path), "import", str(DEMO), "--no-embed")[0] == 0
    code, out, _ = run(capsys, "--db", str(db_path), "context", "1", "--budget", "3000", "--json")
    assert code == 0
    saved = {"ctx.json": out}
    saved["printout.txt"] = run(capsys, "--db", str(db_path), "context", "1", "--budget", "3000")[1]
    with Store(db_path, embedder=None) as store:
        saved["context-thread-1.md"] = context_text(build_context(store, 1, 3000)) + "\n"
        before = store.stats()
    for name, text in saved.items():
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        code, report, _ = import_json(capsys, db_path, str(path))
        assert code == 1 and report["threads_added"] == report["suggestions_added"] == 0, (name, report)
        [error] = report["errors"]
        assert "is a context memapp built" in error["error"] and "\n" not in error["error"], name
    with Store(db_path, embedder=None) as store:
        assert store.stats() == before


def _long_threads(path: Path, n_threads: int = 3, n_messages: int = 36) -> Path:
    topics = ["restic backups", "the NAS", "Postgres upgrades", "the garden shed", "sourdough"]
    lines = []
    for t in range(n_threads):
        msgs = [
            {
                "id": f"m{i}",
                "role": "user" if i % 2 == 0 else "assistant",
                "content": f"About {topics[(t + i) % 5]}: we decided to keep step {i} because it failed "
                f"twice on {topics[(t * 3 + i) % 5]}. Next we need to test the restore of part {i}.",
            }
            for i in range(n_messages)
        ]
        lines.append(json.dumps({"id": f"t{t}", "title": f"Thread {t}", "messages": msgs}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _summaries(db: Path) -> dict[str, str]:
    with Store(db, embedder=None) as store:
        return {
            str(r[0]): str(r[1])
            for r in store.con.execute(
                "SELECT t.external_id, s.content FROM thread_summaries s JOIN threads t ON t.id = s.thread_id"
            )
        }


def test_a_big_import_leaves_its_summaries_to_a_background_process(  # type: ignore[no-untyped-def]
    capsys, no_model_config, tmp_path
) -> None:
    """28.25: summaries took 78 % of a plain import's CPU. An import leaving more than
    summary.background_after messages to summarise returns once its threads are written and a detached
    `memapp summarize --due` makes the summaries: the same ones, as good, a moment later."""
    export = _long_threads(tmp_path / "long.jsonl")
    no_model_config.write_text("[embedding]\nenabled = false\n[summary]\nbackground_after = 50\n")
    db = tmp_path / "bg.db"
    code, report, _ = import_json(capsys, db, str(export), "--no-embed")
    assert code == 0 and report["summaries_background"] == 3, report
    deadline = time.monotonic() + 120
    while len(_summaries(db)) < 3 and time.monotonic() < deadline:
        time.sleep(0.2)
    now = tmp_path / "now.db"
    code, report, _ = import_json(capsys, now, str(export), "--no-embed", "--summarize-now")
    assert code == 0 and report["summaries_background"] == 0
    assert _summaries(db) == _summaries(now) and len(_summaries(now)) == 3
    small = tmp_path / "small.db"  # little to summarise: done before the command returns, as before
    no_model_config.write_text("[embedding]\nenabled = false\n")
    code, report, _ = import_json(capsys, small, str(export), "--no-embed")
    assert report["summaries_background"] == 0 and _summaries(small) == _summaries(now)


def test_the_import_line_names_each_phase_until_counts_exist() -> None:
    """28.16: what the terminal line says before the bar can move (counting, reading, loading the model,
    embedding the first batch), then the bar."""
    from app.cli.import_display import _Display
    from store.importing.pipeline import ImportProgress, ImportTotals

    d = _Display()
    task = d.progress.tasks[0]

    def count(seen: Any) -> ImportTotals:
        seen(ImportTotals(120, 2400))
        assert (task.description, task.fields["threads"], task.fields["messages"]) == (
            "counting",
            "120",
            "2,400",
        )
        return ImportTotals(500, 20000)

    assert d.count(count) == ImportTotals(500, 20000)
    for phase, said in (
        ("reading", "reading the export"),
        ("loading the model", "loading the model"),
        ("embedding", "embedding the first batch"),
    ):
        d.update(ImportProgress("", 0, 500, 0, 20000, 0, 1.0, phase, 64))
        assert (task.description, task.fields["threads"], task.completed) == (said, "64 read of 500", 0)
    d.update(ImportProgress("x", 10, 500, 400, 20000, 400, 2.0))
    assert (task.description, task.completed, task.fields["messages"]) == ("importing", 400, "400/20,000")
