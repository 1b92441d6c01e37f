"""Vector top-10 in bench/perf/search.py: ours against the exact numpy scan, with filters, float16 rows, at scale.

Why against numpy: `X @ q` + argpartition over the generator's float32 vectors is both the exact answer
(recall@10 is scored against it) and the fastest thing a user could write by hand, so "ours / numpy" says
what the index costs over the floor, whatever the machine. Both sides run in one process, in alternating
blocks (`side_by_side` says why blocks, and why the pause after numpy's).

- `vector_series`: `store.vectors.knn_memories` / `knn_chunks` (sqlite-vec, half of each scan on the
  helper connection, as the one-shot CLI commands search) and the vectors held in process
  (store.vectors.codes, as the TUI and the MCP server search), unfiltered and with a filter (category;
  role; the last 10% of time; one thread); plus float16 against float32 re-scoring of the very same
  candidates on all four paths (bench/lib/float16.py).
- `scale_point` / `scaling`: memories-only tables of 10k / 100k / 1M rows (bench/lib/search_data.py), to see
  how the cost grows with the archive; the main database's point is reused, not measured twice.
- `scaling_only_rows`: the rows `--scaling-only` prints.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from bench.lib.common import DIM, Population, Precomputed, exact_top, timed, timing
from bench.lib.float16 import check_aligned, rescoring
from bench.lib.search_data import scale_db
from store import Store
from store.vectors import knn
from store.vectors import rows as vectors
from store.vectors.codes import EXACT_ROWS, FLOAT_ROWS, Snapshot
from store.vectors.floats import decode_rows


def load_matrix(con: Any, sql: str) -> tuple[np.ndarray, np.ndarray, list[tuple[Any, ...]]]:
    rows = con.execute(sql).fetchall()
    ids = np.array([r[0] for r in rows])
    mat = decode_rows([r[1] for r in rows], DIM)  # the float16 rows, as float32
    return ids, mat, [tuple(r[2:]) for r in rows]


def side_by_side(
    queries: np.ndarray,
    ours: Callable[[int, np.ndarray], list[int]],
    exact: Callable[[int, np.ndarray], list[int]],
    block: int = 25,
) -> dict[str, Any]:
    """Time both on every query and score ours against the exact answer.

    Alternating blocks of `block` queries (ours first, then numpy first), with a pause after each numpy
    block: numpy's BLAS threads keep spinning on the cores for a while after a call and would tax
    whatever ran right after them (measured: 19 ms instead of 11 ms for a 100k-row search), while
    short blocks keep machine noise from landing on one side only.
    """
    t_ours: list[float] = []
    t_np: list[float] = []
    got: dict[int, list[int]] = {}
    want: dict[int, list[int]] = {}
    for start in range(0, len(queries), block):
        sides = ("ours", "numpy") if (start // block) % 2 == 0 else ("numpy", "ours")
        for side in sides:
            for i in range(start, min(start + block, len(queries))):
                q = queries[i]
                if side == "ours":
                    ms, got[i] = timed(partial(ours, i, q))
                    t_ours.append(ms)
                else:
                    ms, want[i] = timed(partial(exact, i, q))
                    t_np.append(ms)
            if side == "numpy":
                time.sleep(0.2)
    recall = [len(set(got[i]) & set(want[i])) / len(want[i]) for i in want if want[i]]
    a, b = timing(t_ours), timing(t_np)
    return {
        "ours": a,
        "numpy": b,
        "ratio_p50": round(a["p50_ms"] / b["p50_ms"], 3),
        "recall_at_10": round(float(np.mean(recall)), 4),
    }


def vector_series(store: Store, mem: Population, chunks: Population, nq: int) -> dict[str, Any]:
    """Every vector series of the main database, keyed as in search.json's "vector" (the held path's
    keys end in "_in_process"), plus "float16_rescoring" (popped by the caller: it has its own key)."""
    con = store.con
    helper = store.vector_helper()  # what Store.search uses: half of each scan on a second connection
    m_ids, m_16, m_meta = load_matrix(
        con, "SELECT memory_id, embedding, category FROM vec_memories ORDER BY memory_id"
    )
    c_ids, c_16, c_meta = load_matrix(
        con, "SELECT chunk_id, embedding, role, created_at, thread_id FROM vec_chunks ORDER BY chunk_id"
    )
    m_x = check_aligned(m_ids, m_16, mem.vectors())  # the baseline scans float32, as before float16
    c_x = check_aligned(c_ids, c_16, chunks.vectors())
    del m_16, c_16
    qm, _ = mem.queries(nq, seed=1)
    qc, _ = chunks.queries(nq, seed=2)
    fact = np.array([m[0] == "fact" for m in m_meta])
    user = np.array([m[0] == "user" for m in c_meta])
    when = np.array([m[1] for m in c_meta])
    thread = np.array([m[2] for m in c_meta])
    since = float(np.quantile(when, 0.9))
    top_threads = [int(thread[exact_top(c_x, q, 1)[0]]) for q in qc]

    def ex(
        ids: np.ndarray, x: np.ndarray, mask: np.ndarray | None = None
    ) -> Callable[[int, np.ndarray], list[int]]:
        return lambda i, q: ids[exact_top(x, q, 10, mask)].tolist()

    def by_thread(i: int, q: np.ndarray) -> list[int]:
        mask = thread == top_threads[i]
        return c_ids[exact_top(c_x, q, min(10, int(mask.sum())), mask)].tolist()

    def vmem(**kw: Any) -> Callable[[int, np.ndarray], list[int]]:
        return lambda i, q: [h[0] for h in vectors.knn_memories(con, q, 10, helper=helper, **kw)]

    def vchu(**kw: Any) -> Callable[[int, np.ndarray], list[int]]:
        return lambda i, q: [h[0] for h in vectors.knn_chunks(con, q, 10, helper=helper, **kw)]

    # The in-process path (store.vectors.codes), as the TUI and the MCP server search.
    store.in_memory_vectors = True
    held_m, held_c = store.code_table("memories"), store.code_table("chunks")
    assert held_m is not None and held_c is not None
    load_ms = timed(lambda: (held_m.current(con), held_c.current(con)))[0]

    def hmem(**kw: Any) -> Callable[[int, np.ndarray], list[int]]:
        return lambda i, q: [h[0] for h in held_m.search(con, q, 10, equal={"deleted": 0, **kw}) or []]

    def hchu(**kw: Any) -> Callable[[int, np.ndarray], list[int]]:
        return lambda i, q: [h[0] for h in held_c.search(con, q, 10, **kw) or []]

    out = {
        "in_process_load_ms": round(load_ms, 1),
        "in_process_bytes": store.vector_memory_bytes(),
        "memories_in_process": side_by_side(qm, hmem(), ex(m_ids, m_x)),
        "chunks_in_process": side_by_side(qc, hchu(), ex(c_ids, c_x)),
        "memories_category_fact_in_process": side_by_side(qm, hmem(category="fact"), ex(m_ids, m_x, fact)),
        "chunks_role_user_in_process": side_by_side(qc, hchu(equal={"role": "user"}), ex(c_ids, c_x, user)),
        "chunks_last_10pct_of_time_in_process": side_by_side(
            qc, hchu(since=since), ex(c_ids, c_x, when >= since)
        ),
        "chunks_one_thread_in_process": side_by_side(
            qc,
            lambda i, q: [h[0] for h in held_c.search(con, q, 10, equal={"thread_id": top_threads[i]}) or []],
            by_thread,
        ),
    }
    held_mem, held_chu = hmem(), hchu()
    out["float16_rescoring"] = {
        "memories_in_process": rescoring(
            qm,
            m_ids,
            m_x,
            lambda q: held_m.candidates(con, q, 10, equal={"deleted": 0}),
            lambda q: held_mem(0, q),
        ),
        "chunks_in_process": rescoring(
            qc, c_ids, c_x, lambda q: held_c.candidates(con, q, 10), lambda q: held_chu(0, q)
        ),
        "memories": rescoring(
            qm,
            m_ids,
            m_x,
            lambda q: knn.candidates(con, "vec_memories", "memory_id", q, 10, [], [], helper),
            lambda q: vmem()(0, q),
        ),
        "chunks": rescoring(
            qc,
            c_ids,
            c_x,
            lambda q: knn.candidates(con, "vec_chunks", "chunk_id", q, 10, [], [], helper),
            lambda q: vchu()(0, q),
        ),
    }
    store.in_memory_vectors = False
    out |= {
        "memories": side_by_side(qm, vmem(), ex(m_ids, m_x)),
        "chunks": side_by_side(qc, vchu(), ex(c_ids, c_x)),
        "memories_category_fact": side_by_side(qm, vmem(category="fact"), ex(m_ids, m_x, fact)),
        "chunks_role_user": side_by_side(qc, vchu(role="user"), ex(c_ids, c_x, user)),
        "chunks_last_10pct_of_time": side_by_side(qc, vchu(since=since), ex(c_ids, c_x, when >= since)),
        "chunks_one_thread": side_by_side(
            qc,
            lambda i, q: [
                h[0] for h in vectors.knn_chunks(con, q, 10, thread_id=top_threads[i], helper=helper)
            ],
            by_thread,
        ),
    }
    return out


def scale_point(n: int, nq: int) -> tuple[dict[str, Any], float | None]:
    """knn_memories against numpy on a memories-only table of n rows (built once, cached)."""
    path, pop, build_s = scale_db(n)
    store = Store(path, embedder=Precomputed())
    helper = store.vector_helper()
    x = pop.vectors()
    ids = np.arange(1, n + 1)
    q, _ = pop.queries(nq, seed=1)
    r = side_by_side(
        q,
        lambda i, q: [h[0] for h in vectors.knn_memories(store.con, q, 10, helper=helper)],
        lambda i, q: ids[exact_top(x, q, 10)].tolist(),
    )
    store.in_memory_vectors = True
    held = store.code_table("memories")
    assert held is not None
    load_ms = timed(lambda: held.current(store.con))[0]
    r["in_process"] = side_by_side(
        q,
        lambda i, q: [h[0] for h in held.search(store.con, q, 10, equal={"deleted": 0}) or []],
        lambda i, q: ids[exact_top(x, q, 10)].tolist(),
    )
    r["in_process"] |= {
        "load_ms": round(load_ms, 1),
        "bytes": held.nbytes,
        "mode": held_mode(held.snapshot),
        "float16_rescoring": rescoring(
            q,
            ids,
            x,
            lambda q: held.candidates(store.con, q, 10, equal={"deleted": 0}),
            lambda q: [h[0] for h in held.search(store.con, q, 10, equal={"deleted": 0}) or []],
        ),
    }
    store.close()
    return r, build_s


def scaling(
    sizes: list[int], main: dict[str, Any], n_mem: int, nq: int, f16_main: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """One row per size: sqlite-vec and the held path against numpy; the size of the main database
    (n_mem) reuses `vector_series`' figures (`main`) instead of building and timing it again."""
    out = []
    for n in sizes:
        if n == n_mem:
            r, build_s = dict(main["memories"]), None
            r["in_process"] = {
                **main["memories_in_process"],
                "float16_rescoring": f16_main,
                "load_ms": main["in_process_load_ms"],
                "bytes": main["in_process_bytes"],
                "mode": "exact floats"
                if n <= EXACT_ROWS
                else "codes + floats"
                if n <= FLOAT_ROWS
                else "codes",
            }
        else:
            r, build_s = scale_point(n, nq)
        row = {
            "rows": n,
            "ours_p50_ms": r["ours"]["p50_ms"],
            "numpy_p50_ms": r["numpy"]["p50_ms"],
            "ratio_p50": r["ratio_p50"],
            "recall_at_10": r["recall_at_10"],
            "build_s": build_s,
        }
        if "in_process" in r:
            row["in_process"] = _held_row(r["in_process"])
        out.append(row)
    return out


def scaling_only_rows(sizes: list[int], nq: int) -> list[dict[str, Any]]:
    """`--scaling-only`: the memories-only points alone, sqlite-vec ("vec0") and held against numpy."""
    rows = []
    for n in sizes:
        r, build_s = scale_point(n, nq)
        rows.append(
            {
                "rows": n,
                "vec0": {
                    "p50_ms": r["ours"]["p50_ms"],
                    "ratio_p50": r["ratio_p50"],
                    "recall_at_10": r["recall_at_10"],
                },
                "in_process": _held_row(r["in_process"]),
                "numpy_p50_ms": r["numpy"]["p50_ms"],
                "build_s": build_s,
            }
        )
    return rows


def _held_row(ip: dict[str, Any]) -> dict[str, Any]:
    """A scaling point's held (in-process) figures, as both scaling tables print them."""
    return {
        "p50_ms": ip["ours"]["p50_ms"],
        "numpy_p50_ms": ip["numpy"]["p50_ms"],
        "ratio_p50": ip["ratio_p50"],
        "recall_at_10": ip["recall_at_10"],
        "load_ms": ip["load_ms"],
        "bytes": ip["bytes"],
        "mode": ip["mode"],
        "float16_rescoring": ip.get("float16_rescoring"),
    }


def held_mode(snap: Snapshot | None) -> str:
    """How a held table is searched (store.vectors.codes): every row from the floats, the codes' picks
    scored from the floats, or the codes' picks re-scored from chat.db."""
    if snap is None:
        return "not held"
    if snap.codes is None:
        return "exact floats"
    return "codes + floats" if snap.floats is not None else "codes"
