"""Export -> import into an empty chat.db is exact (every canonical table, every row); Markdown is readable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from embeddings import FakeEmbedder
from store import Store, StoreError, ThreadIn
from store.export import canonical_tables, export_json, markdown_files, restore_json
from store.records import MessageIn


def _fill(s: Store) -> None:
    w = s.write_thread(
        ThreadIn(
            "chatgpt",
            "c-1",
            "Backups [red]plan[/red]",
            [
                MessageIn("user", "How do I back up my NAS?", "n1", 1_700_000_000.0, {"model": "gpt-4o"}),
                MessageIn(
                    "assistant",
                    "Use **restic** with two repositories.\n\n```sh\nrestic backup ~\n```",
                    "n2",
                    1_700_000_060.0,
                    {"attachments": ["plan.pdf"]},
                ),
            ],
            metadata={"gizmo": None},
        )
    )
    s.write_thread(ThreadIn("claude", "k-2", "中文 thread", [MessageIn("user", "我喜欢红烧肉", "k2m1")]))
    with s.con:
        s.con.execute(
            "INSERT INTO thread_summaries VALUES (?, 'Decided on restic.', 1, 4, 1.0, 2.0)", (w.thread_id,)
        )
        s.con.execute("INSERT INTO memory_topics VALUES (?, 'restic', 3, 5.0)", (w.thread_id,))
        s.con.execute(
            "INSERT INTO compression_history(thread_id, before_tokens, after_tokens, ratio, "
            "messages_compressed, strategy, created_at, details) VALUES (?, 100, 10, 0.1, 2, 'x', 3.0, "
            "'{\"a\": 1}')",
            (w.thread_id,),
        )
    a = s.add_memory("I prefer restic for backups", "preference", importance=7, pinned=True).memory
    b = s.add_memory("Works at a bakery", "fact", importance=2).memory
    s.add_memory("Knows Rust", "skill")
    s.touch_memories([a.id, b.id])
    s.edit_memory(a.id, content="I prefer restic (with rclone) for backups")
    s.delete_memory(b.id)


def _dump(s: Store) -> dict[str, list[tuple]]:
    out = {}
    for t in canonical_tables(s):
        out[t] = [tuple(r) for r in s.con.execute(f"SELECT * FROM {t} ORDER BY rowid")]
    return out


def test_round_trip_is_exact(tmp_path: Path) -> None:
    src = Store(tmp_path / "a.db", embedder=FakeEmbedder())
    _fill(src)
    data = json.loads(json.dumps(export_json(src)))  # through real JSON text
    dst = Store(tmp_path / "b.db", embedder=FakeEmbedder())
    restore_json(dst, data)
    assert _dump(dst) == _dump(src)
    assert all(_dump(src)[t] for t in ("threads", "messages", "long_term_memories", "memory_history"))
    assert dst.check_indexes() == []
    # Trash, pins, counts and history came back as they were.
    assert [m.content for m in dst.list_memories(trash=True)] == ["Works at a bakery"]
    assert dst.list_memories(pinned=True)[0].access_count == 1
    src.close()
    dst.close()


def test_round_trip_with_embeddings_keeps_vectors(tmp_path: Path) -> None:
    src = Store(tmp_path / "a.db", embedder=FakeEmbedder())
    _fill(src)
    data = json.loads(json.dumps(export_json(src, include_embeddings=True)))
    dst = Store(tmp_path / "b.db", embedder=FakeEmbedder())
    restore_json(dst, data)
    q = "SELECT memory_id, embedding, category, deleted FROM vec_memories ORDER BY memory_id"
    assert list(dst.con.execute(q)) == list(src.con.execute(q))
    q2 = (
        "SELECT c.message_id, c.chunk_index, c.start_char, c.end_char, v.embedding FROM message_chunks c "
        "JOIN vec_chunks v ON v.chunk_id = c.id ORDER BY c.message_id, c.chunk_index"
    )
    assert list(dst.con.execute(q2)) == list(src.con.execute(q2))
    assert dst.check_indexes() == []


def test_restore_refuses_a_non_empty_database_and_writes_nothing(tmp_path: Path) -> None:
    src = Store(tmp_path / "a.db", embedder=None)
    _fill(src)
    data = export_json(src)
    dst = Store(tmp_path / "b.db", embedder=None)
    dst.add_memory("already here", "fact")
    before = _dump(dst)
    with pytest.raises(StoreError, match="not empty"):
        restore_json(dst, data)
    assert _dump(dst) == before


def test_restore_rejects_unknown_tables_and_columns(tmp_path: Path) -> None:
    dst = Store(tmp_path / "b.db", embedder=None)
    with pytest.raises(StoreError, match="unknown table"):
        restore_json(dst, {"format": "memapp-export", "schema_version": 1, "tables": {"nope": []}})
    with pytest.raises(StoreError, match="unknown columns"):
        restore_json(
            dst,
            {"format": "memapp-export", "schema_version": 1, "tables": {"threads": [{"id": 1, "bogus": 2}]}},
        )
    with pytest.raises(StoreError, match="schema version"):
        restore_json(dst, {"format": "memapp-export", "schema_version": 999, "tables": {}})
    assert dst.stats()["threads"] == 0


def test_scoped_export(tmp_path: Path) -> None:
    src = Store(tmp_path / "a.db", embedder=None)
    _fill(src)
    one = export_json(src, thread=1)["tables"]
    assert [t["external_id"] for t in one["threads"]] == ["c-1"]
    assert {m["thread_id"] for m in one["messages"]} == {1}
    assert one["long_term_memories"] == []
    # A scoped export restores on its own: links to rows it left out are detached, as ON DELETE SET NULL.
    restore_json(Store(tmp_path / "one.db", embedder=None), export_json(src, thread=1))
    prefs = export_json(src, category="preference")["tables"]
    assert [m["category"] for m in prefs["long_term_memories"]] == ["preference"]
    assert prefs["threads"] == [] and prefs["messages"] == []
    with src.con:
        src.con.execute("UPDATE long_term_memories SET source_thread_id = 1")
    restored = Store(tmp_path / "prefs.db", embedder=None)
    restore_json(restored, export_json(src, category="preference"))
    assert [m.source_thread_id for m in restored.list_memories()] == [None]


def test_markdown_export_matches_expected(tmp_path: Path) -> None:
    s = Store(tmp_path / "a.db", embedder=None)
    s.write_thread(
        ThreadIn(
            "generic",
            "g1",
            "Tea & [b]notes[/b]",
            [
                MessageIn("user", "Which tea for mornings?", "1", 1_700_000_000.0),
                MessageIn("assistant", "Try **sencha**.", "2", 1_700_000_030.0),
            ],
            created_at=1_699_999_990.0,
        )
    )
    s.add_memory("Likes sencha", "preference", pinned=True)
    s.add_memory("Lives in Porto", "fact", importance=6)
    files = dict(markdown_files(s))
    assert list(files) == ["threads/00001-tea-b-notes-b.md", "memories.md"]
    assert files["threads/00001-tea-b-notes-b.md"] == (
        "# Tea & [b]notes[/b]\n\n- source: generic (g1)\n- created: 2023-11-14T22:13:10Z\n"
        "- last active: 2023-11-14T22:13:50Z\n- messages: 2, tokens: 11\n\n## Messages\n\n"
        "### user · 2023-11-14T22:13:20Z\n\nWhich tea for mornings?\n\n"
        "### assistant · 2023-11-14T22:13:50Z\n\nTry **sencha**.\n"
    )
    assert files["memories.md"] == (
        "# Memories\n\n## Preference\n\n- 📌 Likes sencha _(importance 5, used 0×, #1)_\n\n"
        "## Project\n\n_none_\n\n## Skill\n\n_none_\n\n## Fact\n\n- Lives in Porto _(importance 6, used 0×, #2)_\n"
    )


def test_restore_takes_the_exported_vectors_precision(tmp_path: Path) -> None:
    """An export made at the other precision of the same model (float32 / int8) keeps its vectors: the
    empty database takes that precision (store.core: it never mixes the two)."""
    from tests.store.test_embedding_precision import TwoPrecisions

    src = Store(tmp_path / "a.db", embedder=FakeEmbedder(dimension=64, name="m"))
    _fill(src)
    data = json.loads(json.dumps(export_json(src, include_embeddings=True)))
    emb = TwoPrecisions()
    dst = Store(tmp_path / "b.db", embedder=emb)
    restore_json(dst, data)
    assert emb.name == "m" and dst.vectors.recorded_model() == ("m", 64)
    q = "SELECT memory_id, embedding FROM vec_memories ORDER BY memory_id"
    assert list(dst.con.execute(q)) == list(src.con.execute(q)) != []
