"""chat.db encrypted at rest (issue 33 part 1): the key, encrypt/decrypt/rekey through a verified copy, what
is written beside an encrypted database, and the seal API sync uses. Real apsw-sqlite3mc files in tmp_path."""

from __future__ import annotations

import hashlib
import logging
import os
import stat
import threading
import time
from pathlib import Path

import apsw
import pytest

from embeddings import FakeEmbedder
from store import Store, StoreError, ThreadIn, writelock
from store import db as chat_db
from store.crypto import convert, keys
from store.crypto.seal import Sealer, SealError, is_sealed, open_export, seal_export
from store.errors import EncryptionKeyError
from store.maintenance import backup
from store.records import MessageIn

PASS = "correct horse battery staple"
MARK = "zebra-plaintext-7Q4"  # a word that must never be found in an encrypted file's bytes


def _fill(path: Path, n: int = 3) -> None:
    with Store(path, embedder=FakeEmbedder()) as s:
        for t in range(n):
            s.write_thread(
                ThreadIn(
                    "generic",
                    f"t{t}",
                    f"Thread {t} {MARK}",
                    [MessageIn("user", f"message {t} about {MARK} " + "x" * 300, f"m{t}")],
                )
            )
        s.add_memory(f"I keep my notes about {MARK} in a safe", "fact")


def _sidecars(path: Path) -> bytes:
    """Every byte of chat.db and what SQLite keeps beside it."""
    out = b""
    for suffix in ("", "-wal", "-journal", "-shm"):
        p = path.with_name(path.name + suffix)
        if p.exists():
            out += p.read_bytes()
    return out


@pytest.fixture
def enc_db(tmp_path: Path) -> Path:
    path = tmp_path / "chat.db"
    convert.create_encrypted(path, PASS)
    _fill(path)
    keys.forget_process_keys()
    return path


def test_the_apsw_in_use_is_sqlite3mc() -> None:
    assert keys.supported(), "apsw-sqlite3mc must be the installed apsw (pyproject.toml)"


def test_new_encrypted_database_holds_no_plaintext_in_file_or_wal(tmp_path: Path) -> None:
    path = tmp_path / "chat.db"
    convert.create_encrypted(path, PASS)
    with Store(path, embedder=FakeEmbedder()) as s:
        _fill(path)
        s.add_memory(f"one more {MARK} while another connection is open", "fact")
        wal = path.with_name("chat.db-wal")
        assert wal.exists() and wal.stat().st_size > 0  # the WAL holds pages now: they are encrypted too
        assert MARK.encode() not in _sidecars(path)
    assert keys.state(path) == "encrypted"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_the_rollback_journal_and_temp_store_of_an_encrypted_file_hold_no_plaintext(
    enc_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The journal holds the original pages while a transaction runs (here: ones with MARK in them). The
    journal mode is switched by hand, outside memapp's write queue (store.writelock), as no memapp path does."""
    monkeypatch.setattr(writelock, "STRICT", False)
    keys.unlock(enc_db, PASS)
    con = chat_db.connect(enc_db)
    assert con.execute("PRAGMA temp_store").fetchall() == [(2,)]  # MEMORY: no temporary files at all
    con.execute("PRAGMA journal_mode = DELETE").fetchall()
    con.execute("BEGIN IMMEDIATE")
    con.execute("UPDATE messages SET content = 'replaced ' || id")
    journal = enc_db.with_name("chat.db-journal")
    assert journal.exists() and journal.stat().st_size > 4096
    assert MARK.encode() not in journal.read_bytes()
    con.execute("ROLLBACK")
    con.close()


def test_the_passphrase_alone_opens_it_in_sqlite3mc(enc_db: Path) -> None:
    """The file is sqlite3mc's own format: `PRAGMA key = 'passphrase'` opens it, no memapp needed."""
    con = apsw.Connection(str(enc_db))
    con.pragma("key", PASS)
    assert con.execute("SELECT count(*) FROM threads").fetchall() == [(3,)]
    con.close()


def test_without_a_key_nothing_opens_and_nothing_changes(enc_db: Path) -> None:
    before = hashlib.sha256(enc_db.read_bytes()).hexdigest()
    with pytest.raises(EncryptionKeyError, match="no passphrase was found"):
        chat_db.connect(enc_db)
    assert not keys.unlock(enc_db, "wrong passphrase")
    with pytest.raises(EncryptionKeyError):
        Store(enc_db, embedder=FakeEmbedder())
    assert hashlib.sha256(enc_db.read_bytes()).hexdigest() == before
    assert not enc_db.with_name("chat.db-wal").exists()


def test_the_key_is_derived_once_per_process(enc_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = keys.derive

    def counted(passphrase: str, salt: bytes) -> bytes:
        calls.append(1)
        return real(passphrase, salt)

    monkeypatch.setattr(keys, "derive", counted)
    assert keys.unlock(enc_db, PASS)
    t0 = time.process_time()
    for _ in range(30):
        chat_db.connect(enc_db).close()
    per_open = (time.process_time() - t0) / 30
    assert calls == [1]
    # sqlite3mc's own derivation costs ~26-31 ms of CPU an open; the raw key skips it
    assert per_open < 0.015, per_open


def test_threads_share_the_key(enc_db: Path) -> None:
    keys.unlock(enc_db, PASS)
    s = Store(enc_db, embedder=FakeEmbedder())
    seen: list[int] = []
    t = threading.Thread(target=lambda: seen.append(s.stats()["threads"]))
    t.start()
    t.join()
    s.close()
    assert seen == [3]


def test_passphrase_command_and_its_failures(
    enc_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = tmp_path / "pw.sh"
    script.write_text(f"#!/bin/sh\nprintf '%s\\nsecond line ignored\\n' '{PASS}'\n")
    script.chmod(0o700)
    monkeypatch.setenv(keys.PASSPHRASE_COMMAND, str(script))
    assert keys.key_for(enc_db).source == keys.PASSPHRASE_COMMAND
    keys.forget_process_keys()
    monkeypatch.setenv(keys.PASSPHRASE_COMMAND, "sh -c 'echo nope-wrong-pass'")
    with pytest.raises(EncryptionKeyError) as wrong:
        keys.key_for(enc_db)
    assert "tried: MEMAPP_PASSPHRASE_COMMAND" in str(wrong.value) and "nope-wrong-pass" not in str(
        wrong.value
    )
    monkeypatch.setenv(keys.PASSPHRASE_COMMAND, "sh -c 'echo leaked-text >&2; exit 3'")
    with pytest.raises(EncryptionKeyError, match="exit status 3") as failed:
        keys.key_for(enc_db)
    assert "leaked-text" not in str(failed.value)
    monkeypatch.setenv(keys.PASSPHRASE_COMMAND, "no-such-program-here")
    with pytest.raises(EncryptionKeyError, match="was not found"):
        keys.key_for(enc_db)


def test_keyring_entry_is_named_by_the_salt_and_opens_backups(enc_db: Path, tmp_path: Path) -> None:
    keys.keyring_set(keys.salt_of(enc_db), PASS)
    assert keys.key_for(enc_db).source == "the keyring"
    copy = backup(Store(enc_db, embedder=FakeEmbedder()), tmp_path / "copy.db")
    keys.forget_process_keys()
    assert keys.state(copy) == "encrypted" and keys.salt_of(copy) == keys.salt_of(enc_db)
    assert MARK.encode() not in copy.read_bytes()
    with Store(copy, embedder=FakeEmbedder()) as s:  # the same keyring entry opens the backup
        assert s.stats()["threads"] == 3
    assert keys.keyring_delete(keys.salt_of(enc_db))
    keys.forget_process_keys()
    assert not keys.unattended(enc_db)


def test_prompt_is_asked_at_most_three_times(enc_db: Path) -> None:
    answers = iter(["first wrong", "second wrong", PASS])
    asked: list[int] = []

    def prompt(path: Path, attempt: int) -> str:
        asked.append(attempt)
        return next(answers)

    keys.set_prompt(prompt)
    assert keys.key_for(enc_db).source == "prompt"
    assert asked == [1, 2, 3]
    keys.forget_process_keys()
    keys.set_prompt(lambda path, attempt: "always wrong")
    with pytest.raises(EncryptionKeyError, match="tried: prompt"):
        keys.key_for(enc_db)


def test_wrong_passphrase_never_reaches_the_logs(enc_db: Path, caplog: pytest.LogCaptureFixture) -> None:
    secret = "my-wrong-secret-words"
    caplog.set_level(logging.DEBUG)
    chat_db.connect(":memory:").close()  # SQLite's log is routed to logging from here on
    keys.set_prompt(lambda path, attempt: secret)
    with pytest.raises(EncryptionKeyError) as err:
        chat_db.connect(enc_db)
    assert keys.unlock(enc_db, PASS)
    key_hex = keys.derive(PASS, keys.salt_of(enc_db)).hex()
    chat_db.connect(enc_db).close()
    text = caplog.text + str(err.value)
    assert secret not in text and PASS not in text and key_hex not in text


def test_encrypt_decrypt_rekey_keep_every_row(tmp_path: Path) -> None:
    path = tmp_path / "chat.db"
    _fill(path)
    with Store(path, embedder=FakeEmbedder()) as s:
        before = (s.stats(), [m.content for m in s.list_memories()], s.search(MARK).to_json())
    done = convert.encrypt(path, PASS)
    assert (done.before, done.after) == ("plain", "encrypted") and done.rows > 0
    assert MARK.encode() not in _sidecars(path)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".memapp-partial")] == []
    new_pass = "a new passphrase, longer"
    convert.rekey(path, new_pass)
    keys.forget_process_keys()
    assert not keys.unlock(path, PASS) and keys.unlock(path, new_pass)
    with Store(path, embedder=FakeEmbedder()) as s:
        assert (s.stats(), [m.content for m in s.list_memories()], s.search(MARK).to_json()) == before
    convert.decrypt(path)
    assert keys.state(path) == "plain" and MARK.encode() in path.read_bytes()
    with Store(path, embedder=FakeEmbedder()) as s:
        assert s.stats() == before[0]


def test_conversion_refuses_while_another_connection_has_it_open(tmp_path: Path) -> None:
    path = tmp_path / "chat.db"
    _fill(path)
    other = chat_db.connect(path)  # a TUI or MCP server left open: WAL mode, a live connection
    other.execute("SELECT count(*) FROM threads").fetchall()
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    with pytest.raises(StoreError, match="open in another memapp"):
        convert.encrypt(path, PASS)
    other.close()
    assert keys.state(path) == "plain"
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before


def test_a_copy_that_does_not_check_out_leaves_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "chat.db"
    _fill(path)
    real = convert._counts
    calls = iter([False, True])
    monkeypatch.setattr(convert, "_counts", lambda con: {**real(con), "x": 1} if next(calls) else real(con))
    with pytest.raises(StoreError, match="did not check out"):
        convert.encrypt(path, PASS)
    assert keys.state(path) == "plain"
    assert sorted(p.name for p in tmp_path.iterdir() if "chat.db" in p.name or "partial" in p.name) == [
        "chat.db"
    ]


def test_a_process_waiting_on_the_old_file_fails_instead_of_writing_into_it(tmp_path: Path) -> None:
    """The old file's page 1 is zeroed once the new one has the name: a connection that opened the old
    inode meanwhile gets "not a database", never a place where its writes silently disappear."""
    path = tmp_path / "chat.db"
    _fill(path)
    stale = apsw.Connection(str(path))  # opened, not read yet: it holds the old inode
    convert.encrypt(path, PASS)
    with pytest.raises((apsw.NotADBError, apsw.CorruptError)):
        stale.execute("INSERT INTO settings(key, value) VALUES ('lost', 'write')")
    stale.close()


def test_an_encrypted_file_without_sqlite3mc_says_so(enc_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(keys, "supported", lambda: False)
    with pytest.raises(StoreError, match="apsw-sqlite3mc"):
        chat_db.connect(enc_db)


def test_a_file_of_another_kind_is_not_taken_for_encrypted(tmp_path: Path) -> None:
    other = tmp_path / "notes.db"
    other.write_bytes(os.urandom(4096))
    assert keys.state(other) == "other"
    with pytest.raises(StoreError, match="not a memapp database"):
        chat_db.connect(other)


def test_sealer_is_deterministic_cheap_and_bound_to_the_passphrase(enc_db: Path) -> None:
    keys.unlock(enc_db, PASS)
    a = Sealer.for_database(enc_db, b"folder-1")
    assert a is not None
    blob = a.seal(b"changeset bytes " * 100)
    assert is_sealed(blob) and b"changeset" not in blob
    # another device: another database (another salt), the same passphrase, the same folder
    other_db = enc_db.with_name("device-b.db")
    convert.create_encrypted(other_db, PASS)
    b = Sealer.for_database(other_db, b"folder-1")
    assert b is not None and b.unseal(blob) == b"changeset bytes " * 100
    assert b.identity() == a.identity() and b.identity().startswith("AGE-SECRET-KEY-1")
    with pytest.raises(SealError):
        Sealer("another passphrase entirely", b"folder-1").unseal(blob)
    with pytest.raises(SealError):
        Sealer(PASS, b"folder-2").unseal(blob)
    t0 = time.perf_counter()
    for _ in range(50):
        a.unseal(a.seal(b"y" * 10_000))
    assert (time.perf_counter() - t0) / 50 < 0.05  # no per-file key derivation (age's scrypt is ~1 s)


def test_session_changesets_work_between_encrypted_files(enc_db: Path, tmp_path: Path) -> None:
    """Sync records and applies SQLite session changesets (apsw.Session): under sqlite3mc, on encrypted files."""
    keys.unlock(enc_db, PASS)
    other = tmp_path / "device-b.db"
    convert.create_encrypted(other, "the other device's own passphrase")
    src, dst = chat_db.connect(enc_db), chat_db.connect(other)
    session = apsw.Session(src, "main")
    session.attach("settings")
    with src:
        src.execute("INSERT INTO settings(key, value) VALUES ('synced', ?)", (MARK,))
    with dst:
        apsw.Changeset.apply(session.changeset(), dst)
    assert dst.execute("SELECT value FROM settings WHERE key = 'synced'").fetchall() == [(MARK,)]
    session.close()
    src.close()
    dst.close()
    assert MARK.encode() not in _sidecars(other)


def test_sealer_for_a_plain_database_is_none(tmp_path: Path) -> None:
    path = tmp_path / "plain.db"
    _fill(path)
    assert Sealer.for_database(path, b"x") is None


def test_export_sealing_round_trip() -> None:
    sealed = seal_export(b'{"format": "memapp-export"}', PASS)
    assert sealed.startswith(b"age-encryption.org/v1\n-> scrypt")
    assert open_export(sealed, PASS) == b'{"format": "memapp-export"}'
    with pytest.raises(SealError):
        open_export(sealed, "not the passphrase")
