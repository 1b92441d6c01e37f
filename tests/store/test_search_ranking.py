"""Issue 14: stemming, stop words, the relevance floor, access counts that mean use, the conversations scope,
thread titles in results, the stemmed index for old databases (migration 6 and reindex), [search] config.

All against the real apsw + sqlite-vec database in a temp file; the fake embedder where the model is not the
point, the real model (marker `model`) for the nonsense-query and floor behaviour it is about.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import apsw
import pytest

from embeddings import FakeEmbedder
from store import MessageIn, Store, ThreadIn
from store.config import load_config
from store.search.engine import NOTICE_NOTHING, NOTICE_STOP_ONLY, Filters
from store.search.keyword import keyword_hits
from store.search.query import parse_query
from store.search.rank import Fusion, Ranked, evidence

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "chat-v1.db"
NONSENSE = "quantum chromodynamics lattice"


def _thread(store: Store, ext: str, texts: list[str], title: str = "Home lab") -> int:
    msgs = [
        MessageIn("user" if i % 2 == 0 else "assistant", t, f"{ext}-{i}", 1_700_000_000.0 + i)
        for i, t in enumerate(texts)
    ]
    return store.write_thread(ThreadIn("generic", ext, title, msgs)).thread_id


def _archive(store: Store) -> None:
    _thread(
        store,
        "a",
        [
            "We decided to run restic backups every night to the NAS.",
            "Good idea: restic deduplicates, so nightly runs stay small.",
            "My sister's dog Biscuit is a beagle.",
            "我们决定用向量数据库做检索。",
        ],
    )
    store.add_memory("I prefer restic for backups", "preference")
    store.add_memory("My NAS is a Synology DS920+", "fact")


def _counts(store: Store) -> list[int]:
    return [m.access_count for m in sorted(store.list_memories(), key=lambda m: m.id)]


# -- the keyword index ----------------------------------------------------------------------------------


def test_stemming_finds_other_forms_of_a_word(store: Store) -> None:
    _archive(store)
    found = store.search("deciding on nightly backup", scope="messages", keyword_only=True).results
    assert found and found[0].external_id == "a-0" and found[0].matched == ("keyword",)


def test_two_character_chinese_words_are_still_found(store: Store) -> None:
    _archive(store)
    found = store.search("向量", scope="messages", keyword_only=True).results
    assert [r.external_id for r in found] == ["a-3"]


def test_own_bm25_length_normalisation_is_the_b_parameter(store: Store) -> None:
    """b = 0: a long turn with the word once scores like a short one; b = 1: the short one wins."""
    _thread(store, "b", ["restic", "restic " + "filler words about the weather " * 30])
    parsed = parse_query("restic")
    flat = keyword_hits(store.con, parsed, "message", Filters(), 10, k1=1.2, b=0.0)
    full = keyword_hits(store.con, parsed, "message", Filters(), 10, k1=1.2, b=1.0)
    assert flat[0].bm25 == pytest.approx(flat[1].bm25)
    assert full[0].bm25 > 2 * full[1].bm25
    assert all(h.coverage == 1.0 for h in flat + full)


# -- stop words and the floor ---------------------------------------------------------------------------


@pytest.mark.parametrize("query", ["should", "what should I do?", "我们什么"])
def test_a_query_of_only_stop_words_returns_nothing_and_says_so(store: Store, query: str) -> None:
    _archive(store)
    resp = store.search(query)
    assert resp.results == [] and resp.notice == NOTICE_STOP_ONLY
    assert _counts(store) == [0, 0]


def test_stop_words_never_make_a_keyword_match(store: Store) -> None:
    _thread(store, "s", ["you should try it", "restic should be fine"])
    found = store.search("should restic", scope="messages", keyword_only=True).results
    assert [r.external_id for r in found if "keyword" in r.matched] == ["s-1"]
    assert store.search("should", scope="messages", keyword_only=True).results == []


def test_wide_punctuation_is_no_word(store: Store) -> None:
    """Chinese punctuation sits against the words (狗？, ，Jay): it is never a phrase of its own, so a row
    holding every word of the query covers all of it."""
    assert parse_query("Jay 的猫叫什么？").phrases == ("Jay", "的 猫", "猫 叫", "叫 什")
    assert parse_query("后来，Jay 去了哪里？").phrases == ("后 来", "Jay", "去 了", "哪 里")
    assert parse_query("c++ -x O'Reilly?").phrases == ("c++", "-x", "O'Reilly?")  # ASCII stays as typed
    _thread(store, "p", ["Jay 的猫叫 Mochi", "别的事情"])
    hits = keyword_hits(store.con, parse_query("Jay 的猫叫什么？"), "message", Filters(), 10, k1=1.2, b=0.1)
    assert hits[0].coverage == pytest.approx(1.0)


def test_a_nonsense_query_returns_nothing_and_touches_nothing(store: Store) -> None:
    _archive(store)
    for scope in ("all", "memories", "conversations"):
        resp = store.search(NONSENSE, scope=scope)
        assert resp.results == [] and resp.notice is not None and resp.notice.startswith(NOTICE_NOTHING)
    assert _counts(store) == [0, 0]


@pytest.mark.model
def test_a_nonsense_query_returns_nothing_with_the_real_model(db_path: Path, real_embedder) -> None:  # type: ignore[no-untyped-def]
    s = Store(db_path, embedder=real_embedder)
    _archive(s)
    resp = s.search(NONSENSE)
    assert resp.mode == "hybrid" and resp.results == [] and resp.notice == NOTICE_NOTHING
    assert _counts(s) == [0, 0]
    # ... while a question by meaning, sharing no word with its answer, still finds it.
    found = s.search("what breed is the pet of my sibling", scope="messages").results
    assert found and found[0].external_id == "a-2"
    s.close()


def test_evidence_is_meaning_words_or_some_of_both() -> None:
    f = Fusion(floor=0.4, keyword_floor=0.6)
    assert evidence(Ranked(("memory", 1), 0.0, ("semantic",), cosine=0.4), f) == pytest.approx(1.0)
    assert evidence(Ranked(("memory", 1), 0.0, ("keyword",), coverage=0.3), f) == pytest.approx(0.5)
    both = Ranked(("memory", 1), 0.0, ("keyword", "semantic"), cosine=0.2, coverage=0.3)
    assert evidence(both, f) == pytest.approx(1.0)


# -- access counts mean use -----------------------------------------------------------------------------


def test_search_touches_only_what_it_returns_in_one_statement(store: Store) -> None:
    _archive(store)
    updates: list[str] = []

    def trace(cursor: apsw.Cursor, sql: str, bindings: object) -> bool:
        if sql.lstrip().upper().startswith("UPDATE"):
            updates.append(sql)
        return True

    store.con.exec_trace = trace
    resp = store.search("Synology NAS", scope="memories", k=5)
    store.con.exec_trace = None
    returned = {r.id for r in resp.results}
    assert returned and len(updates) == 1
    assert {m.id for m in store.list_memories() if m.access_count} == returned


def test_conversations_scope_returns_k_messages_and_summaries_and_touches_no_memory(store: Store) -> None:
    _archive(store)
    resp = store.search("restic backups NAS", scope="conversations", k=2)
    assert len(resp.results) == 2 and {r.kind for r in resp.results} <= {"message", "summary"}
    assert _counts(store) == [0, 0]


def test_listing_memories_is_not_use(store: Store) -> None:
    _archive(store)
    store.list_memories()
    assert _counts(store) == [0, 0]


def test_results_carry_thread_title_and_time(store: Store) -> None:
    _archive(store)
    r = store.search("beagle", scope="messages").results[0]
    assert r.thread_title == "Home lab" and r.created_at == 1_700_000_002.0
    data = r.to_json()
    assert data["thread_title"] == "Home lab" and data["created_at"] == 1_700_000_002.0


# -- old databases, reindex, config ---------------------------------------------------------------------


def test_migration_8_fills_the_stemmed_index_for_an_old_database(tmp_path: Path) -> None:
    db = tmp_path / "chat.db"
    shutil.copy(FIXTURE, db)
    s = Store(db, embedder=FakeEmbedder())
    sql = s.con.execute("SELECT sql FROM sqlite_master WHERE name = 'fts_messages'").fetchone()
    assert sql is not None and "porter" in str(sql[0])
    indexed = s.con.execute("SELECT count(*) FROM fts_messages").fetchone()
    assert indexed is not None and indexed[0] == s.con.execute("SELECT count(*) FROM messages").fetchone()[0]  # type: ignore[index]
    assert s.search("红烧", keyword_only=True).results
    s.close()


def test_reindex_recreates_the_keyword_index_with_the_stemmer(store: Store) -> None:
    _archive(store)
    with store.con:
        store.con.execute("DROP TABLE fts_messages")
        store.con.execute(
            "CREATE VIRTUAL TABLE fts_messages USING fts5(body, content='', contentless_delete=1)"
        )
    assert store.search("deciding", scope="messages", keyword_only=True).results == []
    store.rebuild_keyword_index()
    assert [r.external_id for r in store.search("deciding", scope="messages", keyword_only=True).results] == [
        "a-0"
    ]


def test_search_config_reads_the_knobs_and_old_rrf_k_without_complaint(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        "[search]\nrrf_k = 60\nsemantic_weight = 0.5\nfloor = 0.42\nbm25_b = 0.2\n", encoding="utf-8"
    )
    cfg = load_config(path)
    assert "unknown key" not in caplog.text
    s = Store(tmp_path / "chat.db", config=cfg, embedder=FakeEmbedder())
    f = s.fusion()
    assert (f.semantic_weight, f.floor, f.b) == (0.5, 0.42, 0.2)
    s.close()
