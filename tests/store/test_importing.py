"""The import pipeline (store/importing/pipeline.py) against a real chat.db: counts, idempotency, incremental
imports, batching that keeps every vector on its own message, and problems reported instead of raised."""

from __future__ import annotations

import json
import sqlite3
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from embeddings import FakeEmbedder
from store import Store, ThreadIn
from store.importing import ImportProgress, ImportTotals, count_export, import_paths, load_demo
from store.maintenance import embed_missing
from store.records import MessageIn
from store.vectors.floats import decode

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "import"
DEMO = Path(__file__).resolve().parents[2] / "data" / "demo.json"


# --- helpers -----------------------------------------------------------------------------------------


def thread(tid: str, n: int, *, title: str | None = None, words: int = 6) -> dict[str, Any]:
    """A generic-format thread with n messages whose texts differ (so their vectors differ)."""
    return {
        "id": tid,
        "title": title or f"Thread {tid}",
        "created_at": "2025-01-01T10:00:00Z",
        "messages": [
            {
                "id": f"{tid}-m{i}",
                "role": "user" if i % 2 == 0 else "assistant",
                "content": " ".join(f"{tid}w{i}x{k}" for k in range(words)),
                "created_at": 1735725600 + 60 * i,
            }
            for i in range(n)
        ],
    }


def write_jsonl(path: Path, threads: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(t) + "\n" for t in threads), encoding="utf-8")
    return path


def snapshot(store: Store) -> dict[str, Any]:
    """Everything an import can change, in a comparable form."""
    con = store.con
    return {
        "stats": store.stats(),
        "threads": list(
            con.execute(
                "SELECT id, source, external_id, title, message_count, token_count, updated_at "
                "FROM threads ORDER BY id"
            )
        ),
        "messages": list(
            con.execute("SELECT id, thread_id, seq, role, content, external_id FROM messages ORDER BY id")
        ),
        "memories": list(
            con.execute(
                "SELECT id, category, content, importance, pinned, origin, updated_at "
                "FROM long_term_memories ORDER BY id"
            )
        ),
        "chunks": list(
            con.execute(
                "SELECT id, message_id, chunk_index, start_char, end_char FROM message_chunks ORDER BY id"
            )
        ),
        "history": store.scalar("SELECT count(*) FROM memory_history"),
    }


def assert_vectors_match_their_messages(store: Store, embedder: FakeEmbedder) -> int:
    """Every message with text has chunk vectors, and each is the vector of *its own* chunk text
    (batching several threads into one model call must never shift a vector onto another message)."""
    checked = 0
    for mid, content in store.con.execute(
        "SELECT id, content FROM messages WHERE trim(content) != ''"
    ).fetchall():
        rows = store.con.execute(
            "SELECT c.start_char, c.end_char, v.embedding FROM message_chunks c JOIN vec_chunks v "
            "ON v.chunk_id = c.id WHERE c.message_id = ? ORDER BY c.chunk_index",
            (mid,),
        ).fetchall()
        assert [(a, b) for a, b, _ in rows] == embedder.chunk(content), f"message {mid} chunks"  # type: ignore[arg-type]
        for a, b, blob in rows:
            want = embedder.embed_documents([content[a:b]])[0]  # type: ignore[index]
            assert np.array_equal(decode(blob), want.astype(np.float16).astype(np.float32)), (  # type: ignore[arg-type]
                f"message {mid} vector"
            )
            checked += 1
    assert store.check_indexes() == []
    return checked


def build_llm_db(tmp_path: Path) -> Path:
    db = tmp_path / "logs.db"
    con = sqlite3.connect(db)
    con.executescript((FIXTURES / "llm" / "logs.sql").read_text(encoding="utf-8"))
    con.close()
    return db


# --- writing -----------------------------------------------------------------------------------------


def test_batched_import_keeps_every_vector_on_its_message(
    store: Store, fake_embedder: FakeEmbedder, tmp_path: Path
) -> None:
    threads = [thread("a", 3), thread("b", 5, words=300), thread("c", 1), thread("d", 4)]  # b: multi-chunk
    export = write_jsonl(tmp_path / "x.jsonl", threads)
    report = import_paths(
        store, [export], batch_chunks=4
    )  # several batches, encoded while others are written
    assert report.to_json() == {
        "threads_added": 4,
        "threads_updated": 0,
        "messages_added": 13,
        "memories_added": 0,
        "suggestions_added": 0,
        "files_read": 0,
        "files_unchanged": 0,
        "summaries_background": 0,
        "skipped": 0,
        "errors": [],
        "notes": [],
    }
    assert assert_vectors_match_their_messages(store, fake_embedder) > 13
    t = store.find_thread("jsonl", "b")
    assert t is not None
    msgs = store.get_messages(t.id)
    assert [m.external_id for m in msgs] == [f"b-m{i}" for i in range(5)]
    assert [m.seq for m in msgs] == list(range(5))
    assert t.message_count == 5 and t.token_count == sum(m.token_count for m in msgs) > 0


def test_many_small_threads_share_one_model_call(
    store: Store, fake_embedder: FakeEmbedder, tmp_path: Path
) -> None:
    export = write_jsonl(tmp_path / "x.jsonl", [thread(f"t{i}", 3) for i in range(40)])
    import_paths(store, [export])
    assert fake_embedder.calls == 1  # 120 chunks in one encode call, not 40 (one per thread)
    assert store.stats()["embedded_chunks"] == 120


def test_no_embed_writes_no_vectors_and_embed_fills_them_later(
    store: Store, fake_embedder: FakeEmbedder, tmp_path: Path
) -> None:
    export = write_jsonl(tmp_path / "x.jsonl", [thread("a", 4), thread("b", 2)])
    report = import_paths(store, [export], embed=False)
    assert (report.messages_added, fake_embedder.calls, store.stats()["embedded_chunks"]) == (6, 0, 0)
    assert embed_missing(store)["messages"] == 6
    assert_vectors_match_their_messages(store, fake_embedder)


def test_no_embed_does_not_run_the_model_for_memories_either(
    store: Store, fake_embedder: FakeEmbedder
) -> None:
    report = import_paths(store, [DEMO], embed=False)
    assert report.memories_added > 0 and fake_embedder.calls == 0
    assert store.stats()["embedded_memories"] == 0
    assert embed_missing(store)["memories"] == report.memories_added


# --- idempotency and incremental imports ------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "chatgpt/conversations.json",
        "chatgpt/split",
        "claude",
        "generic/bundle.json",
        "generic/threads.jsonl",
        "generic/finetune.jsonl",
        "openwebui/chat-export-1720000000000.json",
        "llm",
    ],
)
def test_importing_the_same_export_twice_changes_nothing(store: Store, tmp_path: Path, name: str) -> None:
    path = build_llm_db(tmp_path) if name == "llm" else FIXTURES / name
    first = import_paths(store, [path])
    assert first.threads_added > 0 and first.messages_added > 0
    assert store.stats()["threads"] == first.threads_added
    assert store.stats()["messages"] == first.messages_added
    before = snapshot(store)
    second = import_paths(store, [path])
    assert (second.threads_added, second.threads_updated, second.messages_added, second.memories_added) == (
        0,
        0,
        0,
        0,
    )
    assert second.errors == first.errors  # the same malformed parts, reported again, nothing else
    assert snapshot(store) == before


def test_a_newer_export_adds_only_new_threads_and_messages_and_updates_titles(
    store: Store, fake_embedder: FakeEmbedder, tmp_path: Path
) -> None:
    v1 = write_jsonl(tmp_path / "v1.jsonl", [thread("a", 2), thread("b", 2)])
    v2 = write_jsonl(tmp_path / "v2.jsonl", [thread("a", 4, title="Renamed"), thread("b", 2), thread("c", 3)])
    import_paths(store, [v1])
    a_before = store.get_messages(store.find_thread("jsonl", "a").id)  # type: ignore[union-attr]
    report = import_paths(store, [v2])
    assert report.to_json() == {
        "threads_added": 1,
        "threads_updated": 1,
        "messages_added": 5,
        "memories_added": 0,
        "suggestions_added": 0,
        "files_read": 0,
        "files_unchanged": 0,
        "summaries_background": 0,
        "skipped": 0,
        "errors": [],
        "notes": [],
    }
    assert report.threads_unchanged == 1
    a = store.find_thread("jsonl", "a")
    assert a is not None and (a.title, a.message_count) == ("Renamed", 4)
    a_after = store.get_messages(a.id)
    assert a_after[:2] == a_before  # the old rows are untouched, not rewritten
    assert [m.external_id for m in a_after] == ["a-m0", "a-m1", "a-m2", "a-m3"]
    assert store.stats()["threads"] == 3 and store.stats()["messages"] == 9
    assert_vectors_match_their_messages(store, fake_embedder)


def test_old_and_new_export_in_one_run(store: Store, fake_embedder: FakeEmbedder, tmp_path: Path) -> None:
    """The same thread twice before it was written (one batch, or the batch being encoded): read anew."""
    v1 = write_jsonl(tmp_path / "v1.jsonl", [thread("a", 2), thread("b", 2)])
    v2 = write_jsonl(tmp_path / "v2.jsonl", [thread("a", 5, title="Longer"), thread("b", 3)])
    report = import_paths(store, [v1, v2], batch_chunks=1000)
    assert (report.threads_added, report.threads_updated, report.messages_added) == (2, 2, 8)
    assert [m.external_id for m in store.get_messages(store.find_thread("jsonl", "a").id)] == [  # type: ignore[union-attr]
        f"a-m{i}" for i in range(5)
    ]
    assert_vectors_match_their_messages(store, fake_embedder)


def test_chunks_prepared_for_an_older_read_are_not_misaligned(
    store: Store, fake_embedder: FakeEmbedder
) -> None:
    """write_thread gets chunks prepared before another writer added part of the thread: it must not
    attach message 1's vector to message 3."""

    def t(n: int) -> ThreadIn:
        return ThreadIn(
            "generic",
            "t",
            "T",
            [MessageIn("user", f"text number {i} about topic{i}", f"m{i}") for i in range(n)],
        )

    stale = store.prepare_chunks([t(4).messages[i] for i in store.stored_thread(t(4)).new_positions(t(4))])
    store.write_thread(t(2))
    res = store.write_thread(t(4), prepared=stale)
    assert res.messages_added == 2
    assert_vectors_match_their_messages(store, fake_embedder)


# --- demo data ---------------------------------------------------------------------------------------


def test_load_demo_loads_threads_and_memories_with_pins_once(store: Store) -> None:
    data = json.loads(DEMO.read_text(encoding="utf-8"))
    report = load_demo(store)
    assert report.ok
    assert report.threads_added == len(data["threads"]) >= 5
    assert report.messages_added == sum(len(t["messages"]) for t in data["threads"])
    assert report.memories_added == len(data["memories"])
    pinned = {m["content"] for m in data["memories"] if m.get("pinned")}
    assert pinned and {m.content for m in store.list_memories(pinned=True)} == pinned
    first = data["threads"][0]
    t = store.find_thread(data.get("source", "generic"), first["id"])
    assert t is not None and t.title == first["title"]
    assert [m.external_id for m in store.get_messages(t.id)] == [m["id"] for m in first["messages"]]
    again = load_demo(store)
    assert (again.threads_added, again.messages_added, again.memories_added, again.skipped) == (0, 0, 0, 0)
    # Every demo thread arrives summarised, with topics, and its memory suggestions found.
    from store.extract.suggestions import count_pending

    threads = store.list_threads(limit=100)
    assert all(store.get_summary(t.id) is not None and store.get_topics(t.id) for t in threads)
    assert count_pending(store) > 0


def test_threads_that_grew_past_the_trigger_are_summarised_after_import(store: Store, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "t.jsonl", [thread("long", 35, words=12), thread("short", 4)])
    report = import_paths(store, [path])
    assert report.summaries_updated == 1
    long_t = store.find_thread("jsonl", "long")
    short_t = store.find_thread("jsonl", "short")
    assert long_t is not None and short_t is not None
    summary = store.get_summary(long_t.id)
    assert summary is not None and summary.last_message_seq == 34
    assert store.get_summary(short_t.id) is None
    assert store.scalar("SELECT count(*) FROM compression_history WHERE thread_id = ?", (long_t.id,)) == 1


def test_no_embed_import_summarises_without_any_model(
    store: Store, fake_embedder: FakeEmbedder, tmp_path: Path
) -> None:
    path = write_jsonl(tmp_path / "t.jsonl", [thread("long", 35, words=12)])
    report = import_paths(store, [path], embed=False)
    assert report.summaries_updated == 1
    assert fake_embedder.calls == 0  # --no-embed: the model is never asked, not even for the summary
    long_t = store.find_thread("jsonl", "long")
    assert long_t is not None
    details = store.scalar("SELECT details FROM compression_history WHERE thread_id = ?", (long_t.id,))
    assert '"tfidf"' in str(details)


def test_no_summarize_leaves_summaries_for_later(store: Store, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "t.jsonl", [thread("long", 35)])
    assert import_paths(store, [path], summarize=False).summaries_updated == 0
    assert store.stats()["summaries"] == 0


def test_a_rerun_brings_summaries_left_behind_up_to_date(store: Store, tmp_path: Path) -> None:
    """A kill between the messages' commit and the summaries (or --no-summarize) leaves exactly this state;
    the re-run writes no message, and must still summarise (issue 20, D5: 22 of 30 killed imports never
    got their summaries)."""
    path = write_jsonl(tmp_path / "t.jsonl", [thread("long", 35, words=12), thread("short", 4)])
    import_paths(store, [path], summarize=False)
    again = import_paths(store, [path])
    assert again.messages_added == 0 and again.summaries_updated == 1
    long_t = store.find_thread("jsonl", "long")
    assert long_t is not None
    summary = store.get_summary(long_t.id)
    assert summary is not None and summary.last_message_seq == 34
    assert import_paths(store, [path]).summaries_updated == 0  # and nothing more to do after that


# --- problems ----------------------------------------------------------------------------------------


def test_malformed_inputs_are_reported_and_the_rest_imports(store: Store, tmp_path: Path) -> None:
    good_and_bad = write_jsonl(tmp_path / "mixed.jsonl", [thread("ok", 2)])
    with good_and_bad.open("a", encoding="utf-8") as fp:
        fp.write('{"id": "bad-role", "messages": [{"id": "x", "role": "wizard", "content": "hi"}]}\n')
        fp.write('{"id": "wrong-type", "messages": "not a list"}\n')
        fp.write('{"id": "trunc", "messages": [{"id": "y", "ro\n')
    truncated = tmp_path / "conversations.json"
    truncated.write_text((FIXTURES / "chatgpt" / "conversations.json").read_text(encoding="utf-8")[:3000])
    junk = tmp_path / "junk.bin"
    junk.write_bytes(bytes(range(256)) * 4)
    empty_zip = tmp_path / "export.zip"
    with zipfile.ZipFile(empty_zip, "w") as z:
        z.writestr("chat.html", "<html></html>")
    report = import_paths(store, [good_and_bad, truncated, junk, empty_zip])
    assert report.threads_added == 1 + store.scalar("SELECT count(*) FROM threads WHERE source = 'chatgpt'")
    assert store.find_thread("jsonl", "ok") is not None
    assert store.find_thread("jsonl", "bad-role") is None and store.find_thread("jsonl", "wrong-type") is None
    by_file: dict[str, list[Any]] = {}
    for e in report.errors:
        by_file.setdefault(Path(e.file.split("!")[0]).name, []).append(e)
    assert {e.conversation for e in by_file["mixed.jsonl"]} == {"bad-role", "wrong-type", "line 4"}
    assert "wizard" in next(e.error for e in by_file["mixed.jsonl"] if e.conversation == "bad-role")
    assert by_file["conversations.json"] and by_file["junk.bin"] and by_file["export.zip"]
    assert "memapp reads" in by_file["junk.bin"][0].error  # names the formats we read
    assert report.skipped == len(report.errors) >= 6 and not report.ok
    assert store.check_indexes() == [] and store.integrity_check() == "ok"


def test_near_duplicate_of_a_pinned_memory_is_skipped_not_merged(store: Store, tmp_path: Path) -> None:
    kept = store.add_memory("I prefer uv over pip for Python packaging", "preference", pinned=True).memory
    export = tmp_path / "mem.json"
    export.write_text(
        json.dumps(
            {
                "threads": [],
                "memories": [
                    {"category": "preference", "content": "I prefer uv over pip for Python packaging!"},
                    {"category": "fact", "content": "Lives in Porto"},
                ],
            }
        )
    )
    report = import_paths(store, [export])
    assert report.memories_added == 1 and report.skipped == 1
    err = report.errors[0]
    assert err.file == str(export) and "near-duplicate" in err.error and f"memory {kept.id}" in err.error
    assert store.get_memory(kept.id).content == kept.content  # the pinned memory is untouched


class FailsOnSecondCall(FakeEmbedder):
    def embed_documents(self, texts: Any) -> np.ndarray:
        if self.calls >= 1:
            self.calls += 1
            raise RuntimeError("out of memory")
        return super().embed_documents(texts)


def test_model_failure_mid_import_writes_the_rest_without_vectors(db_path: Path, tmp_path: Path) -> None:
    export = write_jsonl(tmp_path / "x.jsonl", [thread(f"t{i}", 2) for i in range(6)])
    with Store(db_path, embedder=FailsOnSecondCall()) as s:
        report = import_paths(s, [export], batch_chunks=4)
        assert report.ok and report.messages_added == 12
        assert report.vector_problem and "out of memory" in report.vector_problem
        assert 0 < s.stats()["embedded_chunks"] < 12
    with Store(db_path, embedder=FakeEmbedder()) as s:
        embed_missing(s)
        assert_vectors_match_their_messages(s, FakeEmbedder())


def test_progress_is_reported_after_every_thread_with_totals(store: Store, tmp_path: Path) -> None:
    export = write_jsonl(tmp_path / "x.jsonl", [thread(f"t{i}", i + 1) for i in range(5)])
    totals = count_export([export])
    assert totals == ImportTotals(threads=5, messages=15)
    seen: list[ImportProgress] = []
    import_paths(store, [export], progress=seen.append, totals=totals, batch_chunks=3)
    seen = [p for p in seen if p.phase == "writing"]  # (the phases before the first write: the next test)
    assert [p.threads_done for p in seen] == [1, 2, 3, 4, 5]
    assert [p.messages_done for p in seen] == [1, 3, 6, 10, 15]
    assert all(p.threads_total == 5 and p.messages_total == 15 for p in seen)
    assert seen[-1].messages_added == 15 and seen[-1].elapsed >= seen[0].elapsed


def test_an_interrupt_between_threads_leaves_whole_threads_and_a_rerun_completes(
    store: Store, fake_embedder: FakeEmbedder, tmp_path: Path
) -> None:
    export = write_jsonl(tmp_path / "x.jsonl", [thread(f"t{i}", 3) for i in range(10)])

    def stop_after_four(p: ImportProgress) -> None:
        if p.threads_done == 4:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        import_paths(store, [export], progress=stop_after_four, batch_chunks=5)
    assert store.stats()["threads"] == 4 and store.stats()["messages"] == 12
    report = import_paths(store, [export])
    assert (report.threads_added, report.messages_added) == (6, 18)
    assert_vectors_match_their_messages(store, fake_embedder)


# --- the real model ----------------------------------------------------------------------------------


@pytest.mark.model
def test_demo_import_with_the_real_model_finds_messages_by_meaning(db_path: Path, real_embedder: Any) -> None:
    from store.vectors import rows as vectors

    with Store(db_path, embedder=real_embedder) as s:
        report = load_demo(s)
        assert report.ok and report.vector_problem is None
        assert s.check_indexes() == []
        q = real_embedder.embed_query("how should I keep copies of my family pictures safe offsite")
        (_, message_id, _), *_ = vectors.knn_chunks(s.con, q, 3)
        assert "backup" in s.get_thread(s.get_message(message_id).thread_id).title.lower()
        # vectors computed in big mixed batches equal the vector of that chunk alone
        for mid, content in s.con.execute("SELECT id, content FROM messages ORDER BY id LIMIT 5").fetchall():
            a, b, blob = s.con.execute(  # type: ignore[misc]
                "SELECT c.start_char, c.end_char, v.embedding FROM message_chunks c JOIN vec_chunks v "
                "ON v.chunk_id = c.id WHERE c.message_id = ? AND c.chunk_index = 0",
                (mid,),
            ).fetchone()
            alone = real_embedder.embed_documents([content[a:b]])[0]  # type: ignore[index]
            assert float(np.dot(decode(blob), alone)) > 0.999  # type: ignore[arg-type]


def test_ctrl_c_inside_a_thread_transaction_leaves_nothing_of_that_thread(
    store: Store, tmp_path: Path
) -> None:
    """A Ctrl-C can land after a thread's BEGIN and before the block that rolls it back: the import's
    clean-up undoes that transaction, so nothing half-written is committed with what follows."""
    export = write_jsonl(tmp_path / "x.jsonl", [thread(f"t{i}", 2) for i in range(6)])

    def interrupt(p: ImportProgress) -> None:
        if p.threads_done == 3:
            store.con.execute("BEGIN")  # the interrupted thread's transaction, already holding a write
            store.con.execute("INSERT INTO settings(key, value) VALUES ('half-written', '1')")
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        import_paths(store, [export], embed=False, progress=interrupt)
    assert not store.con.in_transaction
    assert store.scalar("SELECT count(*) FROM settings WHERE key = 'half-written'") == 0
    assert store.stats()["threads"] == 3
    report = import_paths(store, [export], embed=False)
    assert report.threads_added == 3 and store.stats()["threads"] == 6 and store.check_indexes() == []


def test_progress_says_what_happens_before_the_first_thread_is_written(
    store: Store, fake_embedder: FakeEmbedder, tmp_path: Path
) -> None:
    """28.16: a progress bar sat at 0 % while the export was read and the model loaded and embedded the
    first batch. Snapshots now name those phases before the first thread is written, and counting the
    export reports its numbers as they grow."""
    export = write_jsonl(tmp_path / "x.jsonl", [thread(f"t{i}", 3) for i in range(5)])
    seen: list[ImportProgress] = []
    counted: list[ImportTotals] = []
    totals = count_export([export], progress=counted.append)
    import_paths(store, [export], progress=seen.append, totals=totals, summarize=False)
    first_write = next(i for i, p in enumerate(seen) if p.phase == "writing")
    before = seen[:first_write]
    assert before and before[0].phase == "reading" and before[0].threads_read == 1
    assert all(
        p.threads_done == 0 and p.phase in ("reading", "loading the model", "embedding") for p in before
    )
    assert seen[-1].phase == "writing" and seen[-1].threads_done == 5
    assert totals == ImportTotals(5, 15)
