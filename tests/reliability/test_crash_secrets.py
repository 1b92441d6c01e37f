"""`memapp secrets redact` killed at any moment (issue 33.2): SIGKILL just before a seeded random one of
the writes SQLite makes for it (processes.kill_at_a_write), on a chat.db filled with secrets while
`[privacy] redact = "off"`. After each kill: the usual invariants (integrity, indexes in step with the
rows, memory history replaying to each memory), and every message and memory is either exactly as it
was or exactly its redaction, never anything between. Then a re-run completes: no secret left, nothing
without its vector. CI kills a few times; the soak run (`make soak`) many more on a bigger database.
"""

from __future__ import annotations

import importlib.util
import os
import random
import shutil
from pathlib import Path

import pytest

from embeddings import FakeEmbedder
from store import Store
from store.config import Config, PrivacyConfig
from store.records import MessageIn, ThreadIn
from store.secrets import redact_text
from store.secrets.database import scan
from tests.reliability.invariants import checked_store
from tests.reliability.processes import Zygote, count_kills, kill_at_a_write

SEED = int(os.environ.get("MEMAPP_CRASH_SEED", "8008"))
ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.soak, pytest.mark.serial]


def _fakes():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(
        "secret_fakes", ROOT / "bench" / "eval" / "secrets" / "fakes.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


KINDS = ("github-token", "anthropic-key", "aws-access-key", "jwt", "stripe-key", "huggingface-token")


def _template(path: Path, n_threads: int, per_thread: int, seed: int) -> dict[str, str]:
    """A chat.db with secrets in about a third of its messages and memories (stored: redaction off),
    embedded with the fake embedder. Returns every original text, by "m<id>" / "k<id>"."""
    fakes = _fakes()
    rng = random.Random(seed)
    config = Config(privacy=PrivacyConfig(redact="off"))
    with Store(path, embedder=FakeEmbedder(), config=config) as store:
        for t in range(n_threads):
            messages = []
            for i in range(per_thread):
                text = f"turn {i} of thread {t}: we talked about the deploy pipeline and the backups"
                if rng.random() < 0.35:
                    text += f"\nexport TOKEN={fakes.secret(rng, rng.choice(KINDS))}"
                messages.append(MessageIn("user" if i % 2 == 0 else "assistant", text, f"{t}-{i}"))
            store.write_thread(ThreadIn("jsonl", f"t{t}", f"thread {t}", messages))
        for k in range(n_threads):
            text = f"project note {k}: the staging key is {fakes.secret(rng, rng.choice(KINDS))}"
            memory = store.add_memory(
                text if k % 3 == 0 else f"project note {k}: no secret", "project"
            ).memory
            if k % 6 == 0:
                store.edit_memory(memory.id, content=text + " (rotated monthly)")
        originals = {f"m{i}": str(c) for i, c in store.con.execute("SELECT id, content FROM messages")}
        originals |= {
            f"k{i}": str(c) for i, c in store.con.execute("SELECT id, content FROM long_term_memories")
        }
    return originals


def _old_or_new(db: Path, originals: dict[str, str]) -> None:
    with Store(db, embedder=None) as store:
        rows = [(f"m{i}", str(c)) for i, c in store.con.execute("SELECT id, content FROM messages")]
        rows += [
            (f"k{i}", str(c)) for i, c in store.con.execute("SELECT id, content FROM long_term_memories")
        ]
    assert len(rows) == len(originals)
    for key, content in rows:
        assert content in (originals[key], redact_text(originals[key])), key


def test_redact_killed_leaves_old_or_new_rows_then_completes(
    tmp_path: Path, soak: bool, figures: dict[str, int]
) -> None:
    template = tmp_path / "template.db"
    originals = _template(template, 60 if soak else 16, 12 if soak else 8, SEED + 20)
    rng = random.Random(SEED + 21)
    kills = 12 if soak else 3
    landed = 0
    with Zygote(tmp_path) as zygote:
        for k in range(kills):
            db = tmp_path / f"chat-{k}.db"
            shutil.copyfile(template, db)
            # a first kill, then (sometimes) a second one into the re-run: resuming must be as safe
            for _ in range(1 + (k % 2)):
                landed += kill_at_a_write(zygote, db, ["secrets", "redact"], rng, fake_embedder=True)
                checked_store(db).close()
                _old_or_new(db, originals)
            finish = zygote.run(["--db", str(db), "secrets", "redact"], fake_embedder=True, tag=f"finish-{k}")
            assert finish.wait() == 0, finish.stderr()
            with checked_store(db) as store:
                assert scan(store).secrets == 0
                missing = store.con.execute(
                    "SELECT count(*) FROM messages m WHERE NOT EXISTS "
                    "(SELECT 1 FROM message_chunks c WHERE c.message_id = m.id)"
                ).fetchall()[0][0]
                assert missing == 0  # the re-run re-embedded what the killed one left without vectors
                assert store.stats()["embedded_memories"] == store.stats()["memories"]["active"]
            _old_or_new(db, originals)
    assert landed >= kills
    count_kills(figures, "secrets redact", landed)
