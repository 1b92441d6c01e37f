"""`memapp init --encrypt`, `encrypt`, `decrypt`, `rekey`, `key`, and what an encrypted chat.db changes for
`export`, `backup` and `import` (issue 33 part 1). A wrong or missing passphrase: one line, exit 2, nothing
modified, and the passphrase never in the output or the logs."""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli import main
from store.crypto import keys

PASS = "tigers eat blue cheese"
NEW = "seven small green frogs"
MARK = "memo-zebra-4471"
REPO = Path(__file__).resolve().parents[3]


def run(capsys: pytest.CaptureFixture[str], *args: str, stdin: str | None = None) -> tuple[int, str, str]:
    if stdin is not None:
        sys.stdin = io.StringIO(stdin)
    try:
        code = main(list(args))
    finally:
        sys.stdin = sys.__stdin__
    out, err = capsys.readouterr()
    return code, out, err


def _command(tmp_path: Path, passphrase: str) -> str:
    script = tmp_path / f"pw-{hashlib.sha1(passphrase.encode()).hexdigest()[:6]}.sh"
    script.write_text(f"#!/bin/sh\necho '{passphrase}'\n")
    script.chmod(0o700)
    return str(script)


@pytest.fixture
def enc(capsys, no_model_config, db_path, tmp_path, monkeypatch) -> Path:  # type: ignore[no-untyped-def]
    code, out, err = run(
        capsys, "--db", str(db_path), "init", "--encrypt", "--passphrase-stdin", stdin=PASS + "\n"
    )
    assert code == 0, err
    code, _, err = run(capsys, "--db", str(db_path), "memory", "add", f"I hide {MARK} here", "-c", "fact")
    assert code == 0, err
    keys.forget_process_keys()
    monkeypatch.setenv(keys.PASSPHRASE_COMMAND, _command(tmp_path, PASS))
    return db_path


def test_init_encrypt_then_every_command_opens_it_with_the_command(capsys, enc) -> None:  # type: ignore[no-untyped-def]
    assert keys.state(enc) == "encrypted" and MARK.encode() not in enc.read_bytes()
    code, out, err = run(capsys, "--db", str(enc), "memory", "list", "--json")
    assert code == 0, err
    assert MARK in out
    code, out, _ = run(capsys, "--db", str(enc), "key", "status", "--json")
    status = json.loads(out)
    assert status["state"] == "encrypted" and status["passphrase_command"] and not status["in_keyring"]


def test_missing_or_wrong_passphrase_is_one_line_exit_2_and_changes_nothing(  # type: ignore[no-untyped-def]
    capsys, enc, tmp_path, monkeypatch
) -> None:
    before = hashlib.sha256(enc.read_bytes()).hexdigest()
    monkeypatch.delenv(keys.PASSPHRASE_COMMAND)
    code, out, err = run(capsys, "--db", str(enc), "memory", "add", "new text", "-c", "fact")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and "no passphrase was found" in err
    keys.forget_process_keys()
    wrong = "wrong-horse-battery"
    monkeypatch.setenv(keys.PASSPHRASE_COMMAND, _command(tmp_path, wrong))
    for args in (
        ["memory", "add", "x", "-c", "fact"],
        ["export", "-o", str(tmp_path / "e.json")],
        ["decrypt"],
    ):
        code, out, err = run(capsys, "-v", "--db", str(enc), *args)
        assert code == 2, (args, err)
        assert wrong not in out + err and PASS not in out + err
        assert "does not open it" in err
    assert hashlib.sha256(enc.read_bytes()).hexdigest() == before
    assert not (tmp_path / "e.json").exists()


def test_a_wrong_passphrase_in_a_real_process_never_reaches_its_output(enc, tmp_path) -> None:  # type: ignore[no-untyped-def]
    wrong = "not-the-right-one-99"
    env = dict(os.environ, MEMAPP_PASSPHRASE_COMMAND=_command(tmp_path, wrong), MEMAPP_DB=str(enc))
    done = subprocess.run(
        [sys.executable, "-m", "app", "-v", "search", MARK],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert wrong not in done.stdout + done.stderr and PASS not in done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and "encrypted" in done.stderr


def test_export_of_an_encrypted_database_is_age_or_refused(capsys, enc, tmp_path) -> None:  # type: ignore[no-untyped-def]
    db = ["--db", str(enc)]
    out_file = tmp_path / "export.json.age"
    code, out, err = run(capsys, *db, "export", "-o", str(out_file))
    assert code == 0, err
    data = out_file.read_bytes()
    assert data.startswith(b"age-encryption.org/v1\n") and MARK.encode() not in data
    assert oct(out_file.stat().st_mode & 0o777) == "0o600"
    code, _, err = run(capsys, *db, "export", "--format", "markdown", "-o", str(tmp_path / "md"))
    assert code == 2 and "--plain" in err and not (tmp_path / "md").exists()
    code, _, err = run(capsys, *db, "export", "-o", str(tmp_path / "plain.json"), "--plain")
    assert code == 0 and MARK in (tmp_path / "plain.json").read_text()
    # restored into a new encrypted chat.db with the same passphrase (a new machine)
    other = tmp_path / "other.db"
    code, _, err = run(
        capsys, "--db", str(other), "init", "--encrypt", "--passphrase-stdin", stdin=PASS + "\n"
    )
    assert code == 0, err
    code, out, err = run(capsys, "--db", str(other), "import", str(out_file), "--no-embed", "--json")
    assert code == 0, err
    assert json.loads(out)["memories_added"] == 1
    code, out, _ = run(capsys, "--db", str(other), "memory", "list", "--json")
    assert MARK in out


def test_backup_of_an_encrypted_database_is_encrypted_with_the_same_key(capsys, enc, tmp_path) -> None:  # type: ignore[no-untyped-def]
    copy = tmp_path / "copy.db"
    code, _, err = run(capsys, "--db", str(enc), "backup", str(copy))
    assert code == 0, err
    assert keys.state(copy) == "encrypted" and MARK.encode() not in copy.read_bytes()
    keys.forget_process_keys()
    code, out, err = run(capsys, "--db", str(copy), "memory", "list", "--json")
    assert code == 0 and MARK in out


def test_keyring_remember_rekey_and_decrypt(capsys, enc, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    db = ["--db", str(enc)]
    monkeypatch.delenv(keys.PASSPHRASE_COMMAND)
    code, _, err = run(capsys, *db, "key", "remember", "--passphrase-stdin", stdin="a wrong one\n")
    assert code == 2 and "does not open" in err
    code, _, err = run(capsys, *db, "key", "remember", "--passphrase-stdin", stdin=PASS + "\n")
    assert code == 0, err
    keys.forget_process_keys()
    code, out, err = run(capsys, *db, "memory", "list", "--json")  # from the keyring now
    assert code == 0 and MARK in out, err
    old_salt = keys.salt_of(enc)
    code, out, err = run(capsys, *db, "rekey", "--passphrase-stdin", "--json", stdin=NEW + "\n")
    assert code == 0, err
    assert json.loads(out)["remembered"] is True  # it was in the keyring: the new one replaces it
    assert keys.keyring_get(old_salt) is None and keys.keyring_get(keys.salt_of(enc)) == NEW
    keys.forget_process_keys()
    assert not keys.unlock(enc, PASS) and keys.unlock(enc, NEW)
    code, out, err = run(capsys, *db, "decrypt", "--json")
    assert code == 0, err
    assert json.loads(out)["after"] == "plain"
    assert MARK.encode() in enc.read_bytes()
    code, _, err = run(capsys, *db, "encrypt", "--passphrase-stdin", stdin="short\n")
    assert code == 2 and "at least 8" in err and keys.state(enc) == "plain"
    code, _, err = run(capsys, *db, "encrypt", "--passphrase-stdin", stdin=PASS + "\n")
    assert code == 0, err
    assert keys.state(enc) == "encrypted"


def test_init_refuses_an_existing_database(capsys, enc) -> None:  # type: ignore[no-untyped-def]
    before = enc.read_bytes()
    code, _, err = run(capsys, "--db", str(enc), "init", "--encrypt", "--passphrase-stdin", stdin=NEW + "\n")
    assert code == 2 and "already exists" in err and enc.read_bytes() == before


def test_a_new_passphrase_is_never_taken_without_a_terminal_or_stdin(capsys, db_path) -> None:  # type: ignore[no-untyped-def]
    code, _, err = run(capsys, "--db", str(db_path), "init", "--encrypt")
    assert code == 2 and "--passphrase-stdin" in err and not db_path.exists()
