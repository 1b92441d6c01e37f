"""The float16 re-scoring rows (store.vectors.floats, migration 7): the round trip keeps a vector to
float16 precision, search returns the same order as float32 re-scoring wherever scores do not nearly
tie, and a schema-v6 chat.db with float32 vectors (tests/fixtures/chat-v6-vectors.db, written by the v6
code) is converted by opening it, keeping every vector, every search answer and every write path."""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path

import apsw
import numpy as np
import pytest
import sqlite_vec

from embeddings import FakeEmbedder
from store import Store
from store.export import write_export
from store.migrations import LATEST
from store.vectors import codes
from store.vectors import rows as vectors
from store.vectors.floats import F16, cosines, decode, decode_rows, encode, widen

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "chat-v6-vectors.db"
DIM = 64


def _raw(path: Path, sql: str) -> list[tuple]:
    """Rows read straight from the file (no migration)."""
    con = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    con.enable_load_extension(True)
    con.load_extension(sqlite_vec.loadable_path())
    rows = [tuple(r) for r in con.execute(sql)]
    con.close()
    return rows


def test_round_trip_keeps_float16_precision() -> None:
    rng = np.random.default_rng(0)
    for dim in (64, 384, 60):
        v = rng.standard_normal(dim).astype(np.float32)
        v /= np.linalg.norm(v)
        blob = encode(v)
        assert len(blob) == 2 * dim
        back = decode(blob)
        assert back.dtype == np.float32 and back.shape == (dim,)
        assert np.array_equal(back, v.astype(np.float16).astype(np.float32))  # exactly float16's rounding
        assert np.max(np.abs(back - v)) <= 2.0**-11 * np.max(np.abs(v))
        assert float(back @ v / np.linalg.norm(back)) > 0.99999
    assert encode(np.zeros(4)) == bytes(8) and np.dtype(F16).itemsize == 2


def test_widen_gives_numpys_float32_for_every_float16() -> None:
    """decode_rows widens float16 by moving bits (store.vectors.floats.widen): every one of the 65,536
    float16 bit patterns (subnormals, both zeros, infinities, NaNs) gives numpy's float32 bit for bit,
    in any shape."""
    every = np.arange(2**16, dtype=np.uint32).astype(np.uint16).view(F16)
    assert widen(every).view(np.uint32).tolist() == every.astype(np.float32).view(np.uint32).tolist()
    rows = every[:6144].reshape(16, 384)
    assert widen(rows).shape == (16, 384)
    assert np.array_equal(widen(rows).view(np.uint32), rows.astype(np.float32).view(np.uint32))
    assert widen(every[[1, 0x8001, 0x3C00]]).tolist() == [2.0**-24, -(2.0**-24), 1.0]


def test_stored_rows_round_trip_through_the_store(store: Store) -> None:
    m = store.add_memory("I keep my backups in two restic repositories", "fact").memory
    want = store.embed_query("I keep my backups in two restic repositories")
    got = store.vectors.vector("memories", m.id)
    assert want is not None and got is not None
    assert np.array_equal(got, want.astype(np.float16).astype(np.float32))
    assert store.vectors.vector("memories", 10_000) is None


def _separated(rng: np.random.Generator, q: np.ndarray, sims: np.ndarray) -> np.ndarray:
    """Unit vectors whose cosine to q is exactly `sims` (each: sims*q + a random orthogonal part)."""
    noise = rng.standard_normal((len(sims), len(q))).astype(np.float32)
    noise -= np.outer(noise @ q, q)
    noise /= np.linalg.norm(noise, axis=1, keepdims=True)
    return (sims[:, None] * q + np.sqrt(1 - sims[:, None] ** 2) * noise).astype(np.float32)


@pytest.mark.parametrize("mode", ["sqlite", "held-exact", "held-floats", "held-codes"])
def test_order_is_float32_rescoring_order_when_scores_do_not_tie(
    store: Store, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    """300 memories whose cosines to the query are 0.006 apart (float16 moves a unit vector's cosine by
    at most ~5e-4): every search path returns exactly the float32 order, to the last of 300."""
    rng = np.random.default_rng(7)
    q = rng.standard_normal(DIM).astype(np.float32)
    q /= np.linalg.norm(q)
    sims = 0.95 - 0.006 * rng.permutation(300)
    vecs = _separated(rng, q, sims)
    with store.con:
        store.vectors.ensure_tables("fake-hash-embedder", DIM)
        for i, v in enumerate(vecs, start=1):
            store.vectors.put_memory(i, v, "fact", False)
    float32_order = (np.argsort(-(vecs @ q), kind="stable") + 1).tolist()
    if mode == "sqlite":
        hits = vectors.knn_memories(store.con, q, 300)
        k = 300
    else:
        monkeypatch.setattr(codes, "EXACT_ROWS", 10_000 if mode == "held-exact" else 0)
        monkeypatch.setattr(codes, "FLOAT_ROWS", 10_000 if mode == "held-floats" else 0)
        table = codes.CodeTable(codes.MEMORIES, DIM)
        k = 300 if mode == "held-exact" else 10  # the codes pick only the best candidates
        found = table.search(store.con, q, k, equal={"deleted": 0})
        assert found is not None
        hits = [(i, s) for i, _, s in found]
    assert [i for i, _ in hits] == float32_order[:k]
    assert np.allclose([s for _, s in hits], np.sort(sims)[::-1][:k], atol=1e-3)


def _fixture_vectors(path: Path) -> tuple[dict[int, np.ndarray], dict[int, np.ndarray]]:
    mems = {
        int(i): np.frombuffer(b, np.float32)
        for i, b in _raw(path, "SELECT memory_id, embedding FROM vec_memories")
    }
    chunks = {
        int(i): np.frombuffer(b, np.float32)
        for i, b in _raw(path, "SELECT chunk_id, embedding FROM vec_chunks")
    }
    return mems, chunks


def test_v6_database_with_vectors_upgrades_to_float16(tmp_path: Path) -> None:
    db = tmp_path / "chat.db"
    shutil.copy(FIXTURE, db)
    assert _raw(db, "PRAGMA user_version") == [(6,)]
    mems, chunks = _fixture_vectors(db)
    assert len(mems) == 12 and len(chunks) > 27 and all(len(v) == DIM for v in mems.values())
    emb = FakeEmbedder()
    query = emb.embed_query("restic backups")
    mat32 = np.stack(list(mems.values()))
    active = {i for (i,) in _raw(db, "SELECT memory_id FROM vec_memories WHERE deleted = 0")}
    s = Store(db, embedder=emb)
    assert s.schema_version() == LATEST  # every migration, 7 (float16) among them
    assert s.scalar("SELECT count(*) FROM schema_migrations WHERE version = 7") == 1
    # Every vector kept, at float16 precision, under the same id, with its filter columns.
    for table, pk, want in (("vec_memories", "memory_id", mems), ("vec_chunks", "chunk_id", chunks)):
        got = {int(i): b for i, b in s.con.execute(f"SELECT {pk}, embedding FROM {table}")}
        assert got.keys() == want.keys()
        for i, b in got.items():
            assert len(b) == 2 * DIM and np.array_equal(
                decode(b), want[i].astype(np.float16).astype(np.float32)
            )
    assert s.scalar("SELECT count(*) FROM vec_memories WHERE deleted = 1") == 1
    assert s.check_indexes() == [] and s.integrity_check() == "ok"
    # Search answers as float32 re-scoring did (the fixture's scores do not tie within 1e-3).
    ids = list(mems)
    exact = [ids[j] for j in np.argsort(-(mat32 @ query), kind="stable") if ids[j] in active]
    assert [m for m, _ in s.vectors.knn_memories(query, 5)] == exact[:5]
    s.in_memory_vectors = True
    held = s.code_table("memories")
    assert held is not None
    found = held.search(s.con, query, 5, equal={"deleted": 0})
    assert found is not None and [i for i, _, _ in found] == exact[:5]
    # Writes after the upgrade: a new memory, a re-chunked thread; exports still carry float32.
    new = s.add_memory("a memory written after the upgrade", "fact").memory
    assert len(s.scalar("SELECT embedding FROM vec_memories WHERE memory_id = ?", (new.id,))) == 2 * DIM
    s.embed_messages(s.messages_missing_vectors())
    out = tmp_path / "export.json"
    with out.open("w") as fh:
        write_export(s, fh, include_embeddings=True)
    exported = json.loads(out.read_text())["embeddings"]
    vec = np.frombuffer(base64.b64decode(exported["memories"][str(ids[0])]), np.float32)
    assert np.array_equal(vec, mems[ids[0]].astype(np.float16).astype(np.float32))
    assert s.check_indexes() == []
    s.close()


def test_first_layout_at_v6_is_converted_by_the_migration(tmp_path: Path) -> None:
    """A v6 file still holding the first layout (float vec0 tables): migration 7 makes float16 plain
    tables and their bit tables, searched like any other."""
    db = tmp_path / "chat.db"
    shutil.copy(FIXTURE, db)
    mems, _ = _fixture_vectors(db)
    deleted = {i for (i,) in _raw(db, "SELECT memory_id FROM vec_memories WHERE deleted = 1")}
    con = apsw.Connection(str(db))
    con.enable_load_extension(True)
    con.load_extension(sqlite_vec.loadable_path())
    with con:
        con.execute("DROP TABLE vec_memories_bits; DROP TABLE vec_chunks_bits; DROP TABLE vec_memories")
        con.execute(
            f"CREATE VIRTUAL TABLE vec_memories USING vec0(memory_id INTEGER PRIMARY KEY, "
            f"embedding float[{DIM}] distance_metric=cosine, category TEXT, deleted INTEGER)"
        )
        for i, v in mems.items():
            con.execute(
                "INSERT INTO vec_memories VALUES (?, ?, 'fact', ?)", (i, v.tobytes(), int(i in deleted))
            )
    con.close()
    emb = FakeEmbedder()
    s = Store(db, embedder=emb)
    sql = dict(s.con.execute("SELECT name, sql FROM sqlite_master WHERE name LIKE 'vec_%'"))
    assert (
        sql["vec_memories"].startswith("CREATE TABLE")
        and {"vec_memories_bits", "vec_chunks_bits"} <= sql.keys()
    )
    got = {int(i): decode(b) for i, b in s.con.execute("SELECT memory_id, embedding FROM vec_memories")}
    assert all(np.array_equal(got[i], v.astype(np.float16).astype(np.float32)) for i, v in mems.items())
    q = emb.embed_query("restic backups")
    ids = [i for i in mems if i not in deleted]
    mat = decode_rows([encode(mems[i]) for i in ids], DIM)
    want = [ids[j] for j in np.argsort(-cosines(mat, q), kind="stable")[:3]]
    assert [m for m, _ in s.vectors.knn_memories(q, 3)] == want
    assert s.check_indexes() == [] and s.integrity_check() == "ok"
    s.close()


def test_check_finds_a_row_that_is_not_float16(store: Store) -> None:
    m = store.add_memory("a memory whose row gets the old encoding", "fact").memory
    assert store.check_indexes() == []
    with store.con:
        store.con.execute(
            "UPDATE vec_memories SET embedding = ? WHERE memory_id = ?",
            (np.ones(DIM, np.float32).tobytes(), m.id),
        )
    assert any("not float16 vectors of 64 dimensions" in p for p in store.check_indexes())
