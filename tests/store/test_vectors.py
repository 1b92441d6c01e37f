"""The vector layout: float16 rows + bit-quantised vec0 tables, coarse search + exact re-scoring.

What must hold whatever the speed tricks: scores are exact cosines (of the stored float16 vectors),
filters apply inside the search, trashed memories never come back, a small table is searched exactly,
the coarse step returns the true Hamming-nearest rows whatever its radius estimate did, and databases
from the first layout (float vec0 tables) keep working and are converted (by migration 7, or by the
next vector write on a connection that did not migrate).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from embeddings import FakeEmbedder
from store import Store, db
from store.records import MessageIn, ThreadIn
from store.vectors import rows as vectors
from store.vectors.floats import decode, decode_rows
from store.vectors.knn import _coarse

DIM = 64


def _unit(rng: np.random.Generator, n: int, dim: int = DIM) -> np.ndarray:
    v = rng.standard_normal((n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _clustered(rng: np.random.Generator, n: int) -> np.ndarray:
    """Vectors around 40 centres: neighbours that stand out, as real embeddings have."""
    vecs = _unit(rng, 40)[rng.integers(0, 40, n)] + 0.12 * rng.standard_normal((n, DIM)).astype(np.float32)
    return (vecs / np.linalg.norm(vecs, axis=1, keepdims=True)).astype(np.float32)


def _fill_memories(con: object, vecs: np.ndarray, categories: list[str]) -> None:
    with con:  # type: ignore[attr-defined]
        vectors.ensure_tables(con, "fake-hash-embedder", DIM)  # type: ignore[arg-type]
        for i, (v, c) in enumerate(zip(vecs, categories, strict=True), start=1):
            vectors.put_memory(con, i, v, c, False)  # type: ignore[arg-type]


def _f16(vecs: np.ndarray) -> np.ndarray:
    """What the float16 rows hold, back as float32."""
    return vecs.astype(np.float16).astype(np.float32)


def _exact(vecs: np.ndarray, q: np.ndarray, k: int, mask: np.ndarray | None = None) -> list[int]:
    s = (vecs @ q) / np.linalg.norm(vecs, axis=1)
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    order = np.argsort(-s, kind="stable")[:k]
    return [int(i) + 1 for i in order if np.isfinite(s[i])]


def test_layout_is_float_rows_plus_bit_tables(store: Store) -> None:
    m = store.add_memory("I prefer tea over coffee", "preference").memory
    store.write_thread(ThreadIn("t", "1", "x", [MessageIn("user", "hello there, general kenobi", "a")]))
    kinds = dict(
        store.con.execute(
            "SELECT name, sql FROM sqlite_master WHERE name IN "
            "('vec_memories', 'vec_chunks', 'vec_memories_bits', 'vec_chunks_bits')"
        )
    )
    assert kinds["vec_memories"].startswith("CREATE TABLE") and kinds["vec_chunks"].startswith("CREATE TABLE")
    assert "bit[64]" in kinds["vec_memories_bits"] and "bit[64]" in kinds["vec_chunks_bits"]
    row = store.con.execute(
        "SELECT embedding, category, deleted FROM vec_memories WHERE memory_id = ?", (m.id,)
    ).fetchone()
    assert len(row[0]) == 2 * DIM and row[1:] == ("preference", 0)  # type: ignore[index]
    want = store.embed_query("I prefer tea over coffee")
    assert want is not None and np.allclose(decode(row[0]), want, atol=5e-4)  # type: ignore[index]
    assert store.check_indexes() == []


def test_small_table_is_exact_and_scores_are_true_cosines(store: Store) -> None:
    rng = np.random.default_rng(1)
    vecs = _unit(rng, 200)
    _fill_memories(store.con, vecs, ["fact"] * 200)
    stored = _f16(vecs)
    for q in _unit(rng, 5):
        hits = vectors.knn_memories(store.con, q, 10)
        assert [mid for mid, _ in hits] == _exact(stored, q, 10)
        true = [float(stored[mid - 1] @ q / np.linalg.norm(stored[mid - 1])) for mid, _ in hits]
        assert np.allclose([s for _, s in hits], true, atol=1e-5)
        assert np.allclose([s for _, s in hits], [float(vecs[mid - 1] @ q) for mid, _ in hits], atol=2e-3)


def test_large_table_recall_and_deep_lists(store: Store) -> None:
    rng = np.random.default_rng(2)
    vecs = _clustered(rng, 6000)
    _fill_memories(store.con, vecs, ["fact"] * 6000)
    recalls = []
    for q in vecs[rng.integers(0, 6000, 20)] + 0.05 * _unit(rng, 20):
        q = q / np.linalg.norm(q)
        got = [mid for mid, _ in vectors.knn_memories(store.con, q, 10)]
        recalls.append(len(set(got) & set(_exact(vecs, q, 10))) / 10)
    assert np.mean(recalls) >= 0.95
    deep = vectors.knn_memories(store.con, vecs[0], 600)
    assert len(deep) == 600 and len({mid for mid, _ in deep}) == 600
    assert [s for _, s in deep] == sorted((s for _, s in deep), reverse=True)


def test_coarse_step_returns_the_hamming_nearest_rows(store: Store) -> None:
    """Bounded by the estimated radius or not, the candidates are the n nearest codes (up to ties)."""
    rng = np.random.default_rng(3)
    vecs = _unit(rng, 5000)
    _fill_memories(store.con, vecs, ["fact"] * 5000)
    codes = np.packbits(vecs > 0, axis=1, bitorder="little")
    for q in _unit(rng, 5):
        ids = _coarse(store.con, "vec_memories_bits", "memory_id", q, 300, [], [])
        ham = np.unpackbits(codes ^ np.packbits(q > 0, bitorder="little"), axis=1).sum(1)
        chosen = np.zeros(5000, bool)
        chosen[np.array(ids) - 1] = True
        assert len(ids) == 300 and ham[chosen].max() <= ham[~chosen].min()


def test_filters_apply_inside_the_search(store: Store) -> None:
    rng = np.random.default_rng(4)
    vecs = _unit(rng, 300)
    cats = ["fact" if i % 3 == 0 else "skill" for i in range(300)]
    _fill_memories(store.con, vecs, cats)
    q = _unit(rng, 1)[0]
    facts = np.array([c == "fact" for c in cats])
    got = [mid for mid, _ in vectors.knn_memories(store.con, q, 10, category="fact")]
    assert got == _exact(_f16(vecs), q, 10, facts)


def test_trashed_memories_leave_the_search_and_restored_ones_return(store: Store) -> None:
    a = store.add_memory("the deploy runs on friday evenings", "project").memory
    store.add_memory("i like green tea in the morning", "preference")
    q = store.embed_query("deploy friday evening")
    assert q is not None
    assert vectors.knn_memories(store.con, q, 1)[0][0] == a.id
    store.delete_memory(a.id)
    assert a.id not in [mid for mid, _ in vectors.knn_memories(store.con, q, 5)]
    assert a.id in [mid for mid, _ in vectors.knn_memories(store.con, q, 5, include_deleted=True)]
    assert store.check_indexes() == []
    store.restore_memory(a.id)
    assert vectors.knn_memories(store.con, q, 1)[0][0] == a.id
    assert store.check_indexes() == []


def test_chunk_filters_match_exact_filtered_search(store: Store) -> None:
    msgs = [
        MessageIn(
            "user" if i % 2 else "assistant",
            f"message {i} about topic {i % 7} and more {i * 13}",
            f"m{i}",
            1000.0 + i,
        )
        for i in range(60)
    ]
    tid = store.write_thread(ThreadIn("t", "1", "x", msgs)).thread_id
    store.write_thread(ThreadIn("t", "2", "y", [MessageIn("user", "topic 3 elsewhere", "z", 5000.0)]))
    rows = store.con.execute(
        "SELECT chunk_id, message_id, embedding, role, created_at, thread_id FROM vec_chunks "
        "ORDER BY chunk_id"
    ).fetchall()
    mat = decode_rows([r[2] for r in rows], DIM)  # type: ignore[misc]
    q = store.embed_query("topic 3")
    assert q is not None
    for kwargs, keep in (
        ({"role": "user"}, lambda r: r[3] == "user"),
        (
            {"thread_id": tid, "since": 1020.0, "until": 1040.0},
            lambda r: r[5] == tid and 1020.0 <= r[4] < 1040.0,
        ),
    ):
        mask = np.array([keep(r) for r in rows])
        want = [rows[i - 1][0] for i in _exact(mat, q, 8, mask)]
        assert [c for c, _, _ in vectors.knn_chunks(store.con, q, 8, **kwargs)] == want


def test_a_dimension_without_whole_bytes_is_searched_exactly(db_path: Path) -> None:
    s = Store(db_path, embedder=FakeEmbedder(dimension=60))
    ids = [
        s.add_memory(f"memory {i} about {w}", "fact").memory.id
        for i, w in enumerate(["tea", "coffee", "deploys", "rust"])
    ]
    names = {r[0] for r in s.con.execute("SELECT name FROM sqlite_master WHERE name LIKE 'vec_%bits'")}
    assert names == set()
    q = s.embed_query("memory 2 about deploys")
    assert q is not None and vectors.knn_memories(s.con, q, 1)[0][0] == ids[2]
    assert s.check_indexes() == []
    s.close()


def _legacy_database(path: Path, emb: FakeEmbedder) -> tuple[np.ndarray, list[int]]:
    """A chat.db as the first vector layout wrote it: float vec0 tables named vec_memories/vec_chunks."""
    s = Store(path, embedder=None)
    ids = [
        s.add_memory(f"legacy memory {i} about {w}", c).memory.id
        for i, (w, c) in enumerate([("tea", "preference"), ("deploys", "project"), ("rust", "skill")])
    ]
    s.write_thread(
        ThreadIn("t", "1", "x", [MessageIn("user", "an old message about deploys", "a")]), embed=False
    )
    vecs = emb.embed_documents([m.content for m in s.list_memories()])
    with s.con:
        s.con.execute(f"""
            CREATE VIRTUAL TABLE vec_memories USING vec0(memory_id INTEGER PRIMARY KEY,
                embedding float[{DIM}] distance_metric=cosine, category TEXT, deleted INTEGER);
            CREATE VIRTUAL TABLE vec_chunks USING vec0(chunk_id INTEGER PRIMARY KEY,
                embedding float[{DIM}] distance_metric=cosine, thread_id INTEGER, role TEXT, created_at FLOAT,
                +message_id INTEGER);""")
        for m, v in zip(s.list_memories(), vecs, strict=True):
            s.con.execute("INSERT INTO vec_memories VALUES (?, ?, ?, 0)", (m.id, v.tobytes(), m.category))
        vectors.set_setting(s.con, "embedding_model", emb.name)
        vectors.set_setting(s.con, "embedding_dim", str(DIM))
    s.close()
    return vecs, ids


def test_first_layout_database_is_searched_then_converted(db_path: Path) -> None:
    emb = FakeEmbedder()
    _legacy_database(db_path, emb)
    s = Store(db_path, embedder=emb)
    q = s.embed_query("legacy memory about deploys")
    assert q is not None
    before = vectors.knn_memories(s.con, q, 3)
    assert before[0][0] == 2  # found by vec0's own float KNN: nothing converted yet
    assert "VIRTUAL" in s.scalar("SELECT sql FROM sqlite_master WHERE name = 'vec_memories'")
    s.embed_messages(s.messages_missing_vectors())  # the next vector write converts, in its transaction
    sql = dict(s.con.execute("SELECT name, sql FROM sqlite_master WHERE name LIKE 'vec_%'"))
    assert sql["vec_memories"].startswith("CREATE TABLE") and "vec_memories_bits" in sql
    after = vectors.knn_memories(s.con, q, 3)
    assert [m for m, _ in after] == [m for m, _ in before]
    assert np.allclose([x for _, x in after], [x for _, x in before], atol=1e-5)
    assert s.check_indexes() == [] and s.integrity_check() == "ok"
    s.close()


@pytest.mark.parametrize("k", [0, -1])
def test_nothing_asked_nothing_searched(store: Store, k: int) -> None:
    store.add_memory("anything", "fact")
    assert vectors.knn_memories(store.con, np.ones(DIM, np.float32), k) == []


def test_reindex_drops_every_vector_table(store: Store) -> None:
    store.add_memory("a memory", "fact")
    store.drop_vectors()
    con = db.connect(store.path)
    assert con.execute("SELECT count(*) FROM sqlite_master WHERE name LIKE 'vec_%'").fetchone()[0] == 0  # type: ignore[index]
    con.close()


def test_check_indexes_sees_bit_tables_out_of_step(store: Store) -> None:
    m = store.add_memory("a memory to lose from the bit table", "fact").memory
    assert store.check_indexes() == []
    with store.con:
        store.con.execute("DELETE FROM vec_memories_bits WHERE memory_id = ?", (m.id,))
    assert any("vec_memories_bits" in p for p in store.check_indexes())


def test_split_over_two_connections_gives_the_same_answer(store: Store) -> None:
    """Store.search hands vectors a helper that runs half of each scan on a second connection: a small
    table comes back exactly as without it, a big one as well as without it (ties in Hamming distance at
    the edge of the candidates may fall either way)."""
    rng = np.random.default_rng(5)
    vecs = _clustered(rng, 3000)
    _fill_memories(store.con, vecs, ["fact" if i % 2 else "skill" for i in range(3000)])
    helper = store.vector_helper()
    assert helper is not None
    recall = {True: [], False: []}  # type: ignore[var-annotated]
    for q in vecs[rng.integers(0, 3000, 8)]:
        for split in (True, False):
            got = [m for m, _ in vectors.knn_memories(store.con, q, 10, helper=helper if split else None)]
            recall[split].append(len(set(got) & set(_exact(vecs, q, 10))) / 10)
    assert np.mean(recall[True]) >= 0.95 and np.mean(recall[False]) >= 0.95
    with store.con:  # inside a transaction a second connection would not see its writes: no helper
        assert store.vector_helper() is None


def test_split_search_of_a_small_table_is_exact(store: Store) -> None:
    rng = np.random.default_rng(6)
    vecs = _unit(rng, 150)
    _fill_memories(store.con, vecs, ["fact" if i % 2 else "skill" for i in range(150)])
    helper = store.vector_helper()
    for q in _unit(rng, 3):
        for kw, mask in (({}, None), ({"category": "fact"}, np.arange(150) % 2 == 1)):
            got = [m for m, _ in vectors.knn_memories(store.con, q, 10, helper=helper, **kw)]  # type: ignore[arg-type]
            assert got == _exact(vecs, q, 10, mask)
