"""Re-scoring cost, float16 rows in numpy against float32 rows in sqlite-vec, on the same candidates.

    .venv/bin/python bench/rescore_cost.py [--queries 60]

Needs bench/search.py's cached 100k/200k chat.db. Copies its 200k chunk vectors into a float32 table in
a temporary file (what schema version 6 stored), then for each query takes the ids the sqlite-vec path
re-scores (store.vectors.knn.candidates) and times, in alternating order, the old re-scoring (float32
rows, `vec_distance_cosine` inside SQLite) and the current one (float16 rows decoded and scored in
numpy, store.vectors.knn.rescore): CPU ms per query (median), and whether both return the same top 10.
Not part of `make bench` (the copy writes 300 MB).
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import apsw
import numpy as np
from _common import DATA

from store import db
from store.db import json_ids
from store.vectors import knn
from store.vectors.floats import decode_rows


def _float32_copy(con: apsw.Connection, path: Path) -> apsw.Connection:
    out = apsw.Connection(str(path))
    out.enable_load_extension(True)
    out.load_extension(db.vec0_path())
    with out:
        out.execute(
            "CREATE TABLE vec_chunks(chunk_id INTEGER PRIMARY KEY, embedding BLOB NOT NULL, "
            "message_id INTEGER NOT NULL)"
        )
        rows = iter(con.execute("SELECT chunk_id, embedding, message_id FROM vec_chunks ORDER BY chunk_id"))
        while batch := list(itertools.islice(rows, 20_000)):
            dim = len(batch[0][1]) // 2
            m = decode_rows([r[1] for r in batch], dim)
            out.executemany(
                "INSERT INTO vec_chunks VALUES (?, ?, ?)",
                ((r[0], m[i].tobytes(), r[2]) for i, r in enumerate(batch)),
            )
    return out


def _old(con: apsw.Connection, ids: list[int], q: np.ndarray) -> list[int]:
    rows: list[Any] = con.execute(
        "SELECT chunk_id, message_id, vec_distance_cosine(embedding, ?) FROM vec_chunks "
        "WHERE chunk_id IN (SELECT value FROM json_each(?))",
        (q.tobytes(), json_ids(ids)),
    ).fetchall()
    rows.sort(key=lambda r: (r[2], r[0]))
    return [int(r[0]) for r in rows[:10]]


def _new(con: apsw.Connection, ids: list[int], q: np.ndarray) -> list[int]:
    return [h[0] for h in knn.rescore(con, "vec_chunks", "chunk_id", "message_id", q, ids, 10)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--queries", type=int, default=60)
    a = ap.parse_args()
    src = sorted(DATA.glob("search-100000-200000-*.db"))[0]
    con = db.connect(src)
    with tempfile.TemporaryDirectory() as tmp:
        f32 = _float32_copy(con, Path(tmp) / "float32.db")
        rng = np.random.default_rng(3)
        dim = len(con.execute("SELECT embedding FROM vec_chunks LIMIT 1").fetchall()[0][0]) // 2  # type: ignore[arg-type]
        queries = rng.standard_normal((a.queries, dim)).astype(np.float32)
        queries /= np.linalg.norm(queries, axis=1, keepdims=True)
        t: dict[str, list[float]] = {"float32_sqlite_vec": [], "float16_numpy": []}
        same = 0
        n = 0
        for i, q in enumerate(queries):
            ids = knn.candidates(con, "vec_chunks", "chunk_id", q, 10, [], [])
            n = len(ids)
            sides = [("float32_sqlite_vec", f32, _old), ("float16_numpy", con, _new)]
            got = {}
            for name, c, fn in sides if i % 2 else sides[::-1]:
                t0 = time.process_time()
                got[name] = fn(c, ids, q)
                t[name].append((time.process_time() - t0) * 1000)
            same += got["float32_sqlite_vec"] == got["float16_numpy"]
        f32.close()
    con.close()
    print(
        json.dumps(
            {
                "candidates": n,
                **{f"{k}_cpu_ms_p50": round(statistics.median(v), 3) for k, v in t.items()},
                **{f"{k}_cpu_ms_min_max": [round(min(v), 3), round(max(v), 3)] for k, v in t.items()},
                "identical_top10": round(same / len(queries), 3),
            }
        )
    )


if __name__ == "__main__":
    main()
