"""Vector and hybrid search at scale, side by side with the exact numpy scan; prints JSON.

    .venv/bin/python bench/search.py [--quick | --full] [--queries 200] [--cpu] [--hybrid-only]

Builds (once, cached in bench/.data/) a chat.db with 100,000 memories and 200,000 message chunks (about
143,000 messages in 10,000 threads, a summary each) through the store's own write paths, with synthetic
384-d vectors and text (bench/_common.py says why they behave like real ones). Then, in one process:

- vector top-10 per table: `store.vectors.knn_memories` / `knn_chunks` against `X @ q` + argpartition
  over the generator's float32 vectors (checked to be the rows the database holds as float16): p50/p95,
  and recall@10 against the exact answer; also with a filter (category; role; date range; one thread).
  Timed in alternating blocks. Then float16 against float32 re-scoring of the same candidates, and the
  bytes per 1,000 messages (bench/_float16.py; "before" too when the cached file predates float16).
- hybrid: `Store.search(text, query_vector=q)` (FTS + vectors + fusion + hydration + the access-count
  update) against vector-only `semantic_candidates(q, n=10)` and keyword-only `keyword_candidates`, all
  without embedding the query, each on the wall clock and in CPU seconds of the process (`--hybrid-only`
  runs just this, vectors held and through sqlite-vec); the query embedding is timed on its own with the
  real model.
- scaling: memory tables of 10k and 100k rows (and 1M with --full: 0.9 GB on disk with float16 rows,
  1.5 GB of RAM for the numpy side, about 95 s to build).

Targets (issue 7): vector p50 <= 1.5x numpy with recall@10 >= 0.95; hybrid p50 <= 2x vector-only p50.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from _common import (
    DATA_VERSION,
    DIM,
    MODEL_NAME,
    Population,
    Precomputed,
    Words,
    World,
    data_file,
    emit,
    exact_top,
    layout_key,
    lengths,
    remove_db,
    timed,
    timing,
)
from _float16 import check_aligned, footprint, footprint_before_upgrade, rescoring

from store import Store, db
from store.migrations import LATEST
from store.records import CATEGORIES, MessageIn, ThreadIn
from store.search.engine import DEPTH, Filters
from store.text import fts_put
from store.threads import PreparedChunks
from store.vectors import knn
from store.vectors import rows as vectors
from store.vectors.floats import decode_rows

BUILD = 1  # bump when the data below changes shape
PREFIX = {"preference": "I prefer", "project": "I am working on", "skill": "I know how to", "fact": "Note:"}


# -- building ------------------------------------------------------------------------------------------


def populations(n_mem: int, n_chunks: int, seed: int = 7) -> tuple[Population, Population]:
    world = World(n_mem + n_chunks, seed)
    return Population(world, n_mem, seed + 1), Population(world, n_chunks, seed + 2)


def build(path: Path, mem: Population, chunks: Population, seed: int = 7) -> float:
    """Write the threads (with chunk vectors and a summary each) and the memories; seconds taken."""
    t0 = time.perf_counter()
    tmp = path.with_suffix(".building")
    remove_db(tmp)
    emb = Precomputed()
    store = Store(tmp, embedder=emb)
    words = Words()
    rng = np.random.default_rng(seed)
    x = chunks.vectors()
    cuts = [0, *(np.flatnonzero(np.diff(chunks.threads)) + 1).tolist(), chunks.n]
    base = 1.6e9
    for a, b in zip(cuts[:-1], cuts[1:], strict=True):
        h = int(chunks.threads[a])
        start = base + float(rng.random()) * 3 * 365 * 86400
        messages, spans, i = [], [], a
        while i < b:
            c = min(b - i, int(rng.choice([1, 2, 3], p=[0.7, 0.2, 0.1])))
            pieces = [words.about(chunks, h, rng, int(n)) for n in lengths(rng, c, 60, 0.5, 8, 180)]
            cuts_in, pos = [], 0
            for p in pieces:
                cuts_in.append((pos, pos + len(p)))
                pos += len(p) + 1
            seq = len(messages)
            messages.append(
                MessageIn(
                    "user" if seq % 2 == 0 else "assistant", " ".join(pieces), f"m{i}", start + 90 * seq
                )
            )
            spans.append(cuts_in)
            i += c
        title = " ".join(words.about(chunks, h, rng, 5).rstrip(".").split()[:5])
        res = store.write_thread(
            ThreadIn("bench", f"t{h}", title, messages, created_at=start),
            prepared=PreparedChunks(spans, x[a:b]),
        )
        summary = words.about(chunks, h, rng, 120)
        with store.con:
            store.con.execute(
                "INSERT INTO thread_summaries(thread_id, content, last_message_seq, token_count, created_at, "
                "updated_at) VALUES (?, ?, ?, ?, ?, ?)",
                (res.thread_id, summary, len(messages) - 1, store.tokens.count(summary), start, start),
            )
            fts_put(store.con, "fts_summaries", res.thread_id, summary)
    del x
    y = mem.vectors()
    for j in range(mem.n):
        category = CATEGORIES[int(rng.integers(len(CATEGORIES)))]
        text = f"{PREFIX[category]} " + words.about(mem, int(mem.threads[j]), rng, int(rng.integers(8, 30)))
        emb.table = {text: y[j]}
        store.add_memory(text, category, importance=int(rng.integers(1, 11)), force=True)
    store.close()
    os.replace(tmp, path)
    return time.perf_counter() - t0


def build_memories_only(path: Path, pop: Population) -> float:
    """A database with only the memory vector tables, for the scaling series (knn_memories needs no more)."""
    t0 = time.perf_counter()
    tmp = path.with_suffix(".building")
    remove_db(tmp)
    con = db.connect(tmp)
    with con:
        vectors.ensure_tables(con, MODEL_NAME, DIM)
        for b in range((pop.n + 49_999) // 50_000):
            for j, v in enumerate(pop.block(b), start=b * 50_000):
                vectors.put_memory(con, j + 1, v, CATEGORIES[j % 4], False)
    con.close()
    os.replace(tmp, path)
    return time.perf_counter() - t0


# -- measuring -----------------------------------------------------------------------------------------


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

    def mem(**kw: Any) -> Callable[[int, np.ndarray], list[int]]:
        return lambda i, q: [h[0] for h in vectors.knn_memories(con, q, 10, helper=helper, **kw)]

    def chu(**kw: Any) -> Callable[[int, np.ndarray], list[int]]:
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
            lambda q: mem()(0, q),
        ),
        "chunks": rescoring(
            qc,
            c_ids,
            c_x,
            lambda q: knn.candidates(con, "vec_chunks", "chunk_id", q, 10, [], [], helper),
            lambda q: chu()(0, q),
        ),
    }
    store.in_memory_vectors = False
    out |= {
        "memories": side_by_side(qm, mem(), ex(m_ids, m_x)),
        "chunks": side_by_side(qc, chu(), ex(c_ids, c_x)),
        "memories_category_fact": side_by_side(qm, mem(category="fact"), ex(m_ids, m_x, fact)),
        "chunks_role_user": side_by_side(qc, chu(role="user"), ex(c_ids, c_x, user)),
        "chunks_last_10pct_of_time": side_by_side(qc, chu(since=since), ex(c_ids, c_x, when >= since)),
        "chunks_one_thread": side_by_side(
            qc,
            lambda i, q: [
                h[0] for h in vectors.knn_chunks(con, q, 10, thread_id=top_threads[i], helper=helper)
            ],
            by_thread,
        ),
    }
    return out


def hybrid_series(store: Store, chunks: Population, nq: int, in_process: bool = False) -> dict[str, Any]:
    """Hybrid `Store.search` against vector-only and keyword-only, query by query in alternating order.

    Each is timed on both clocks: wall (the keyword half runs on a second thread beside the vectors, so
    it hides there on an idle machine) and CPU seconds of the whole process (every thread: what a search
    costs a busy machine, and steady under load). Issue 19's target is on CPU.
    """
    store.in_memory_vectors = in_process
    words = Words()
    rng = np.random.default_rng(5)
    qc, threads = chunks.queries(nq, seed=3)
    texts = [words.query(chunks, int(h), rng) for h in threads]
    out: dict[str, Any] = {}

    def both(fn: Callable[[], Any]) -> tuple[float, float, Any]:
        w0, c0 = time.perf_counter(), time.process_time()
        res = fn()
        return (time.perf_counter() - w0) * 1000, (time.process_time() - c0) * 1000, res

    for label, filters, kinds in (
        ("all", Filters(), ("message", "memory")),
        ("role_user", Filters(role="user"), ("message",)),
    ):
        wall: dict[str, list[float]] = {"hybrid": [], "vector_only": [], "keyword_only": []}
        cpu: dict[str, list[float]] = {"hybrid": [], "vector_only": [], "keyword_only": []}
        modes = set()
        for i, q in enumerate(qc):
            runs = {
                "hybrid": partial(store.search, texts[i], query_vector=q, k=10, filters=filters),
                "vector_only": partial(store.semantic_candidates, q, kinds, filters, 10),
                "keyword_only": partial(
                    store.keyword_candidates, texts[i], filters.kinds("all"), filters, DEPTH
                ),
            }
            order = list(runs) if i % 2 == 0 else list(reversed(runs))
            for name in order:
                w, c, res = both(runs[name])
                wall[name].append(w)
                cpu[name].append(c)
                if name == "hybrid":
                    modes.add(res.mode)
        h, v = timing(wall["hybrid"]), timing(wall["vector_only"])
        hc, vc = timing(cpu["hybrid"]), timing(cpu["vector_only"])
        out[label] = {
            "hybrid": h,
            "vector_only": v,
            "ratio_p50": round(h["p50_ms"] / v["p50_ms"], 3),
            "keyword_only": timing(wall["keyword_only"]),
            "cpu": {
                "hybrid": hc,
                "vector_only": vc,
                "keyword_only": timing(cpu["keyword_only"]),
                "ratio_p50": round(hc["p50_ms"] / vc["p50_ms"], 3) if vc["p50_ms"] else None,
            },
            "modes": sorted(modes),
        }
    out["example_query"] = texts[0]
    store.in_memory_vectors = False
    return out


def hybrid_only(
    store: Store, chunks: Population, nq: int, rows: tuple[int, int], load: tuple[float, float, float]
) -> None:
    """`--hybrid-only`: the hybrid series alone, vectors held in process (TUI, MCP) and through
    sqlite-vec (one-shot commands); a minute or two once the data is cached."""
    held = hybrid_series(store, chunks, nq, in_process=True)
    vec0 = hybrid_series(store, chunks, nq)
    store.close()

    def line(h: dict[str, Any]) -> str:
        c = h["all"]["cpu"]
        return (
            f"{c['hybrid']['p50_ms']:.1f} ms (p95 {c['hybrid']['p95_ms']:.1f}) = {c['ratio_p50']:.2f}x "
            f"vector-only {c['vector_only']['p50_ms']:.1f} ms, keyword-only {c['keyword_only']['p50_ms']:.1f} ms"
        )

    emit(
        "search_hybrid",
        {
            "rows": {"memories": rows[0], "chunks": rows[1]},
            "queries": nq,
            "hybrid_in_process": held,
            "hybrid_sqlite_vec": vec0,
            "load_average_1_5_15": [round(x, 2) for x in load],
        },
        f"hybrid, {rows[0] // 1000}k memories + {rows[1] // 1000}k chunks, CPU p50: vectors held "
        f"{line(held)}; sqlite-vec {line(vec0)}; load average {load[0]:.1f}",
    )


def query_embedding(chunks: Population, n: int = 50) -> dict[str, Any]:
    """Timed in a child process: torch's and numpy's thread pools spinning in one process slow each other
    down (a 12 ms query took 500 ms right after the numpy scans), which would measure the bench, not us."""
    import json
    import subprocess
    import sys

    argv = [sys.executable, __file__, "--embed-only", str(chunks.n), str(n)]
    return dict(json.loads(subprocess.run(argv, check=True, capture_output=True, text=True).stdout))


def _embed_only(chunks: Population, n: int) -> dict[str, Any]:
    from embeddings.onnx_embedder import make_embedder

    words = Words()
    rng = np.random.default_rng(11)
    texts = [words.query(chunks, int(h), rng) for h in chunks.threads[rng.integers(0, chunks.n, n)]]
    emb = make_embedder()  # the default: onnxruntime, one thread per query
    load_ms, _ = timed(emb.load)
    emb.embed_query("warm up")
    return {
        "model_load_s": round(load_ms / 1000, 2),
        **timing([timed(partial(emb.embed_query, t))[0] for t in texts]),
    }


def scale_point(n: int, nq: int) -> tuple[dict[str, Any], float | None]:
    """knn_memories against numpy on a memories-only table of n rows (built once, cached)."""
    pop = Population(World(n, 21), n, 22)
    path = data_file(f"scale-{n}-d{DATA_VERSION}-{layout_key()}.db", stale=f"scale-{n}-")
    build_s = None if path.exists() else round(build_memories_only(path, pop), 1)
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
        "mode": "exact floats" if held.snapshot and held.snapshot.floats is not None else "codes",
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
    out = []
    for n in sizes:
        if n == n_mem:
            from store.vectors.codes import EXACT_ROWS

            r, build_s = dict(main["memories"]), None
            r["in_process"] = {
                **main["memories_in_process"],
                "float16_rescoring": f16_main,
                "load_ms": main["in_process_load_ms"],
                "bytes": main["in_process_bytes"],
                "mode": "exact floats" if n <= EXACT_ROWS else "codes",
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
            ip = r["in_process"]
            row["in_process"] = {
                "p50_ms": ip["ours"]["p50_ms"],
                "numpy_p50_ms": ip["numpy"]["p50_ms"],
                "ratio_p50": ip["ratio_p50"],
                "recall_at_10": ip["recall_at_10"],
                "load_ms": ip["load_ms"],
                "bytes": ip["bytes"],
                "mode": ip["mode"],
                "float16_rescoring": ip.get("float16_rescoring"),
            }
        out.append(row)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    size = ap.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="10k memories, 20k chunks (for iterating)")
    size.add_argument("--full", action="store_true", help="also the 1M-row scaling point")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--sizes", help="scaling points, comma-separated (default 10000,100000; --full adds 1M)")
    ap.add_argument("--scaling-only", action="store_true", help="only the scaling points (with --sizes)")
    ap.add_argument(
        "--hybrid-only",
        action="store_true",
        help="only hybrid vs vector-only vs keyword-only search, vectors held in process (wall and CPU)",
    )
    ap.add_argument(
        "--cpu",
        action="store_true",
        help="time CPU seconds of the process (all threads) instead of wall time: steadier on a busy machine",
    )
    ap.add_argument("--embed-only", nargs=2, type=int, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.embed_only:
        import json

        print(json.dumps(_embed_only(populations(10, a.embed_only[0])[1], a.embed_only[1])))
        return
    n_mem, n_chunks = (10_000, 20_000) if a.quick else (100_000, 200_000)
    sizes = [10_000] if a.quick else [10_000, 100_000] + ([1_000_000] if a.full else [])
    if a.sizes:
        sizes = [int(x) for x in a.sizes.split(",")]
    load = os.getloadavg()
    if a.cpu:
        import _common

        _common.CLOCK[0] = time.process_time
    if a.scaling_only:  # only the memories-only scaling points (vec0 and in process against numpy)
        import json

        rows = []
        for n in sizes:
            r, build_s = scale_point(n, a.queries)
            ip = r["in_process"]
            rows.append(
                {
                    "rows": n,
                    "vec0": {
                        "p50_ms": r["ours"]["p50_ms"],
                        "ratio_p50": r["ratio_p50"],
                        "recall_at_10": r["recall_at_10"],
                    },
                    "in_process": {
                        "p50_ms": ip["ours"]["p50_ms"],
                        "numpy_p50_ms": ip["numpy"]["p50_ms"],
                        "ratio_p50": ip["ratio_p50"],
                        "recall_at_10": ip["recall_at_10"],
                        "load_ms": ip["load_ms"],
                        "bytes": ip["bytes"],
                        "mode": ip["mode"],
                        "float16_rescoring": ip["float16_rescoring"],
                    },
                    "numpy_p50_ms": r["numpy"]["p50_ms"],
                    "build_s": build_s,
                }
            )
        print(
            json.dumps(
                {
                    "scaling": rows,
                    "clock": "cpu" if a.cpu else "wall",
                    "load_average_1_5_15": [round(x, 2) for x in load],
                },
                indent=2,
            )
        )
        return
    mem, chunks = populations(n_mem, n_chunks)
    key = f"d{DATA_VERSION}-{layout_key()}"
    path = data_file(f"search-{n_mem}-{n_chunks}-b{BUILD}-{key}.db", stale=f"search-{n_mem}-{n_chunks}-")
    build_s = None if path.exists() else round(build(path, mem, chunks), 1)
    before = footprint_before_upgrade(path, LATEST)  # a cached file from before float16 rows
    t_open = time.process_time()
    store = Store(path, embedder=Precomputed())
    upgrade_cpu_s = round(time.process_time() - t_open, 1) if before else None
    if a.hybrid_only:
        hybrid_only(store, chunks, a.queries, (n_mem, n_chunks), load)
        return
    vec = vector_series(store, mem, chunks, a.queries)
    f16 = vec.pop("float16_rescoring")
    hyb = hybrid_series(store, chunks, a.queries)
    hyb["in_process"] = hybrid_series(store, chunks, a.queries, in_process=True)
    emb = query_embedding(chunks)
    scale = scaling(sizes, vec, n_mem, a.queries, f16["memories_in_process"])
    foot = footprint(store.con)
    store.close()
    # recall >= 0.98 is the held path's target (the sqlite-vec path's is 0.95, above); float16 may lose
    # at most 0.002 against float32 re-scoring of the same candidates on every path
    f16_recall = min(v["recall_at_10_float16"] for k, v in f16.items() if k.endswith("_in_process"))
    f16_loss = max(-v["difference"] for v in f16.values())
    worst = max(vec["memories"]["ratio_p50"], vec["chunks"]["ratio_p50"])
    recall = min(v["recall_at_10"] for v in vec.values() if isinstance(v, dict))
    ip_recall = min(v["recall_at_10"] for k, v in vec.items() if k.endswith("_in_process"))
    hip = hyb["in_process"]["all"]
    targets = {
        "vector_p50_le_1.5x_numpy": worst <= 1.5,
        "recall_at_10_ge_0.95": recall >= 0.95,
        "hybrid_p50_le_2x_vector": hyb["all"]["ratio_p50"] <= 2.0,
        # issue 19, the in-process path: <= 1.0x numpy at 10k, <= 0.3x above; recall >= 0.98
        "in_process_recall_at_10_ge_0.98": ip_recall >= 0.98,
        "in_process_hybrid_le_2x_vector_and_30ms_cpu": hip["cpu"]["ratio_p50"] <= 2.0
        and hip["cpu"]["hybrid"]["p50_ms"] <= 30,
        # issue 19, float16 re-scoring rows: held recall@10 >= 0.98, every path within 0.002 of float32
        "float16_recall_at_10_ge_0.98_and_within_0.002_of_float32": f16_recall >= 0.98 and f16_loss <= 0.002,
    }
    for row in scale:
        if "in_process" in row:
            limit = 1.0 if row["rows"] <= 10_000 else 0.3
            targets[f"in_process_{row['rows']}_le_{limit}x_numpy"] = row["in_process"]["ratio_p50"] <= limit
    summary = (
        f"search: {n_mem // 1000}k memories {vec['memories']['ours']['p50_ms']:.1f} ms vs numpy "
        f"{vec['memories']['numpy']['p50_ms']:.1f} ms ({vec['memories']['ratio_p50']:.2f}x), "
        f"{n_chunks // 1000}k chunks {vec['chunks']['ours']['p50_ms']:.1f} vs "
        f"{vec['chunks']['numpy']['p50_ms']:.1f} ms ({vec['chunks']['ratio_p50']:.2f}x); min recall@10 "
        f"{recall:.3f}; hybrid {hyb['all']['hybrid']['p50_ms']:.1f} ms = {hyb['all']['ratio_p50']:.2f}x "
        f"vector-only; in process: memories {vec['memories_in_process']['ratio_p50']:.2f}x numpy, chunks "
        f"{vec['chunks_in_process']['ratio_p50']:.2f}x, min recall@10 {ip_recall:.3f}, hybrid "
        f"{hip['cpu']['hybrid']['p50_ms']:.1f} ms CPU = {hip['cpu']['ratio_p50']:.2f}x vector-only; scaling "
        + ", ".join(
            f"{r['rows'] // 1000}k {r['in_process']['ratio_p50']:.2f}x (recall "
            f"{r['in_process']['recall_at_10']:.3f})"
            for r in scale
            if "in_process" in r
        )
        + f"; float16 rows: held recall@10 >= {f16_recall:.3f}, at most {f16_loss:.4f} below float32 "
        "re-scoring, "
        f"{foot['mb_per_1k_messages']:.2f} MB per 1k messages"
        + (f" (float32 rows: {before['mb_per_1k_messages']:.2f} MB)" if before else "")
        + f"; query embedding {emb['p50_ms']:.1f} ms; load average {load[0]:.1f}; targets "
        f"{'met' if all(targets.values()) else 'MISSED: ' + ', '.join(k for k, v in targets.items() if not v)}"
    )
    emit(
        "search",
        {
            "rows": {"memories": n_mem, "chunks": n_chunks, "messages": foot["messages"]},
            "footprint": foot,
            "footprint_before_upgrade": before,  # the same file before migration 7, when it was cached
            "upgrade_cpu_s": upgrade_cpu_s,
            "float16_rescoring": f16,
            "build_s": build_s,
            "queries": a.queries,
            "vector": vec,
            "hybrid": hyb,
            "query_embedding": emb,
            "scaling": scale,
            "load_average_1_5_15": [round(x, 2) for x in load],
            "targets": targets,
        },
        summary,
    )


if __name__ == "__main__":
    main()
