"""The CLI for memories, threads, stats and doctor: JSON field names scripts rely on, and clean errors."""

from __future__ import annotations

import json

import pytest

from app.cli import main
from store import Store, ThreadIn
from store.records import MessageIn

MEMORY_KEYS = {
    "id",
    "category",
    "content",
    "importance",
    "pinned",
    "access_count",
    "last_accessed",
    "created_at",
    "updated_at",
    "source_thread_id",
}


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> object:
    code, out, err = run(capsys, *args, "--json")
    assert code == 0, err
    return json.loads(out)


def test_memory_lifecycle_from_the_cli(capsys, no_model_config, db_path) -> None:  # type: ignore[no-untyped-def]
    db = ["--db", str(db_path)]
    added = run_json(
        capsys,
        *db,
        "memory",
        "add",
        "I prefer [bold]uv[/bold] over pip",
        "--category",
        "preference",
        "--importance",
        "7",
        "--pin",
    )
    assert isinstance(added, dict) and MEMORY_KEYS <= added.keys()
    assert (added["content"], added["importance"], added["pinned"], added["action"]) == (
        "I prefer [bold]uv[/bold] over pip",
        7,
        True,
        "added",
    )
    mid = str(added["id"])
    listed = run_json(capsys, *db, "memory", "list")
    assert isinstance(listed, list) and [m["id"] for m in listed] == [added["id"]]
    assert MEMORY_KEYS <= listed[0].keys()
    edited = run_json(capsys, *db, "memory", "edit", mid, "--text", "I prefer uv", "--category", "fact")
    assert isinstance(edited, dict) and (edited["content"], edited["category"]) == ("I prefer uv", "fact")
    assert run_json(capsys, *db, "memory", "unpin", mid)["pinned"] is False  # type: ignore[index]
    assert run_json(capsys, *db, "memory", "rm", mid)["deleted_at"] is not None  # type: ignore[index]
    assert run_json(capsys, *db, "memory", "list") == []
    assert len(run_json(capsys, *db, "memory", "list", "--trash")) == 1  # type: ignore[arg-type]
    assert run_json(capsys, *db, "memory", "restore", mid)["deleted_at"] is None  # type: ignore[index]
    shown = run_json(capsys, *db, "memory", "show", mid)
    assert isinstance(shown, dict)
    assert [h["event"] for h in shown["history"]] == [
        "add",
        "edit",
        "recategorise",
        "unpin",
        "delete",
        "restore",
    ]
    code, out, _ = run(capsys, *db, "memory", "list")
    assert "I prefer uv" in out and code == 0


@pytest.mark.parametrize(
    "args",
    [
        ["memory", "add", "x", "--category", "hobby"],
        ["memory", "add", "x", "--category", "fact", "--importance", "11"],
        ["memory", "add", "x", "--category", "fact", "--importance", "high"],
        ["memory", "add", "   ", "--category", "fact"],
        ["memory", "show", "999"],
        ["memory", "edit", "999", "--text", "y"],
        ["memory", "edit", "1"],
        ["memory", "rm", "abc"],
        ["threads", "show", "42"],
    ],
)
def test_bad_arguments_exit_2_with_one_line_and_write_nothing(capsys, no_model_config, db_path, args) -> None:  # type: ignore[no-untyped-def]
    code, out, err = run(capsys, "--db", str(db_path), *args)
    assert code == 2
    assert err.startswith("memapp: ") and err.count("\n") == 1
    if db_path.exists():
        s = Store(db_path, embedder=None)
        assert s.stats()["memories"]["active"] == 0
        assert s.con.execute("SELECT count(*) FROM memory_history").fetchone()[0] == 0  # type: ignore[index]
        s.close()


def test_threads_list_and_show_json(capsys, no_model_config, db_path) -> None:  # type: ignore[no-untyped-def]
    s = Store(db_path, embedder=None)
    s.write_thread(
        ThreadIn(
            "generic",
            "conv-1",
            "Planning backups",
            [
                MessageIn("user", "How should I back up my NAS?", "m-1", 1_700_000_000.0),
                MessageIn("assistant", "Use **restic** with two repos.", "m-2", 1_700_000_060.0),
            ],
        )
    )
    s.close()
    threads = run_json(capsys, "--db", str(db_path), "threads", "list")
    assert isinstance(threads, list) and len(threads) == 1
    t = threads[0]
    assert {"id", "external_id", "source", "title", "message_count", "token_count", "updated_at"} <= t.keys()
    assert (t["external_id"], t["source"], t["title"], t["message_count"]) == (
        "conv-1",
        "generic",
        "Planning backups",
        2,
    )
    shown = run_json(capsys, "--db", str(db_path), "threads", "show", str(t["id"]))
    assert isinstance(shown, dict)
    msgs = shown["messages"]
    assert [m["external_id"] for m in msgs] == ["m-1", "m-2"]
    assert {"id", "external_id", "seq", "role", "content", "token_count", "created_at"} <= msgs[0].keys()
    assert msgs[1]["content"] == "Use **restic** with two repos." and msgs[1]["seq"] == 1
    assert msgs[0]["created_at"] == "2023-11-14T22:13:20Z"


def test_stats_json(capsys, no_model_config, db_path) -> None:  # type: ignore[no-untyped-def]
    run(capsys, "--db", str(db_path), "memory", "add", "a fact", "-c", "fact", "--pin")
    run(capsys, "--db", str(db_path), "memory", "add", "another fact entirely", "-c", "fact")
    run(capsys, "--db", str(db_path), "memory", "rm", "2")
    stats = run_json(capsys, "--db", str(db_path), "stats")
    assert isinstance(stats, dict)
    assert stats["memories"] == {"active": 1, "pinned": 1, "trash": 1}
    assert stats["threads"] == 0 and stats["messages"] == 0 and stats["embedded_chunks"] == 0


def test_default_db_comes_from_env(capsys, no_model_config, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    target = tmp_path / "sub" / "env.db"
    monkeypatch.setenv("MEMAPP_DB", str(target))
    run(capsys, "memory", "add", "env db works", "-c", "fact")
    assert target.exists()


def test_doctor_on_a_broken_file_is_a_clear_error(capsys, no_model_config, tmp_path) -> None:  # type: ignore[no-untyped-def]
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"\x00\x01binary junk" * 100)
    code, _, err = run(capsys, "--db", str(junk), "doctor")
    assert code == 1 and "not a memapp database" in err


@pytest.mark.model
def test_real_model_end_to_end_offline(capsys, db_path) -> None:  # type: ignore[no-untyped-def]
    """The newcomer's path: add with the real model, list, doctor, all with sockets refused."""
    db = ["--db", str(db_path)]
    a = run_json(
        capsys, *db, "memory", "add", "I use Neovim with the LazyVim distribution", "-c", "preference"
    )
    b = run_json(
        capsys, *db, "memory", "add", "I use Neovim, with the LazyVim distribution", "-c", "preference"
    )
    assert isinstance(a, dict) and isinstance(b, dict)
    assert b["action"] == "merged" and b["id"] == a["id"]
    c = run_json(capsys, *db, "memory", "add", "My daughter starts school in September", "-c", "fact")
    assert isinstance(c, dict) and c["action"] == "added"
    doctor = run_json(capsys, *db, "doctor")
    assert isinstance(doctor, dict)
    assert doctor["ok"] and doctor["integrity"] == "ok" and doctor["tokenizer_exact"]
    assert doctor["model"]["state"] == "ready" and doctor["model"]["dimension"] == 384
    assert doctor["model"]["runtime"] == "onnx" and doctor["model"]["runtime_problem"] is None  # no torch
    assert doctor["counts"]["embedded_memories"] == 2
