"""Hybrid search on a real apsw + sqlite-vec chat.db (fake embedder): filters with k, CJK, nasty query
text, no-model fallback, trash, chunks, summaries, access tracking, result fields."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from embeddings import FakeEmbedder
from store import MessageIn, Store, ThreadIn
from store.errors import InvalidInputError
from store.search.engine import Filters, SearchResponse
from store.search.query import keyword_expression
from store.text import fts_put

RESULT_KEYS = {
    "kind",
    "id",
    "thread_id",
    "external_id",
    "role",
    "category",
    "content",
    "score",
    "matched",
    "thread_title",
    "created_at",
    "superseded_by",
    "valid_until",
    "source",
    "weak",
}
NASTY = [
    "AND",
    "OR",
    "NOT",
    '"',
    "'",
    "c++",
    "-x",
    "*",
    ":",
    "😀",
    "",
    " ",
    "a" * 10_240,
    "word " * 2048,
    "O'Reilly",
    'say "hi',
    "col:foo",
    "NEAR(a b)",
    "^start",
    "(",
    ")",
    "a AND OR b",
    "\x00\x1f",
    "\\",
    "%_",
    "--",
    "🤖🧠 memory",
    "𠀀𠀁",
    "x" + "\u0301" * 50,
]


def thread(
    ext: str, texts: list[str], *, role: str = "user", start: float = 1_700_000_000.0, source: str = "test"
) -> ThreadIn:
    msgs = [
        MessageIn(role, t, external_id=f"{ext}-{i}", created_at=start + i * 60) for i, t in enumerate(texts)
    ]
    return ThreadIn(source=source, external_id=ext, title=ext, messages=msgs, created_at=start)


def ids(resp: SearchResponse, kind: str | None = None) -> list[int]:
    return [r.id for r in resp.results if kind is None or r.kind == kind]


# -- filters are applied inside the search, so k still counts --------------------------------------------


@pytest.fixture
def crowded(store: Store) -> dict[str, int]:
    """A strongly matching crowd in thread B / category fact, a weaker dozen in thread A / skill."""
    b = store.write_thread(
        thread("B", [f"gizmo gizmo gizmo gizmo repair log {i}" for i in range(60)])
    ).thread_id
    a = store.write_thread(
        thread(
            "A",
            [f"a note that mentions the gizmo once, entry {i}" for i in range(12)],
            role="assistant",
            start=1_800_000_000.0,
        )
    ).thread_id
    for i in range(40):
        store.add_memory(f"gizmo gizmo gizmo fact number {i}", "fact", force=True)
    for i in range(12):
        store.add_memory(f"skill with the gizmo, variant {i}", "skill", force=True, pinned=i % 2 == 0)
    return {"A": a, "B": b}


@pytest.mark.parametrize("keyword_only", [True, False])
def test_thread_and_role_filters_still_fill_k(
    store: Store, crowded: dict[str, int], keyword_only: bool
) -> None:
    resp = store.search(
        "gizmo", scope="messages", k=10, filters=Filters(thread_id=crowded["A"]), keyword_only=keyword_only
    )
    assert len(resp.results) == 10
    assert {r.thread_id for r in resp.results} == {crowded["A"]}
    resp = store.search("gizmo", k=10, filters=Filters(role="assistant"), keyword_only=keyword_only)
    assert len(resp.results) == 10 and {r.role for r in resp.results} == {"assistant"}
    assert {r.kind for r in resp.results} == {"message"}


def test_date_filters_fill_k(store: Store, crowded: dict[str, int]) -> None:
    resp = store.search("gizmo", scope="messages", k=10, filters=Filters(since=1_800_000_000.0))
    assert len(resp.results) == 10 and {r.thread_id for r in resp.results} == {crowded["A"]}
    early = store.search("gizmo", scope="messages", k=5, filters=Filters(until=1_700_000_000.0 + 120))
    assert {r.external_id for r in early.results} == {"B-0", "B-1"}


@pytest.mark.parametrize("keyword_only", [True, False])
def test_memory_filters_fill_k(store: Store, crowded: dict[str, int], keyword_only: bool) -> None:
    resp = store.search("gizmo", k=10, filters=Filters(category="skill"), keyword_only=keyword_only)
    assert len(resp.results) == 10 and {r.category for r in resp.results} == {"skill"}
    pinned = store.search("gizmo", k=10, filters=Filters(pinned=True), keyword_only=keyword_only)
    assert len(pinned.results) == 6
    assert all(store.get_memory(i).pinned for i in ids(pinned))


def test_semantic_side_filters_inside_the_knn(store: Store, crowded: dict[str, int]) -> None:
    qvec = store.embed_query("gizmo")
    assert qvec is not None
    hits = store.semantic_candidates(qvec, ("message",), Filters(thread_id=crowded["A"]), 10)
    assert len(hits) == 10
    assert {store.get_message(key[1]).thread_id for key, _, _ in hits} == {crowded["A"]}
    mems = store.semantic_candidates(qvec, ("memory",), Filters(category="skill"), 10)
    assert len(mems) == 10 and {store.get_memory(key[1]).category for key, _, _ in mems} == {"skill"}


def test_id_lists_read_the_same_rows_through_carray_and_json(
    store: Store, crowded: dict[str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Searches read rows by lists of ids through SQLite's carray() (store.db.id_table); json_each where
    an apsw build lacks carray, and for an empty list (carray refuses one). Both give the same answers."""
    import numpy as np

    from store import db

    assert db.HAS_CARRAY  # apsw's wheels: otherwise this test compares json_each with itself
    ids = [crowded["A"], 10**12, crowded["B"], crowded["A"]]
    for given_ids in (ids, np.asarray(ids), []):
        listed, param = db.id_table(given_ids)
        assert listed == ("carray(?)" if len(given_ids) else "json_each(?)")
        rows = store.con.execute(f"SELECT id FROM threads WHERE id IN (SELECT value FROM {listed})", (param,))
        assert sorted(r[0] for r in rows) == sorted({crowded["A"], crowded["B"]} & set(given_ids))

    def answers() -> list[list[tuple[str, int, float, int | None]]]:
        out = []
        for f in (
            Filters(),
            Filters(thread_id=crowded["A"]),
            Filters(category="skill"),
            Filters(pinned=True),
        ):
            for keyword_only in (True, False):
                resp = store.search("gizmo", k=10, filters=f, keyword_only=keyword_only, touch=False)
                out.append([(r.kind, r.id, round(r.score, 9), r.thread_id) for r in resp.results])
        return out

    with_carray = answers()
    monkeypatch.setattr(db, "HAS_CARRAY", False)
    assert db.id_table([1, 2])[0] == "json_each(?)"
    assert answers() == with_carray
    assert [len(found) for found in with_carray] == [10, 10, 10, 10, 10, 10, 6, 6]


def test_filters_that_exclude_every_kind_are_an_error(store: Store) -> None:
    with pytest.raises(InvalidInputError):
        store.search("x", filters=Filters(category="fact", role="user"))
    with pytest.raises(InvalidInputError):
        store.search("x", scope="messages", filters=Filters(category="fact"))
    with pytest.raises(InvalidInputError):
        store.search("x", scope="everything")
    with pytest.raises(InvalidInputError):
        store.search("x", filters=Filters(role="robot"))
    for scope, kind in (("memories", "memory"), ("messages", "message"), ("summaries", "summary")):
        assert Filters().kinds(scope) == (kind,)


# -- CJK ---------------------------------------------------------------------------------------------


@pytest.fixture
def cjk_store(store: Store) -> Store:
    store.write_thread(
        thread(
            "zh",
            [
                "我们最后决定用向量数据库来存储所有的嵌入。",
                "向前走，量力而行。",  # 向 and 量 both present, but not as the word 向量
                "明日は東京で会議があります。",
                "カレーライスが大好きです。",
                "오늘은 날씨가 좋네요",
            ],
        )
    )
    return store


@pytest.mark.parametrize(
    "query,expected",
    [
        ("向量", ["zh-0"]),  # a two-character word inside a longer sentence
        ("数据库", ["zh-0"]),
        ("向量数据库怎么样", ["zh-0"]),  # a whole sentence as the query: its character pairs match
        ("東京", ["zh-2"]),
        ("会議", ["zh-2"]),
        ("カレー", ["zh-3"]),
        ("날씨", ["zh-4"]),
    ],
)
def test_cjk_words_are_found_by_keyword(cjk_store: Store, query: str, expected: list[str]) -> None:
    resp = cjk_store.search(query, keyword_only=True)
    assert [r.external_id for r in resp.results][:1] == expected
    assert resp.results[0].matched == ("keyword",)
    assert query[:2] in resp.results[0].content or "向量" in resp.results[0].content


def test_cjk_word_is_a_phrase_not_scattered_characters(cjk_store: Store) -> None:
    found = [r.external_id for r in cjk_store.search("向量", keyword_only=True).results]
    assert "zh-1" not in found


# -- user text never breaks a query ------------------------------------------------------------------


@pytest.mark.parametrize("query", NASTY)
@pytest.mark.parametrize("keyword_only", [True, False])
def test_nasty_queries_work(store: Store, query: str, keyword_only: bool) -> None:
    store.write_thread(thread("n", ["I read O'Reilly books about c++ and AND/OR logic", "plain text"]))
    store.add_memory("I prefer c++ over -x flags", "preference")
    resp = store.search(query, keyword_only=keyword_only)
    assert isinstance(resp.results, list)
    resp = store.search(query, keyword_only=keyword_only, prefix=True)
    assert isinstance(resp.results, list)


def test_operators_and_punctuation_are_searched_as_words(store: Store) -> None:
    store.write_thread(thread("p", ["I read O'Reilly books about c++", "nothing to see", "NEAR a drill"]))
    assert ids(store.search("O'Reilly", keyword_only=True)) == ids(store.search("reilly", keyword_only=True))
    assert [r.external_id for r in store.search("c++", keyword_only=True).results] == ["p-0"]
    assert [r.external_id for r in store.search("NEAR", keyword_only=True).results] == ["p-2"]
    assert store.search("", keyword_only=False).results == []


def test_prefix_matches_the_word_being_typed(store: Store) -> None:
    store.write_thread(thread("t", ["the thermostat is broken", "other"]))
    assert [r.external_id for r in store.search("thermo", keyword_only=True, prefix=True).results] == ["t-0"]
    assert store.search("thermo", keyword_only=True).results == []
    assert store.search("thermo ", keyword_only=True, prefix=True).results == []  # the word is finished


def test_keyword_expression_quotes_every_token() -> None:
    assert keyword_expression('c++ AND "x" -y') == '"c++" OR "x" OR "-y"'
    assert keyword_expression("") is None and keyword_expression("  ...  ") is None
    assert keyword_expression("the should") is None  # only stop words: nothing to search for


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.one_of(
        st.text(max_size=60),
        st.lists(
            st.sampled_from(
                list("\"'*:^()-+{}[]<>!?.,;/\\|&%$#@~`=_ ")
                + ["AND", "OR", "NOT", "NEAR", "中", "文", "字", "😀", "é", "\u200b", "\u0301", "\x00"]
            ),
            max_size=40,
        ).map("".join),
        st.lists(
            st.sampled_from(["AND", "OR", "NOT", "NEAR(", '"', "c++", "-x", "*", "col:", "向量", "^"]),
            max_size=8,
        ).map(" ".join),
    )
)
def test_fuzzed_queries_never_raise(store: Store, query: str) -> None:
    if not store.count_threads():
        store.write_thread(thread("f", ["fuzz target text with c++ and 向量 and emoji 😀", "second"]))
    for keyword_only in (True, False):
        resp = store.search(query, keyword_only=keyword_only, prefix=True, k=5)
        assert isinstance(resp.results, list) and len(resp.results) <= 5
    expr = keyword_expression(query)
    if expr is not None:
        store.con.execute("SELECT count(*) FROM fts_messages WHERE fts_messages MATCH ?", (expr,)).fetchall()


# -- no model: keyword results and a one-line notice -------------------------------------------------


def test_no_model_gives_keyword_results_and_a_notice(db_path: Path) -> None:
    with Store(db_path, embedder=None) as s:
        s.write_thread(thread("k", ["backup the NAS with restic", "unrelated"]))
        resp = s.search("restic backup")
        assert resp.mode == "keyword" and [r.external_id for r in resp.results] == ["k-0"]
        assert resp.notice is not None and resp.notice.startswith("semantic search unavailable:")
        assert "\n" not in resp.notice


def test_keyword_only_never_touches_the_model(store: Store, fake_embedder: FakeEmbedder) -> None:
    store.write_thread(thread("k", ["backup the NAS with restic"]))
    calls = fake_embedder.calls
    resp = store.search("restic", keyword_only=True)
    assert fake_embedder.calls == calls and resp.mode == "keyword" and resp.notice is None
    assert store.search("restic").mode == "hybrid" and fake_embedder.calls == calls + 1


def test_dimension_mismatch_falls_back_to_keywords(db_path: Path) -> None:
    with Store(db_path, embedder=FakeEmbedder(dimension=64)) as s:
        s.write_thread(thread("d", ["dimension test text"]))
    with Store(db_path, embedder=FakeEmbedder(dimension=32)) as s:
        resp = s.search("dimension")
        assert resp.mode == "keyword" and len(resp.results) == 1
        assert resp.notice is not None and "reindex" in resp.notice


class _FailingLoad(FakeEmbedder):
    def load(self) -> None:
        raise RuntimeError("weights are corrupt")


def test_model_that_fails_to_load_falls_back(db_path: Path) -> None:
    with Store(db_path, embedder=FakeEmbedder()) as s:
        s.write_thread(thread("l", ["load failure text"]))
    with Store(db_path, embedder=_FailingLoad()) as s:
        resp = s.search("load failure")
        assert resp.mode == "keyword" and len(resp.results) == 1
        assert resp.notice is not None and "weights are corrupt" in resp.notice


# -- what comes back ---------------------------------------------------------------------------------


def test_results_have_the_documented_fields(store: Store) -> None:
    store.write_thread(thread("r", ["espresso grinder settings", "other"]))
    m = store.add_memory("I like espresso", "preference").memory
    resp = store.search("espresso")
    assert {r.kind for r in resp.results} == {"memory", "message"}
    for r in resp.results:
        data = r.to_json()
        assert data.keys() == RESULT_KEYS
        assert set(data["matched"]) <= {"keyword", "semantic"} and data["matched"]
        assert isinstance(data["score"], float)
    mem = next(r for r in resp.results if r.kind == "memory")
    assert (mem.id, mem.category, mem.role, mem.external_id) == (m.id, "preference", None, None)
    msg = next(r for r in resp.results if r.kind == "message")
    assert (msg.external_id, msg.role, msg.category) == ("r-0", "user", None)
    assert msg.matched == ("keyword", "semantic")
    assert resp.to_json().keys() == {"query", "mode", "notice", "results", "weak"}


def test_trashed_memories_never_appear(store: Store) -> None:
    m = store.add_memory("the spare key is under the blue flowerpot", "fact").memory
    store.delete_memory(m.id)
    for keyword_only in (True, False):
        assert ids(store.search("blue flowerpot key", keyword_only=keyword_only), "memory") == []
    store.restore_memory(m.id)
    assert ids(store.search("blue flowerpot key"), "memory") == [m.id]


def test_long_message_is_found_through_its_chunks_and_returned_once(db_path: Path) -> None:
    with Store(db_path, embedder=FakeEmbedder(chunk_words=20)) as s:
        filler = " ".join(f"filler{i}" for i in range(200))
        s.write_thread(thread("long", [filler + " the zeppelin hangar is in Friedrichshafen", "short one"]))
        assert s.scalar("SELECT count(*) FROM message_chunks") > 5
        resp = s.search("zeppelin hangar Friedrichshafen", scope="messages")
        assert ids(resp).count(resp.results[0].id) == 1 and resp.results[0].external_id == "long-0"
        assert "zeppelin" in resp.results[0].content and len(resp.results[0].content) < 260
        qvec = s.embed_query("zeppelin hangar Friedrichshafen")
        assert qvec is not None
        hits = s.semantic_candidates(qvec, ("message",), Filters(), 10)
        assert len({key for key, _, _ in hits}) == len(hits)  # one row per message, its best chunk
        # no query word appears as typed: the snippet is placed by the best chunk's span
        found = s.search("Friedrichshafeners", scope="messages").results
        assert found and found[0].content.startswith("…") and "Friedrichshafen" in found[0].content


def test_the_best_messages_come_back_when_long_messages_crowd_the_nearest_chunks(db_path: Path) -> None:
    """semantic_candidates fetches n + n/2 chunks first and 3n when fewer than n messages are among them:
    either way the n best messages by their best chunk, as an exact scan of every chunk ranks them."""
    query = "zeppelin hangar friedrichshafen airship"
    emb = FakeEmbedder(chunk_words=12)
    with Store(db_path, embedder=emb) as s:
        crowd = [" ".join([query] * 15) + f" long{i}" for i in range(2)]  # ~6 chunks each, all near the query
        short = [f"{query.split()[i % 4]} note {i} filler words here" for i in range(30)]
        s.write_thread(thread("t", crowd + short))
        qvec = s.embed_query(query)
        assert qvec is not None
        rows = [
            (int(mid), str(content)[int(a) : int(b)])
            for mid, content, a, b in s.con.execute(
                "SELECT c.message_id, m.content, c.start_char, c.end_char FROM message_chunks c "
                "JOIN messages m ON m.id = c.message_id"
            )
        ]
        vecs = emb.embed_documents([text for _, text in rows])
        chunk_sims = sorted(
            ((float(v @ qvec), mid) for (mid, _), v in zip(rows, vecs, strict=True)), reverse=True
        )
        best: dict[int, float] = {}
        for sim, mid in chunk_sims:
            best.setdefault(mid, sim)  # best first: a message's first entry is its best chunk
        ranked = sorted(best, key=lambda mid: -best[mid])
        assert len({mid for _, mid in chunk_sims[:15]}) < 10  # the first fetch alone holds too few messages
        hits = s.semantic_candidates(qvec, ("message",), Filters(), 10)
        assert len(hits) == 10 and len({key for key, _, _ in hits}) == 10
        assert all(abs(sim - best[key[1]]) < 0.01 for key, sim, _ in hits)  # each scores as its best chunk
        for (_, sim, _), mid in zip(hits, ranked[:10], strict=True):  # and they are the 10 best (ties aside)
            assert abs(sim - best[mid]) < 0.01


def test_summaries_are_searched_by_keyword(store: Store) -> None:
    tid = store.write_thread(thread("s", ["hello"])).thread_id
    with store.con:
        store.con.execute(
            "INSERT INTO thread_summaries(thread_id, content, last_message_seq, token_count, "
            "created_at, updated_at) VALUES (?, ?, 0, 5, 1, 1)",
            (tid, "Decided to migrate the homelab to Proxmox."),
        )
        fts_put(store.con, "fts_summaries", tid, "Decided to migrate the homelab to Proxmox.")
    resp = store.search("proxmox homelab", scope="summaries")
    assert [(r.kind, r.id, r.thread_id) for r in resp.results] == [("summary", tid, tid)]
    assert resp.mode == "keyword" and resp.notice is None  # summaries have no vectors: nothing is missing
    assert store.search("proxmox").results[0].kind == "summary"


# -- access tracking ---------------------------------------------------------------------------------


def test_search_counts_an_access_for_each_memory_returned(store: Store) -> None:
    hit = [store.add_memory(f"walrus fact number {i}", "fact", force=True).memory.id for i in range(3)]
    miss = store.add_memory("something about pelicans", "fact").memory.id
    statements: list[str] = []

    def trace(cursor: object, sql: str, bindings: object) -> bool:
        statements.append(sql)
        return True

    store.con.exec_trace = trace
    resp = store.search("walrus", scope="memories", keyword_only=True)
    store.con.exec_trace = None
    assert sorted(ids(resp)) == sorted(hit)
    assert len([s for s in statements if s.lstrip().upper().startswith("UPDATE LONG_TERM_MEMORIES")]) == 1
    store.search("walrus", scope="memories", k=3)
    for mid in hit:
        m = store.get_memory(mid)
        assert m.access_count == 2 and m.last_accessed is not None
    assert store.get_memory(miss).access_count == 0
    store.search("walrus", scope="memories", touch=False)
    assert [store.get_memory(mid).access_count for mid in hit] == [2, 2, 2]
