"""Crash safety for the writers test_crash.py does not cover (issue 20, part 1): `embed`, `summarize
--all`, `trash purge` and schema migrations (all of them from a v1 file; migration 7, which rewrites
every vector row as float16, from a v6 file with 42,000 vectors), each killed with SIGKILL at seeded progress points (a row
count reached in chat.db, or just before a random one of the writes SQLite makes, counted on a copy
first: never a wall-clock moment), then checked like every crash test (integrity,
indexes paired with canonical rows, history replaying to the rows) and run to the end, which must reach
exactly the expected state. CI kills each a few times; the soak run (`make soak`) many more.
"""

from __future__ import annotations

import hashlib
import os
import random
import shutil
from pathlib import Path

import apsw
import numpy as np
import pytest
import sqlite_vec

from embeddings import FakeEmbedder
from store import Store
from store.importing.pipeline import import_paths
from store.migrations import LATEST
from tests.reliability.generated_exports import conversation_texts, write_generic
from tests.reliability.invariants import checked_store, database_problems
from tests.reliability.processes import Zygote, count_kills, kill_at_a_write, no_embed_config

SEED = int(os.environ.get("MEMAPP_CRASH_SEED", "8008"))
FIXTURE_V1 = Path(__file__).resolve().parents[1] / "fixtures" / "chat-v1.db"
FIXTURE_V6 = Path(__file__).resolve().parents[1] / "fixtures" / "chat-v6-vectors.db"

pytestmark = [pytest.mark.soak, pytest.mark.serial]


def _count(db: Path, sql: str) -> int:
    with Store(db, embedder=None) as s:
        return int(str(s.con.execute(sql).fetchall()[0][0]))


def _kill_series(
    tmp: Path,
    db: Path,
    args: list[str],
    progress_sql: str,
    total: int,
    kills: int,
    *,
    fake_embedder: bool,
    seed: int,
) -> int:
    """Kill `args` `kills` times, each once `progress_sql` has grown by a random share of what is left;
    check the database after each kill. Returns how many kills landed while the command was running."""
    rng = random.Random(seed)
    landed = 0
    with Zygote(tmp) as zygote:
        for _ in range(kills):
            done = _count(db, progress_sql)
            target = min(total, done + 1 + int(rng.uniform(0.0, 1.5) * max(1, total - done) / 2))
            job = zygote.run(args, fake_embedder=fake_embedder)
            if job.kill_when(db, progress_sql, target, extra=rng.uniform(0.0, 0.01)):
                landed += 1
            else:
                assert job.poll() == 0, job.stderr()
            checked_store(db).close()
        finish = zygote.run(args, fake_embedder=fake_embedder, tag="finish")
        assert finish.wait() == 0, finish.stderr()
    return landed


def _imported(tmp: Path, n_threads: int, per_thread: int, *, embed: bool) -> tuple[Path, int]:
    spec = conversation_texts(SEED, n_threads, per_thread)
    export = write_generic(tmp / "conversations.json", spec)
    db = tmp / "chat.db"
    with Store(db, embedder=FakeEmbedder() if embed else None) as store:
        assert import_paths(store, [export], embed=embed, summarize=False).ok
    return db, spec.messages


def test_embed_killed_then_completes(tmp_path: Path, soak: bool, figures: dict[str, int]) -> None:
    n_threads, per = (60, 30) if soak else (20, 20)
    db, total = _imported(tmp_path, n_threads, per, embed=False)
    landed = _kill_series(
        tmp_path,
        db,
        ["--db", str(db), "embed"],
        "SELECT count(DISTINCT message_id) FROM message_chunks",
        total,
        12 if soak else 4,
        fake_embedder=True,
        seed=SEED + 1,
    )
    assert landed >= 1
    count_kills(figures, "embed", landed)
    with checked_store(db) as store:
        missing = store.con.execute(
            "SELECT count(*) FROM messages m WHERE NOT EXISTS (SELECT 1 FROM message_chunks c WHERE c.message_id = m.id)"
        ).fetchall()[0][0]
        assert missing == 0 and store.stats()["messages"] == total


def test_summarize_all_killed_then_completes(tmp_path: Path, soak: bool, figures: dict[str, int]) -> None:
    n_threads = 40 if soak else 14
    db, _ = _imported(tmp_path, n_threads, 35, embed=False)
    args = ["--db", str(db), "--config", str(no_embed_config(tmp_path)), "summarize", "--all"]
    landed = _kill_series(
        tmp_path,
        db,
        args,
        "SELECT count(*) FROM thread_summaries",
        n_threads,
        10 if soak else 4,
        fake_embedder=False,
        seed=SEED + 2,
    )
    count_kills(figures, "summarize --all", landed)
    with checked_store(db) as store:
        assert store.con.execute("SELECT count(*) FROM thread_summaries").fetchall()[0][0] == n_threads
        # every summary was recorded with its compression history, none twice for the same state
        assert (
            store.con.execute(
                "SELECT count(*) FROM thread_summaries s WHERE NOT EXISTS "
                "(SELECT 1 FROM compression_history h WHERE h.thread_id = s.thread_id)"
            ).fetchall()[0][0]
            == 0
        )


def test_trash_purge_killed_is_all_or_nothing(tmp_path: Path, soak: bool, figures: dict[str, int]) -> None:
    template = tmp_path / "template.db"
    n = 400 if soak else 120
    with Store(template, embedder=None) as store:
        ids = [
            store.add_memory(f"note number {i} about topic {i * 7 % 13}", "fact").memory.id for i in range(n)
        ]
        for i in ids:
            store.delete_memory(i)
        with store.con:  # in the trash for a year: all past the retention
            store.con.execute("UPDATE long_term_memories SET deleted_at = deleted_at - 365 * 86400")
    rng = random.Random(SEED + 3)
    kills = 12 if soak else 3
    landed = 0
    purge = ["--config", str(no_embed_config(tmp_path)), "trash", "purge"]
    with Zygote(tmp_path) as zygote:
        for k in range(kills):
            db = tmp_path / f"chat-{k}.db"
            shutil.copyfile(template, db)
            landed += kill_at_a_write(zygote, db, purge, rng, fake_embedder=False)
            with checked_store(db) as store:
                left = store.con.execute("SELECT count(*) FROM long_term_memories").fetchall()[0][0]
                assert left in (0, n)  # one transaction: all purged or none
            assert zygote.run(["--db", str(db), *purge]).wait() == 0
            with checked_store(db) as store:
                assert store.con.execute("SELECT count(*) FROM long_term_memories").fetchall()[0][0] == 0
                assert store.con.execute("SELECT count(*) FROM fts_memories").fetchall()[0][0] == 0
    assert landed == kills
    count_kills(figures, "trash purge", landed)


def test_migration_killed_leaves_either_version_and_then_completes(
    tmp_path: Path, soak: bool, figures: dict[str, int]
) -> None:
    """The v1 -> latest migration (run by any command's open), killed before a random one of its writes."""
    rng = random.Random(SEED + 4)
    landed = 0
    with Zygote(tmp_path) as zygote:
        for n in range(20 if soak else 4):
            db = tmp_path / f"v1-{n}.db"
            shutil.copyfile(FIXTURE_V1, db)
            args = ["--config", str(no_embed_config(tmp_path)), "stats", "--json"]
            landed += kill_at_a_write(zygote, db, args, rng, fake_embedder=False)
            with Store(
                db, embedder=None
            ) as store:  # opening finishes the migration (v1 history predates replay)
                assert database_problems(store) == []
                assert store.schema_version() == LATEST
                assert store.con.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    assert landed == (20 if soak else 4)
    count_kills(figures, "schema migration", landed)


def _raw(db: Path) -> apsw.Connection:
    con = apsw.Connection(str(db))
    con.enable_load_extension(True)
    con.load_extension(sqlite_vec.loadable_path())
    return con


def _grow_v6(db: Path, copies: int) -> None:
    """The v6 fixture with every chunk repeated `copies` times (more chunks of the same messages, each
    with a float32 row and its bit code, as the v6 writer stored them): a migration that takes long
    enough to be killed inside."""
    con = _raw(db)
    with con:
        base = con.execute("SELECT max(id) FROM message_chunks").fetchall()[0][0]
        for c in range(1, copies + 1):
            con.execute(
                "INSERT INTO message_chunks(message_id, chunk_index, start_char, end_char) "
                "SELECT message_id, chunk_index + ?, start_char, end_char FROM message_chunks WHERE id <= ?",
                (1000 * c, base),
            )
        con.execute(
            "INSERT INTO vec_chunks(chunk_id, embedding, thread_id, role, created_at, message_id) "
            "SELECT n.id, v.embedding, v.thread_id, v.role, v.created_at, v.message_id FROM message_chunks n "
            "JOIN message_chunks o ON o.message_id = n.message_id AND o.chunk_index = n.chunk_index % 1000 "
            "JOIN vec_chunks v ON v.chunk_id = o.id WHERE n.id > ?",
            (base,),
        )
        con.execute(
            "INSERT INTO vec_chunks_bits(chunk_id, shard, embedding, thread_id, role, created_at) "
            "SELECT chunk_id, chunk_id % 32, vec_quantize_binary(embedding), thread_id, role, created_at "
            "FROM vec_chunks WHERE chunk_id > ? ORDER BY chunk_id",
            (base,),
        )
    con.close()


def _vector_digest(db: Path) -> tuple[int, list[int], str]:
    """(user_version, vector row counts, hash of every vector row) read without migrating."""
    con = _raw(db)
    try:
        version = int(str(con.execute("PRAGMA user_version").fetchall()[0][0]))
        counts, h = [], hashlib.sha256()
        for table, pk in (("vec_memories", "memory_id"), ("vec_chunks", "chunk_id")):
            rows = con.execute(f"SELECT {pk}, embedding FROM {table} ORDER BY {pk}").fetchall()
            counts.append(len(rows))
            for i, blob in rows:
                h.update(int(i).to_bytes(8, "little") + bytes(blob))  # type: ignore[arg-type]
        return version, counts, h.hexdigest()
    finally:
        con.close()


def test_float16_migration_killed_leaves_v6_intact_then_completes(
    tmp_path: Path, soak: bool, figures: dict[str, int]
) -> None:
    """Migration 7 is one transaction: killed anywhere, the file is the v6 file byte for byte in its
    vectors (float32 rows, same hash) or fully converted; the next open converts it, keeping every
    vector to float16 precision."""
    grown = tmp_path / "v6-grown.db"
    shutil.copyfile(FIXTURE_V6, grown)
    _grow_v6(grown, 1000)
    before = _vector_digest(grown)
    assert before[0] == 6 and before[1][1] > 40_000
    con = _raw(grown)
    want = {int(i): bytes(b) for i, b in con.execute("SELECT chunk_id, embedding FROM vec_chunks")}  # type: ignore[arg-type]
    con.close()
    rng = random.Random(SEED + 6)
    landed = before_commit = 0
    with Zygote(tmp_path) as zygote:
        for n in range(10 if soak else 3):
            db = tmp_path / f"v6-{n}.db"
            shutil.copyfile(grown, db)
            args = ["--config", str(no_embed_config(tmp_path)), "stats", "--json"]
            landed += kill_at_a_write(zygote, db, args, rng, fake_embedder=False)
            after = _vector_digest(db)
            # each migration is its own transaction: a kill after 7 committed leaves 7, 8, ... LATEST
            assert 6 <= after[0] <= LATEST
            if after[0] == 6:
                assert after == before  # the old schema and every float32 row intact
                before_commit += 1
            with Store(db, embedder=None) as store:  # opening runs (or has run) migration 7
                assert store.schema_version() == LATEST
                assert database_problems(store) == []
                got = {r[0]: r[1] for r in store.con.execute("SELECT chunk_id, embedding FROM vec_chunks")}
                assert got.keys() == want.keys()
                for i in list(want)[:: max(1, len(want) // 500)]:
                    f32 = np.frombuffer(want[i], np.float32)
                    assert got[i] == f32.astype("<f2").tobytes()
    assert landed == (10 if soak else 3) and before_commit >= 1
    count_kills(figures, "float16 migration (v6 to v7)", landed)


def test_memory_add_that_merges_or_supersedes_killed(
    tmp_path: Path, soak: bool, figures: dict[str, int]
) -> None:
    """`memory add` of texts that merge into, supersede or queue against existing memories (store/truth),
    killed anywhere in the process; each add is one transaction: whole or absent, history consistent."""
    db = tmp_path / "chat.db"
    base = [
        "I live in Lisbon with my partner",
        "I prefer uv over pip for Python projects",
        "We use Postgres 15 for the billing service",
        "My dentist appointment is on Monday at 9",
    ]
    new = [
        "I moved to Porto with my partner",
        "I prefer pip over uv for Python projects",
        "We upgraded the billing service to Postgres 17",
        "My dentist appointment moved to Friday at 9",
        "I prefer uv over pip for python projects.",
        "I live in Lisbon with my partner, near the river",
    ]
    with Store(db, embedder=FakeEmbedder()) as store:
        for text in base:
            store.add_memory(text, "fact")
    rng = random.Random(SEED + 5)
    landed = 0
    with Zygote(tmp_path) as zygote:
        for n in range(24 if soak else 4):
            # Once a kill lands after the commit, that text is in; a new wording still merges or supersedes.
            text = ["", "Update: ", "Note that ", "For the record, "][n // len(new) % 4] + new[n % len(new)]
            args = ["memory", "add", text, "--category", "fact", "--json"]
            landed += kill_at_a_write(zygote, db, args, rng)
            checked_store(db).close()
        for text in new:  # then every add runs to the end: a refused merge is exit 1, never a crash
            job = zygote.run(
                ["--db", str(db), "memory", "add", text, "--category", "fact"], fake_embedder=True
            )
            assert job.wait() in (0, 1), job.stderr()
            assert "Traceback" not in job.stderr()
    with checked_store(db) as store:
        assert len(store.list_memories(limit=100)) >= len(base)
    assert landed >= (20 if soak else 4)
    count_kills(figures, "memory add with merge/supersede", landed)


def test_extract_accept_killed_is_whole_or_absent(
    tmp_path: Path, soak: bool, figures: dict[str, int]
) -> None:
    from store.extract.suggestions import extract_suggestions

    db = tmp_path / "chat.db"
    lines = [
        "I prefer tea over coffee in the morning.",
        "I'm working on a bird-feeder camera with a Raspberry Pi.",
        "I know how to solder surface-mount parts.",
        "I prefer dark themes in every editor.",
        "I'm working on a Rust parser for my config files.",
        "I know how to bake sourdough bread.",
    ]
    with Store(db, embedder=FakeEmbedder()) as store:
        from store import MessageIn, ThreadIn

        msgs = [
            MessageIn("user" if i % 2 == 0 else "assistant", t if i % 2 == 0 else "Noted.", f"m{i}")
            for i, t in enumerate(x for line in lines for x in (line, "ok"))
        ]
        tid = store.write_thread(ThreadIn("generic", "prefs", "Preferences", msgs)).thread_id
        extract_suggestions(store, tid)
        pending = [
            int(r[0])
            for r in store.con.execute(
                "SELECT id FROM memory_suggestions WHERE status = 'pending' ORDER BY id"
            )
        ]
    assert pending
    rng = random.Random(SEED + 6)
    landed = 0
    with Zygote(tmp_path) as zygote:
        for _ in range(16 if soak else 4):
            with Store(db, embedder=None) as store:
                pending = [
                    int(r[0])
                    for r in store.con.execute(
                        "SELECT id FROM memory_suggestions WHERE status = 'pending' ORDER BY id"
                    )
                ]
            if not pending:
                break
            sid = pending[0]  # still pending after a kill before the commit: the same one again
            landed += kill_at_a_write(zygote, db, ["extract", "accept", str(sid), "--json"], rng)
            with checked_store(db) as store:
                status, memory_id = store.con.execute(
                    "SELECT status, memory_id FROM memory_suggestions WHERE id = ?", (sid,)
                ).fetchall()[0]
                # accepted with its memory, or still pending with none: never half
                assert (status == "pending" and memory_id is None) or (status != "pending" and memory_id), (
                    status,
                    memory_id,
                )
    assert landed >= 4
    count_kills(figures, "extract accept", landed)
