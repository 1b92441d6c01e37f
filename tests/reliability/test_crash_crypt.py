"""Kill series for `memapp encrypt`, `rekey` and `decrypt` (issue 33): a kill at any moment leaves the old
database or the new one, whole, never neither, and never a plain copy beside an encrypted one.

Each step picks the next conversion from the state chat.db is in (plain: encrypt; encrypted: rekey or
decrypt), and kills it in turn just before a seeded random one of the writes SQLite makes (the switch out of
WAL, the copy; cli_runner.py counts them), at a named step after SQLite's last write (before the copy is
checked, before and after the rename, after the old file was zeroed), or at a random moment of the run's
measured duration. After each
kill the file must open with the old passphrase or the new one (or be plain, for the old or new state of an
encrypt/decrypt), hold every row, pass the invariants, and, when encrypted, hold no plain text.
"""

from __future__ import annotations

import os
import random
import shutil
import time
from pathlib import Path

import pytest

from store import Store
from store.crypto import keys
from store.files import PARTIAL_PREFIX
from store.importing.pipeline import import_paths
from tests.reliability.generated_exports import conversation_texts, write_generic
from tests.reliability.invariants import database_problems, thread_contents
from tests.reliability.processes import Zygote, count_kills

SEED = int(os.environ.get("MEMAPP_CRASH_SEED", "8008"))
MARK = "plainword-okapi-31"

pytestmark = [pytest.mark.soak, pytest.mark.serial]

# The steps after SQLite's last write, each killed before or after (store/crypto/convert.py).
STEPS = [
    ("before", "store.crypto.convert:commit_partial"),
    ("after", "store.crypto.convert:commit_partial"),
    ("before", "store.crypto.convert:_check_copy"),
    ("after", "store.crypto.convert:_zero"),
]


def _build(tmp: Path, threads: int) -> Path:
    db = tmp / "chat.db"
    export = write_generic(tmp / "threads.json", conversation_texts(SEED + 40, threads, 20))
    with Store(db, embedder=None) as store:
        assert import_paths(store, [export], embed=False, summarize=False).ok
        store.add_memory(f"the word {MARK} must never be seen in an encrypted file", "fact")
    return db


def _state(db: Path, candidates: list[str | None]) -> str | None:
    """Which of `candidates` opens chat.db now (None: it is plain); AssertionError when none does."""
    keys.forget_process_keys()
    kind = keys.state(db)
    if kind == "plain":
        assert None in candidates, "chat.db is plain where it should be encrypted"
        return None
    assert kind == "encrypted", f"chat.db is neither plain nor encrypted: {kind}"
    for passphrase in candidates:
        if passphrase is not None and keys.unlock(db, passphrase):
            return passphrase
    raise AssertionError("no passphrase of the old or the new state opens chat.db")


def _contents(db: Path) -> tuple[dict[str, list[str]], list[str]]:
    with Store(db, embedder=None) as store:
        assert database_problems(store) == []
        memories = [m.content for m in store.list_memories()]
        return thread_contents(store, "generic"), memories


def test_kills_during_encrypt_rekey_decrypt_leave_the_old_or_the_new_database(
    tmp_path: Path, soak: bool, figures: dict[str, int]
) -> None:
    db = _build(tmp_path, 150 if soak else 40)
    expected = _contents(db)
    current_file, new_file = tmp_path / "current.txt", tmp_path / "new.txt"
    script = tmp_path / "pass.sh"
    script.write_text(f"#!/bin/sh\ncat '{current_file}'\n")
    script.chmod(0o700)
    rng = random.Random(SEED + 41)
    steps = 48 if soak else 9
    current: str | None = None  # plain at first
    landed = 0
    with Zygote(tmp_path, {keys.PASSPHRASE_COMMAND: str(script)}) as zygote:
        for step in range(steps):
            new = None if current is not None and rng.random() < 0.3 else f"passphrase number {step} here"
            op = "encrypt" if current is None else ("rekey" if new is not None else "decrypt")
            current_file.write_text((current or "") + "\n")
            new_file.write_text((new or "") + "\n")
            args = [op] if op == "decrypt" else [op, "--passphrase-stdin"]
            probe = tmp_path / "probe.db"
            shutil.copyfile(db, probe)
            counted = zygote.run(["--db", str(probe), *args], count_writes=True, stdin=new_file)
            assert counted.wait() == 0, counted.stderr()
            duration = time.monotonic() - counted.started
            probe.unlink()
            if step % 3 == 0:
                job = zygote.run(
                    ["--db", str(db), *args], kill_at_write=rng.randint(1, counted.writes()), stdin=new_file
                )
                killed = job.wait() == -9
            elif step % 3 == 1:
                point = STEPS[(step // 3) % len(STEPS)]
                job = zygote.run(["--db", str(db), *args], kill_around=point, stdin=new_file)
                killed = job.wait() == -9
                assert killed, f"{op} never reached {point}: {job.stderr()}"
            else:
                job = zygote.run(["--db", str(db), *args], stdin=new_file)
                killed = job.kill_after(rng.uniform(0.0, duration))
                assert killed or job.wait() == 0, job.stderr()
            now = _state(db, [current, new])
            if not killed:
                assert now == new, f"{op} finished but chat.db is not in its new state"
            landed += killed
            if now is not None:
                assert MARK.encode() not in db.read_bytes()
            assert _contents(db) == expected
            current = now
        current_file.write_text((current or "") + "\n")
        new_file.write_text("the last passphrase\n")
        last = zygote.run(
            ["--db", str(db), "rekey" if current else "encrypt", "--passphrase-stdin"], stdin=new_file
        )
        assert last.wait() == 0, last.stderr()
    assert _state(db, ["the last passphrase"]) == "the last passphrase"
    assert _contents(db) == expected
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(PARTIAL_PREFIX)] == []  # swept
    assert landed >= steps // 2, f"only {landed} of {steps} kills landed in a running conversion"
    count_kills(figures, "encrypt/rekey/decrypt", landed)
