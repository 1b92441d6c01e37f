"""In-process vector search (store.vectors.codes): the same answers as the exact scan, filters applied,
and kept in step with writes by this Store and by another process's."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from embeddings import FakeEmbedder
from store import Store
from store.records import CATEGORIES
from store.search.engine import Filters
from store.vectors import codes
from store.vectors.floats import cosines, decode_rows

WORDS = [
    "backup",
    "script",
    "nightly",
    "cron",
    "postgres",
    "sqlite",
    "vector",
    "search",
    "index",
    "memory",
    "thread",
    "summary",
    "python",
    "rust",
    "garden",
    "tomato",
    "recipe",
    "bread",
    "oven",
    "travel",
    "train",
    "ticket",
    "budget",
    "invoice",
    "music",
    "guitar",
    "chord",
    "running",
    "shoes",
]


def texts(n: int, seed: int = 1) -> list[str]:
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS, size=6)) + f" item{i}" for i in range(n)]


@pytest.fixture
def held(db_path: Path) -> Iterator[Store]:
    s = Store(db_path, embedder=FakeEmbedder())
    for i, t in enumerate(texts(400)):
        s.add_memory(t, CATEGORIES[i % 4], force=True)
    s.in_memory_vectors = True
    yield s
    s.close()


def exact_scores(store: Store, q: np.ndarray, k: int, category: str | None = None) -> list[float]:
    """The k best cosines by the exact scan (ids can tie: the hashing embedder repeats scores)."""
    sql = (
        "SELECT v.embedding FROM vec_memories v JOIN long_term_memories m ON m.id = v.memory_id "
        "WHERE m.deleted_at IS NULL" + (" AND v.category = ?" if category else "")
    )
    x = decode_rows([r[0] for r in store.con.execute(sql, (category,) if category else ())], len(q))  # type: ignore[misc]
    return sorted(cosines(x, q).tolist(), reverse=True)[:k]


def scores(store: Store, q: np.ndarray, k: int = 10, category: str | None = None) -> list[float]:
    return [sim for _, sim, _ in store.semantic_candidates(q, ("memory",), Filters(category=category), k)]


def exact(store: Store, q: np.ndarray, k: int, category: str | None = None) -> list[int]:
    sql = (
        "SELECT v.memory_id, v.embedding FROM vec_memories v JOIN long_term_memories m ON m.id = v.memory_id "
        "WHERE m.deleted_at IS NULL" + (" AND v.category = ?" if category else "")
    )
    rows = store.con.execute(sql, (category,) if category else ()).fetchall()
    ids = np.array([r[0] for r in rows])
    x = decode_rows([r[1] for r in rows], len(q))  # type: ignore[misc]
    return ids[np.argsort(-cosines(x, q), kind="stable")[:k]].tolist()


def memory_hits(store: Store, q: np.ndarray, k: int = 10, category: str | None = None) -> list[int]:
    return [
        int(key[1]) for key, _, _ in store.semantic_candidates(q, ("memory",), Filters(category=category), k)
    ]


# The three ways a held table is searched (store.vectors.codes): every row scored from the held floats;
# the codes pick rows scored from the held floats; the codes pick rows re-scored from chat.db.
MODES = {"exact": (10_000, 0), "floats": (0, 10_000), "codes": (0, 0)}  # (EXACT_ROWS, FLOAT_ROWS)


def use_mode(monkeypatch: pytest.MonkeyPatch, mode: str) -> None:
    exact_rows, float_rows = MODES[mode]
    monkeypatch.setattr(codes, "EXACT_ROWS", exact_rows)
    monkeypatch.setattr(codes, "FLOAT_ROWS", float_rows)


@pytest.mark.parametrize("mode", list(MODES))
def test_held_search_matches_the_exact_scan(held: Store, monkeypatch: pytest.MonkeyPatch, mode: str) -> None:
    use_mode(monkeypatch, mode)
    monkeypatch.setattr(codes, "MIN_CANDIDATES", 400)  # every row re-scored: the answer must be exact
    emb = held.embedder
    assert emb is not None
    for query in ("nightly backup script", "tomato bread oven", "guitar chord music", "item17"):
        q = emb.embed_query(query)
        np.testing.assert_allclose(scores(held, q), exact_scores(held, q, 10), atol=1e-5)
        np.testing.assert_allclose(
            scores(held, q, category="skill"), exact_scores(held, q, 10, "skill"), atol=1e-5
        )
        hits = memory_hits(held, q, category="skill")
        assert all(held.get_memory(i).category == "skill" for i in hits)
    table = held.code_table("memories")
    assert table is not None and table.loads == 1 and table.nbytes > 0
    snap = table.snapshot
    assert snap is not None
    assert (snap.floats is not None, snap.codes is not None) == {
        "exact": (True, False),
        "floats": (True, True),
        "codes": (False, True),
    }[mode]


@pytest.mark.parametrize("mode", ["floats", "codes"])
def test_codes_give_high_recall_with_few_candidates(
    held: Store, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    use_mode(monkeypatch, mode)
    monkeypatch.setattr(codes, "MIN_CANDIDATES", 64)  # floats: 2 x 64 of 400 rows scored; codes: 64
    emb = held.embedder
    assert emb is not None
    found = total = 0
    for query in texts(30, seed=9):
        q = emb.embed_query(query)
        found += len(set(memory_hits(held, q)) & set(exact(held, q, 10)))
        total += 10
    assert found / total >= 0.9  # (64-bit codes of a hashing embedder)


@pytest.mark.parametrize("mode", list(MODES))
def test_held_copy_follows_writes_here_and_elsewhere(
    held: Store, db_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    use_mode(monkeypatch, mode)
    emb = held.embedder
    assert emb is not None
    q = emb.embed_query("zebra quartz xylophone")
    assert memory_hits(held, q)  # loads the copy
    table = held.code_table("memories")
    assert table is not None and table.loads == 1
    added = held.add_memory("zebra quartz xylophone", "fact", force=True).memory
    assert memory_hits(held, q)[0] == added.id
    assert table.loads == 1  # an append: only the new row was read
    held.delete_memory(added.id)  # trash: a change, not an append
    assert added.id not in memory_hits(held, q, k=50)
    assert table.loads == 2
    held.restore_memory(added.id)
    assert memory_hits(held, q)[0] == added.id
    with Store(db_path, embedder=FakeEmbedder()) as other:  # another writer (another process alike)
        other_id = other.add_memory("zebra quartz xylophone!", "fact", force=True).memory.id
        other.edit_memory(added.id, category="skill")
    assert set(memory_hits(held, q)[:2]) == {added.id, other_id}
    assert memory_hits(held, q, category="skill")[0] == added.id
    assert memory_hits(held, q, category="fact")[0] == other_id


@pytest.mark.parametrize("mode", list(MODES))
def test_chunks_filters_in_process(db_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str) -> None:
    use_mode(monkeypatch, mode)
    from store import ThreadIn
    from store.records import MessageIn

    with Store(db_path, embedder=FakeEmbedder()) as s:
        for t in range(6):
            msgs = [
                MessageIn("user" if i % 2 == 0 else "assistant", text, f"m{i}", 1000.0 * t + i)
                for i, text in enumerate(texts(10, seed=t))
            ]
            s.write_thread(ThreadIn("jsonl", f"t{t}", f"thread {t}", msgs, created_at=1000.0 * t))
        emb = s.embedder
        assert emb is not None
        q = emb.embed_query("backup script nightly")
        f = Filters(role="assistant", since=2000.0, until=5000.0)
        off = s.semantic_candidates(q, ("message",), f, 10)
        s.in_memory_vectors = True
        on = s.semantic_candidates(q, ("message",), f, 10)
        assert [k for k, _, _ in on] == [k for k, _, _ in off] and on
        ids = [k[1] for k, _, _ in on]
        rows = [
            (str(r), float(c))  # type: ignore[arg-type]
            for r, c in s.con.execute(
                "SELECT role, created_at FROM messages WHERE id IN (SELECT value FROM json_each(?))",
                (str(ids),),
            )
        ]
        assert rows and all(r == "assistant" and 2000.0 <= c < 5000.0 for r, c in rows)
        one = s.list_threads(limit=10)[0]
        hits = s.semantic_candidates(q, ("message",), Filters(thread_id=one.id), 50)
        assert len(hits) == 10 and all(
            s.scalar("SELECT thread_id FROM messages WHERE id = ?", (k[1],)) == one.id for k, _, _ in hits
        )


def test_too_big_to_hold_falls_back_to_vec0(held: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(codes, "MAX_BYTES", 1000)
    emb = held.embedder
    assert emb is not None
    q = emb.embed_query("nightly backup script")
    table = held.code_table("memories")
    assert table is not None
    table.max_bytes = 1000
    hits = memory_hits(held, q)
    assert hits and table.too_big and table.nbytes == 0
    assert held.code_table("memories") is None  # vec0 from now on
    held.in_memory_vectors = False
    assert memory_hits(held, q) == hits


@pytest.mark.parametrize("dtype", [np.uint16, np.uint64])  # uint16: what the Hamming scan gives
def test_nearest_rows_by_counting_are_the_smallest_distances_lowest_index_first(dtype: type) -> None:
    rng = np.random.default_rng(3)
    for n, m in [(1, 1), (50, 7), (1000, 100), (1000, 999), (5000, 256)]:
        dist: np.ndarray = rng.integers(0, 40, n).astype(dtype)  # many ties
        dist[rng.random(n) < 0.1] = 64 * 6 + 1  # rows a filter dropped
        want = np.sort(np.argsort(dist, kind="stable")[:m])  # the m smallest, ties by index
        assert np.array_equal(codes.nearest(dist, m), want)


@pytest.mark.parametrize("float_rows", [codes.FLOAT_ROWS, 0])  # the small tables' way, and the loop's
def test_hamming_and_the_asymmetric_score_equal_their_definitions(
    float_rows: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bit for bit against np.unpackbits, the all-bits-differ distance (384: more than a byte holds)
    included; the asymmetric score is q . sign(x) over the row's 384 dimensions."""
    monkeypatch.setattr(codes, "FLOAT_ROWS", float_rows)
    rng = np.random.default_rng(4)
    dim, n = 384, 300
    x = rng.standard_normal((n, dim)).astype(np.float32)
    q = rng.standard_normal(dim).astype(np.float32)
    x[0] = -q  # every sign differs from the query's
    packed = np.packbits(x > 0, axis=1, bitorder="little")  # as the held codes are made
    word_major = np.ascontiguousarray(packed.view(np.uint64).T)
    dist = codes.hamming(word_major, codes.query_code(q, word_major.shape[0]))
    want = ((x > 0) != (q > 0)).sum(axis=1)
    assert dist.tolist() == want.tolist() and int(dist[0]) == dim
    score = codes.asymmetric(q, np.ascontiguousarray(word_major.T))
    np.testing.assert_allclose(score, np.where(x > 0, 1.0, -1.0) @ q, rtol=1e-5, atol=1e-4)
