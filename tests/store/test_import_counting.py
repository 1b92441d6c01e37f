"""How an import writes threads fast without giving anything up (issue 7): token counts made in a helper
process are exact, the new messages of a thread go in with one statement per table, and a re-import
of threads that are stored whole takes no write lock."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import apsw
import pytest

from embeddings.token_worker import TokenCountProcess
from store import Store, ThreadIn
from store import text as text_mod
from store.importing import run as import_run
from store.importing.pipeline import import_paths
from store.records import MessageIn
from store.text import index_text

TEXTS = ["plain words", "我们决定用向量数据库", "emoji 🎉 and café", "<|endoftext|> as text", "x" * 5000]


def export(path: Path, n_threads: int, n_messages: int, *, title: str = "Thread") -> Path:
    """Generic JSONL threads; message texts mix scripts, so a wrong count shows."""
    rows = []
    for t in range(n_threads):
        rows.append(
            {
                "id": f"t{t}",
                "title": f"{title} {t}",
                "messages": [
                    {
                        "id": f"t{t}-m{i}",
                        "role": "user" if i % 2 == 0 else "assistant",
                        "content": f"{TEXTS[(t + i) % len(TEXTS)]} {t} {i}",
                    }
                    for i in range(n_messages)
                ],
            }
        )
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def assert_counts_exact(store: Store) -> int:
    """Every message's stored count is what the counter gives; thread totals add up; indexes in step."""
    rows = store.con.execute("SELECT content, token_count FROM messages").fetchall()
    assert [n for _, n in rows] == [store.tokens.count(c) for c, _ in rows]  # type: ignore[arg-type]
    bad = store.scalar(
        "SELECT count(*) FROM threads t WHERE token_count != "
        "(SELECT coalesce(sum(token_count), 0) FROM messages WHERE thread_id = t.id) "
        "OR message_count != (SELECT count(*) FROM messages WHERE thread_id = t.id)"
    )
    assert bad == 0
    assert store.check_indexes() == []
    return len(rows)


@pytest.fixture
def plain_store(db_path: Path) -> Any:
    s = Store(db_path, embedder=None)
    yield s
    s.close()


def test_a_multi_batch_import_counts_in_the_helper_exactly(
    plain_store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(import_run, "BATCH_THREADS", 4)
    used: list[int] = []
    helpers: list[TokenCountProcess] = []
    real_counts, real_init = TokenCountProcess.counts, TokenCountProcess.__init__

    def counts(self: TokenCountProcess, future: Any) -> list[int] | None:
        got = real_counts(self, future)
        used.append(0 if got is None else len(got))
        return got

    def init(self: TokenCountProcess, *args: Any) -> None:
        real_init(self, *args)
        helpers.append(self)

    monkeypatch.setattr(TokenCountProcess, "counts", counts)
    monkeypatch.setattr(TokenCountProcess, "__init__", init)
    report = import_paths(plain_store, [export(tmp_path / "x.jsonl", 30, 7)], embed=False)
    assert (report.threads_added, report.messages_added, report.errors) == (30, 210, [])
    assert len(helpers) == 1 and sum(used) == 210  # every count came from the helper
    assert helpers[0]._proc is not None and helpers[0]._proc.poll() is not None  # and it has ended
    assert assert_counts_exact(plain_store) == 210
    seqs = plain_store.con.execute("SELECT thread_id, group_concat(seq) FROM messages GROUP BY thread_id")
    assert all(s == ",".join(map(str, range(7))) for _, s in seqs)


def test_without_a_helper_the_counts_are_the_same(
    plain_store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(import_run, "BATCH_THREADS", 4)
    monkeypatch.setattr("sys.executable", "/nonexistent/python")  # the helper cannot start
    report = import_paths(plain_store, [export(tmp_path / "x.jsonl", 30, 7)], embed=False)
    assert (report.messages_added, report.errors) == (210, [])
    assert assert_counts_exact(plain_store) == 210


def test_a_small_import_starts_no_helper(
    plain_store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[object] = []
    monkeypatch.setattr(import_run, "TokenCountProcess", lambda *a: started.append(a))
    import_paths(plain_store, [export(tmp_path / "x.jsonl", 5, 3)], embed=False)
    assert started == [] and assert_counts_exact(plain_store) == 15


def test_an_import_with_the_model_starts_no_helper(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Beside the model, counting is a rounding error: no second process for it."""
    monkeypatch.setattr(import_run, "BATCH_THREADS", 4)
    started: list[object] = []
    monkeypatch.setattr(import_run, "TokenCountProcess", lambda *a: started.append(a))
    report = import_paths(store, [export(tmp_path / "x.jsonl", 12, 3)])
    assert started == [] and report.messages_added == 36
    assert assert_counts_exact(store) == 36


def test_a_grown_thread_gets_its_new_messages_counted_and_appended(
    plain_store: Store, tmp_path: Path
) -> None:
    import_paths(plain_store, [export(tmp_path / "a.jsonl", 3, 4)], embed=False)
    report = import_paths(plain_store, [export(tmp_path / "b.jsonl", 4, 9, title="Renamed")], embed=False)
    assert (report.threads_added, report.threads_updated, report.messages_added) == (1, 3, 3 * 5 + 9)
    assert assert_counts_exact(plain_store) == 4 * 9
    rows = plain_store.con.execute(
        "SELECT m.external_id, m.seq FROM messages m JOIN threads t ON t.id = m.thread_id "
        "WHERE t.external_id = 't1' ORDER BY m.seq"
    ).fetchall()
    assert rows == [(f"t1-m{i}", i) for i in range(9)]
    ids = [r[0] for r in plain_store.con.execute("SELECT id FROM messages ORDER BY id")]
    assert ids == list(range(1, len(ids) + 1))  # the ids SQLite itself would have given


def test_write_thread_keeps_counts_given_ahead_and_counts_the_rest(plain_store: Store) -> None:
    msgs = [MessageIn("user", "hello world", "a"), MessageIn("assistant", "我们决定用向量数据库", "b")]
    res = plain_store.write_thread(ThreadIn("t", "1", "T", msgs), token_counts=[2, None])
    assert res.messages_added == 2
    assert assert_counts_exact(plain_store) == 2
    with pytest.raises(ValueError):
        plain_store.write_thread(ThreadIn("t", "2", "T", msgs), token_counts=[1])


def test_reimporting_whole_threads_takes_no_write_lock(
    plain_store: Store, db_path: Path, tmp_path: Path
) -> None:
    path = export(tmp_path / "x.jsonl", 12, 3)
    import_paths(plain_store, [path], embed=False)
    holder = apsw.Connection(str(db_path))
    holder.execute("BEGIN IMMEDIATE")  # another process is writing: it holds the write lock throughout
    plain_store.con.set_busy_timeout(200)
    try:
        report = import_paths(plain_store, [path], embed=False)
        assert (report.threads_unchanged, report.threads_updated, report.errors) == (12, 0, [])
        # The control: a thread with something new does need the lock.
        with pytest.raises(apsw.BusyError):
            import_paths(plain_store, [export(tmp_path / "y.jsonl", 12, 4)], embed=False)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert assert_counts_exact(plain_store) == 36


def test_index_text_fast_path_is_the_same_text() -> None:
    """The ASCII shortcut in index_text must write exactly what the two substitutions write."""
    controls = "".join(map(chr, range(0x20))) + "\x7f"
    samples = [
        "",
        "plain",
        "tab\there\nline\r\n",
        f"all{controls}controls",
        "café 向量 and \x01 ctl",
        "x" * 9000,
    ]
    for text in samples + [c for c in controls] + [f"a{c}b" for c in controls]:
        want = text_mod._CJK_CHAR.sub(r" \1 ", re.sub(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]", " ", text))
        assert index_text(text) == want, repr(text)


def test_imported_messages_are_found_by_keyword(plain_store: Store, tmp_path: Path) -> None:
    import_paths(plain_store, [export(tmp_path / "x.jsonl", 3, 5)], embed=False)
    plain_store.write_thread(ThreadIn("t", "ctl", "T", [MessageIn("user", "zeppelin\x01hangar", "z")]))
    for word in ("hangar", "向量", "café"):
        found = {r.id for r in plain_store.search(word, keyword_only=True, scope="messages", k=50).results}
        want = {i for i, c in plain_store.con.execute("SELECT id, content FROM messages") if word in c}
        assert found == want and want, word


def _automerge(store: Store) -> int | None:
    row = store.con.execute("SELECT v FROM fts_messages_config WHERE k = 'automerge'").fetchone()
    return None if row is None else int(row[0])


def test_an_import_merges_the_keyword_index_less_while_it_runs_then_restores_it(
    plain_store: Store, tmp_path: Path
) -> None:
    """FTS5 automerge is off once the first thread is written (fewer merges per commit), back to the
    default when the import ends, and the index answers the same; a re-import changes nothing."""
    assert _automerge(plain_store) is None  # FTS5's built-in default, never set
    seen: list[int | None] = []
    report = import_paths(
        plain_store,
        [export(tmp_path / "x.jsonl", 6, 4)],
        embed=False,
        progress=lambda p: seen.append(_automerge(plain_store)) if p.phase == "writing" else None,
    )
    assert report.threads_added == 6
    assert seen == [0] * 6  # progress is reported after each thread is written
    assert _automerge(plain_store) == import_run.FTS_AUTOMERGE
    assert_counts_exact(plain_store)
    for word in ("向量", "café", "plain"):
        found = {r.id for r in plain_store.search(word, keyword_only=True, scope="messages", k=50).results}
        want = {i for i, c in plain_store.con.execute("SELECT id, content FROM messages") if word in c}
        assert found == want and want, word
    again = import_paths(plain_store, [export(tmp_path / "x.jsonl", 6, 4)], embed=False)
    assert again.threads_unchanged == 6 and _automerge(plain_store) == import_run.FTS_AUTOMERGE
