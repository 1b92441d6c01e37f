"""`memapp sync init`, `memapp sync`, `memapp sync status` from the command line (issue 29): two chat.db
files and one folder, the way a user sets up a laptop and a desktop."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pyrage import x25519

from app.cli import main


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def no_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text("[embedding]\nenabled = false\n")
    monkeypatch.setenv("MEMAPP_CONFIG", str(cfg))


def test_two_machines_through_one_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_model: None
) -> None:
    a, b, folder = str(tmp_path / "a.db"), str(tmp_path / "b.db"), str(tmp_path / "Sync")
    assert run(capsys, "--db", a, "memory", "add", "Uses Syncthing at home", "-c", "fact")[0] == 0
    code, out, _ = run(capsys, "--db", a, "sync", "init", folder, "--name", "laptop")
    assert code == 0 and "laptop" in out
    assert run(capsys, "--db", b, "sync", "init", folder, "--name", "desktop")[0] == 0
    code, out, _ = run(capsys, "--db", a, "sync")
    assert code == 0 and "sent 1 file" in out
    code, out, _ = run(capsys, "--db", b, "sync", "--json")
    report = json.loads(out)
    assert code == 0 and len(report["applied"]) == 1 and report["conflicts"] == 0
    code, out, _ = run(capsys, "--db", b, "memory", "list", "--json")
    assert [m["content"] for m in json.loads(out)] == ["Uses Syncthing at home"]
    code, out, _ = run(capsys, "--db", a, "sync", "status", "--json")
    status = json.loads(out)
    assert code == 0 and status["name"] == "laptop" and status["files_sent"] == 1
    assert [d["name"] for d in status["devices"]] == ["desktop"] and status["devices"][0][
        "has_our_files"
    ] == 1
    code, out, _ = run(capsys, "--db", b, "sync", "status")
    assert code == 0 and "laptop" in out and "0 files to apply" in out


def test_sync_before_init_and_a_bad_folder_say_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_model: None
) -> None:
    db = str(tmp_path / "a.db")
    run(capsys, "--db", db, "memory", "add", "x", "-c", "fact")
    code, _, err = run(capsys, "--db", db, "sync")
    assert code == 1 and "memapp sync init PATH" in err and len(err.strip().splitlines()) == 1
    (tmp_path / "file").write_text("")
    code, _, err = run(capsys, "--db", db, "sync", "init", str(tmp_path / "file"))
    assert code == 2 and "is a file, not a folder" in err


def test_key_file_encrypts_the_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_model: None
) -> None:
    key = tmp_path / "sync.key"
    key.write_text(f"{x25519.Identity.generate()}\n")
    a, b, folder = str(tmp_path / "a.db"), str(tmp_path / "b.db"), tmp_path / "Sync"
    run(capsys, "--db", a, "memory", "add", "The secret plan", "-c", "project")
    for db, name in ((a, "laptop"), (b, "desktop")):
        assert (
            run(capsys, "--db", db, "sync", "init", str(folder), "--name", name, "--key-file", str(key))[0]
            == 0
        )
    assert run(capsys, "--db", a, "sync")[0] == 0
    assert all(b"secret plan" not in p.read_bytes() for p in folder.rglob("*.memsync"))
    assert run(capsys, "--db", b, "sync")[0] == 0
    code, out, _ = run(capsys, "--db", b, "sync", "status", "--json")
    assert json.loads(out)["encrypted"] is True
    code, out, _ = run(capsys, "--db", b, "memory", "list")
    assert "The secret plan" in out
