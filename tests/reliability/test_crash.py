"""Promise 1, crash safety: a `memapp` process killed with SIGKILL at any moment leaves chat.db whole.

Each test kills the real CLI (app.cli.main in a forked process, see cli_runner.py) at seeded random
points of progress during an import (a message count reached in chat.db), a memory edit loop (an edit
count), `cleanup --apply` and `reindex` (just before a random one of the writes SQLite makes), then checks, after
every kill: `PRAGMA integrity_check` is ok, the FTS and vector rows pair up with the canonical rows
(ids, not only counts), every thread's message_count/token_count matches its messages, no thread is
half-written, and memory_history replays to exactly the rows. Finally the same command is run to the
end and must reach exactly the expected counts.

The kill points come from `random.Random(SEED + n)`; set MEMAPP_CRASH_SEED to replay a failure's
schedule (a write-count kill is exactly reproducible; a progress-count kill lands within a few
milliseconds of its point).
CI runs a short series (about 40 kills, < 60 s); `MEMAPP_SOAK=1` or `-m soak` runs longer ones with
bigger exports, and the real-model import kill.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from embeddings import FakeEmbedder
from store import Store, maintenance
from store.cleanup import Thresholds, apply_cleanup, find_candidates
from store.importing.pipeline import import_paths
from tests.reliability.generated_exports import ExportSpec, conversation_texts, write_chatgpt, write_generic
from tests.reliability.invariants import (
    apply_edit,
    checked_store,
    memory_state,
    thread_contents,
)
from tests.reliability.processes import SOAK, Runner, Zygote, count_kills, kill_at_a_write, no_embed_config

SEED = int(os.environ.get("MEMAPP_CRASH_SEED", "8008"))
DAY = 86400.0

# serial: SIGKILL loops over child processes, each many seconds of both cores
pytestmark = [pytest.mark.soak, pytest.mark.serial]


def _thread_states(store: Store, source: str, full: ExportSpec, before: ExportSpec) -> list[str]:
    """For each thread of the export, in file order: 'new' (all messages of the export), 'old' (exactly
    as before this import), or 'absent'. Anything else is a half-written thread: an assertion error."""
    got = thread_contents(store, source)
    old = before.by_id()
    wanted = full.by_id()
    stray = set(got) - set(wanted)
    assert not stray, f"threads that are in no export: {sorted(stray)[:5]}"
    states = []
    for ext, texts in full.threads:
        have = got.get(ext)
        if have == texts:
            states.append("new")
        elif have is None and ext not in old:
            states.append("absent")
        elif ext in old and have == old[ext]:
            states.append("old")
        else:
            raise AssertionError(
                f"thread {ext} is half-written: {len(have or [])} messages, "
                f"expected {len(texts)} or {len(old.get(ext, []))}"
            )
    return states


def _assert_in_order(states: list[str]) -> None:
    """Threads are committed in file order, one transaction each: the finished ones are a prefix."""
    first_unfinished = next((i for i, s in enumerate(states) if s != "new"), len(states))
    late = [i for i, s in enumerate(states) if s == "new" and i > first_unfinished]
    assert not late, f"thread {late[0]} finished before thread {first_unfinished}"


def _kill_point(rng: random.Random, stored: int, total: int, kills: int) -> tuple[int, float]:
    """Where to kill the next import of a series on one database: once `memapp import` has stored a
    random share of the rest (so `kills` kills spread over the whole export), plus up to 20 ms, which
    lands the kill anywhere in the thread being written then (parsing, inside its transaction, between)."""
    return min(total, stored + 1 + int(rng.uniform(0.0, 2.0) * total / kills)), rng.uniform(0.0, 0.02)


def _import_series(
    tmp: Path, *, fmt: str, n_threads: int, per_thread: int, kills: int, fake_embedder: bool, seed: int
) -> dict[str, Any]:
    """Import v1 (a quarter of the threads, half their messages), then kill `memapp import` of the full
    export `kills` times, checking after each kill; then import to the end."""
    spec = conversation_texts(seed, n_threads, per_thread)
    before = ExportSpec([(cid, texts[: len(texts) // 2]) for cid, texts in spec.threads[: n_threads // 4]])
    write = write_chatgpt if fmt == "chatgpt" else write_generic
    (tmp / "v1").mkdir()
    v1 = write(tmp / "v1" / "conversations.json", before)
    full = write(tmp / "conversations.json", spec)
    db = tmp / "chat.db"
    source = "chatgpt" if fmt == "chatgpt" else "generic"
    with Store(db, embedder=FakeEmbedder() if fake_embedder else None) as store:
        report = import_paths(store, [v1], embed=fake_embedder)
        assert report.ok and report.messages_added == before.messages
    args = ["--db", str(db), "import", str(full), "--json"]
    if not fake_embedder:
        args[2:2] = ["--config", str(no_embed_config(tmp))]
        args.append("--no-embed")
    landed = 0
    states: list[str] = []
    rng = random.Random(seed)
    stored = before.messages
    with Zygote(tmp) as zygote:
        for _ in range(kills):
            job = zygote.run(args, fake_embedder=fake_embedder)
            target, extra = _kill_point(rng, stored, spec.messages, kills)
            if job.kill_when(db, "SELECT count(*) FROM messages", target, extra=extra):
                landed += 1
            else:
                assert job.poll() == 0 and job.stderr() == "", job.stderr()
            with checked_store(db) as store:
                states = _thread_states(store, source, spec, before)
                stored = store.scalar("SELECT count(*) FROM messages")
            _assert_in_order(states)
        finish = zygote.run(args, fake_embedder=fake_embedder, tag="finish")
        assert finish.wait() == 0, finish.stderr()
    assert finish.stderr() == ""
    report_json = json.loads(finish.stdout())
    assert report_json["messages_added"] == spec.messages - stored  # exactly what the kills left undone
    with checked_store(db) as store:
        assert _thread_states(store, source, spec, before) == ["new"] * n_threads
        assert store.scalar("SELECT count(*) FROM threads") == n_threads
        assert store.scalar("SELECT count(*) FROM messages") == spec.messages
        if fake_embedder:
            assert (
                store.scalar(
                    "SELECT count(*) FROM messages m WHERE NOT EXISTS "
                    "(SELECT 1 FROM message_chunks c WHERE c.message_id = m.id)"
                )
                == 0
            )
    return {"landed": landed, "kills": kills, "states": states, "report": report_json}


def test_import_killed_20_times_then_completes(tmp_path: Path, soak: bool, figures: dict[str, int]) -> None:
    result = _import_series(
        tmp_path,
        fmt="chatgpt",
        n_threads=2400 if soak else 300,
        per_thread=20,
        kills=60 if soak else 20,
        fake_embedder=False,
        seed=SEED,
    )
    assert result["landed"] >= result["kills"] // 2, f"only {result['landed']} kills hit a running import"
    assert result["report"]["errors"] == []
    count_kills(figures, "import", result["landed"])


def test_import_with_vectors_killed_then_completes(
    tmp_path: Path, soak: bool, figures: dict[str, int]
) -> None:
    """The embedding pipeline (batches encoded on a worker thread, written thread by thread) with the
    fake embedder: chunk rows and their vectors are written in the thread's transaction or not at all."""
    result = _import_series(
        tmp_path,
        fmt="generic",
        n_threads=600 if soak else 80,
        per_thread=10,
        kills=20 if soak else 4,
        fake_embedder=True,
        seed=SEED + 1,
    )
    assert result["landed"] >= 1
    count_kills(figures, "import with vectors", result["landed"])


@pytest.mark.model
def test_import_with_the_real_model_killed_then_completes(
    tmp_path: Path, soak: bool, figures: dict[str, int]
) -> None:
    if not soak:
        pytest.skip("soak only (MEMAPP_SOAK=1 or -m soak): each kill waits for the model to load, ~15 s")
    spec = conversation_texts(SEED + 2, 120, 12)
    export = write_generic(tmp_path / "conversations.json", spec)
    db = tmp_path / "chat.db"
    args = ["--db", str(db), "import", str(export), "--json"]
    rng = random.Random(SEED + 2)
    landed = 0
    for n in range(3):
        # A fresh process each time (the model loads in it, as for a user), killed once a seeded share of
        # the messages is stored: a point of progress, not a moment.
        runner = Runner(args, tmp_path, tag=f"run-{n}")
        runner.go()
        with Store(db, embedder=None) as store:
            stored = store.scalar("SELECT count(*) FROM messages") if store.schema_version() else 0
        target = min(spec.messages, stored + 1 + int(rng.uniform(0.1, 0.5) * (spec.messages - stored)))
        landed += runner.kill_when(db, "SELECT count(*) FROM messages", target, timeout=600)
        checked_store(db).close()
    finish = Runner(args, tmp_path, tag="finish")
    finish.go()
    assert finish.wait(timeout=900) == 0, finish.stderr()
    with checked_store(db) as store:
        assert store.scalar("SELECT count(*) FROM messages") == spec.messages
        assert store.stats()["embedded_chunks"] >= spec.messages
    count_kills(figures, "import with the real model", landed)


# -- memory edits -------------------------------------------------------------------------------------


# The events the edit loop's own commands record. The truth classifier (store/truth) may add others
# (supersede, conflict) when an edited text reads like an update of another memory: not counted here.
EDIT_EVENTS = "SELECT count(*) FROM memory_history WHERE event IN ('edit', 'importance', 'pin', 'unpin', 'delete', 'restore')"


def test_memory_edit_loop_killed(tmp_path: Path, soak: bool, figures: dict[str, int]) -> None:
    db = tmp_path / "chat.db"
    with Store(db, embedder=FakeEmbedder()) as store, store.con:
        for i in range(30):
            store.add_memory(
                f"memory {i}: the {['garden', 'bread', 'sqlite', 'rust', 'tea'][i % 5]} note {i}",
                ["preference", "project", "skill", "fact"][i % 4],
                importance=1 + i % 10,
                force=True,
            )
    with Store(db, embedder=None) as store:
        model = {m.id: memory_state(store, m.id) for m in store.list_memories(limit=100)}
        events_expected = int(store.scalar(EDIT_EVENTS))
    journal = tmp_path / "journal.jsonl"
    rng = random.Random(SEED + 3)
    kills = 20 if soak else 5
    acknowledged = 0
    defaults = tmp_path / "defaults.toml"  # an empty config: the defaults (a --config must exist)
    defaults.write_text("")
    zygote = Zygote(tmp_path)
    for n in range(kills):
        # A new seed per run: each process makes its own edits (the runner reads the state from chat.db).
        job = zygote.run(
            ["@edit-loop", str(db), str(defaults), str(journal), str(SEED + 100 + n)],
            fake_embedder=True,
        )
        # Killed at a point of progress, not at a wall-clock moment (on a loaded machine the child may
        # barely have started by then): once 3-8 more edits are in memory_history (so at least two are
        # acknowledged per run), plus up to 30 ms, which lands the kill anywhere in the next edit.
        target = events_expected + rng.randint(3, 8)
        edits = EDIT_EVENTS
        assert job.kill_when(db, edits, target, extra=rng.uniform(0.0, 0.03)), job.stderr()
        lines = [json.loads(x) for x in journal.read_text().splitlines()]
        journal.write_text("")
        begun = [x["begin"] for x in lines if "begin" in x]
        done = [x["done"] for x in lines if "done" in x]
        assert begun[: len(done)] == done and len(begun) - len(done) <= 1
        with checked_store(db) as store:
            for rec in begun:
                old = model[rec["id"]]
                new = apply_edit(old, rec["op"], rec["value"])  # type: ignore[arg-type]
                actual = memory_state(store, rec["id"])
                if rec in done or (actual == new and actual != old):
                    model[rec["id"]] = new
                    events_expected += new != old
            for mid, state in model.items():
                assert memory_state(store, mid) == state, f"memory {mid}: an acknowledged edit was lost"
            changes = store.scalar(EDIT_EVENTS)
            assert changes == events_expected
        acknowledged += len(done)
    zygote.close()
    assert acknowledged > kills  # the loop really edited between the kills
    count_kills(figures, "memory edits", kills)


# -- cleanup --apply ----------------------------------------------------------------------------------


def _cleanup_template(path: Path, n_candidates: int) -> Path:
    """Old, unimportant, unused memories (candidates), plus pinned and important ones that must stay."""
    old = time.time() - 400 * DAY
    with Store(path, embedder=FakeEmbedder()) as store, store.con:
        for i in range(n_candidates):
            store.add_memory(
                f"faded note {i} about {i % 97} things",
                "fact",
                importance=1 + i % 2,
                created_at=old + i,
                force=True,
            )
        for i in range(n_candidates // 10):
            store.add_memory(
                f"pinned note {i} never to be cleaned",
                "preference",
                importance=1,
                pinned=True,
                created_at=old,
                force=True,
            )
            store.add_memory(f"important note {i} kept", "project", importance=8, created_at=old, force=True)
    return path


# At soak size this outgrew the default 300 s: 311 s alone at load 2 (the 3,600-memory template takes 45 s,
# each add filing ~20 truth conflicts among the look-alike notes; then 12 rounds of a probe, a killed and a
# finishing `cleanup --apply` of 3,000 memories at ~7 s each), and it timed out in `make soak` at load 2-4.
@pytest.mark.timeout(1800 if SOAK else 300)
def test_cleanup_apply_killed_is_all_or_nothing(tmp_path: Path, soak: bool, figures: dict[str, int]) -> None:
    template = _cleanup_template(tmp_path / "template.db", 3000 if soak else 800)
    reference = tmp_path / "reference.db"
    shutil.copy(template, reference)
    with Store(reference, embedder=FakeEmbedder()) as store:
        expected = {c.memory.id for c in find_candidates(store, Thresholds())}
        assert {c.memory.id for c in apply_cleanup(store, Thresholds())} == expected
        pinned = {m.id for m in store.list_memories(pinned=True)}
    rng = random.Random(SEED + 4)
    landed = 0
    zygote = Zygote(tmp_path)
    for n in range(12 if soak else 4):
        db = tmp_path / f"chat-{n}.db"
        shutil.copy(template, db)
        landed += kill_at_a_write(zygote, db, ["cleanup", "--apply", "--json"], rng)
        args = ["--db", str(db), "cleanup", "--apply", "--json"]
        with checked_store(db) as store:
            trashed = {m.id for m in store.list_memories(trash=True, limit=10**6)}
            assert trashed in (set(), expected), f"cleanup half-applied: {len(trashed)} of {len(expected)}"
            assert pinned <= {m.id for m in store.list_memories(pinned=True)}
        finish = zygote.run(args, fake_embedder=True)
        assert finish.wait() == 0, finish.stderr()
        applied = {c["id"] for c in json.loads(finish.stdout())["candidates"]}
        assert applied == expected - trashed
        with checked_store(db) as store:
            assert {m.id for m in store.list_memories(trash=True, limit=10**6)} == expected
            assert store.scalar("SELECT count(*) FROM memory_history WHERE event = 'cleanup'") == len(
                expected
            )
    zygote.close()
    assert landed == (12 if soak else 4)
    count_kills(figures, "cleanup --apply", landed)


# -- reindex -----------------------------------------------------------------------------------------


def test_reindex_killed_then_completes(tmp_path: Path, soak: bool, figures: dict[str, int]) -> None:
    db = tmp_path / "chat.db"
    spec = conversation_texts(SEED + 5, 600 if soak else 60, 12)
    export = write_generic(tmp_path / "threads.json", spec)
    with Store(db, embedder=FakeEmbedder()) as store:
        assert import_paths(store, [export]).ok
        with store.con:
            for i in range(200):
                store.add_memory(f"memory {i} for the reindex", "fact", force=True)
        chunks = store.scalar("SELECT count(*) FROM message_chunks")
        maintenance.reindex(store)
        assert store.scalar("SELECT count(*) FROM message_chunks") == chunks
    rng = random.Random(SEED + 6)
    runs = [["reindex", "--keyword-only", "--json"], ["reindex", "--json"]] * (6 if soak else 2)
    landed = 0
    with Zygote(tmp_path) as zygote:
        for command in runs:
            landed += kill_at_a_write(zygote, db, command, rng)
            checked_store(db).close()
        finish = zygote.run(["--db", str(db), "reindex", "--json"], fake_embedder=True)
        assert finish.wait() == 0, finish.stderr()
    assert landed == len(runs)
    count_kills(figures, "reindex", landed)
    with checked_store(db) as store:
        assert store.scalar("SELECT count(*) FROM message_chunks") == chunks
        assert store.scalar("SELECT count(*) FROM vec_memories") == 200
        assert store.scalar("SELECT count(*) FROM fts_messages") == spec.messages
        assert thread_contents(store, "generic") == spec.by_id()
