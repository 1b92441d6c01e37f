"""The databases bench/perf/search.py measures, built once through the store's own write paths and cached.

- `search_db`: a chat.db with n memories and n chunk vectors (the default: 100,000 memories and 200,000
  message chunks, about 143,000 messages in 10,000 threads, a summary each), written by
  `Store.write_thread` and `Store.add_memory` as an import would write them, so the tables, indexes and
  FTS rows the search reads are the real ones. Vectors and text are synthetic (bench/lib/common.py says why
  they behave like real ones); the `Precomputed` embedder hands the store the generator's vectors.
- `scale_db`: only the memory vector tables, for the scaling points (10k / 100k / 1M rows): what
  `knn_memories` and the held memory table read, and nothing that would take an hour to write at 1M.

Both are keyed by DATA_VERSION, BUILD and the vector tables' layout (`layout_key`), so a change to the
generators or to the schema rebuilds them, and a change to the search code around them does not. bench/perf/cold.py
builds its own database with `build` too.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np

from bench.lib.common import (
    DATA_VERSION,
    DIM,
    MODEL_NAME,
    Population,
    Precomputed,
    Words,
    World,
    data_file,
    layout_key,
    lengths,
    remove_db,
)
from store import Store, db
from store.records import CATEGORIES, MessageIn, ThreadIn
from store.text import fts_put
from store.threads import PreparedChunks
from store.vectors import rows as vectors

BUILD = 1  # bump when the data below changes shape
PREFIX = {"preference": "I prefer", "project": "I am working on", "skill": "I know how to", "fact": "Note:"}


def populations(n_mem: int, n_chunks: int, seed: int = 7) -> tuple[Population, Population]:
    """The memories and the chunks, drawn from one world (so hybrid queries find both kinds)."""
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
        messages: list[MessageIn] = []
        spans: list[list[tuple[int, int]]] = []
        i = a
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


def search_db(n_mem: int, n_chunks: int) -> tuple[Path, Population, Population, float | None]:
    """The cached chat.db for n_mem memories and n_chunks chunks (built first if missing), its two
    populations, and the seconds the build took (None when the file was cached)."""
    mem, chunks = populations(n_mem, n_chunks)
    key = f"d{DATA_VERSION}-{layout_key()}"
    path = data_file(f"search-{n_mem}-{n_chunks}-b{BUILD}-{key}.db", stale=f"search-{n_mem}-{n_chunks}-")
    build_s = None if path.exists() else round(build(path, mem, chunks), 1)
    return path, mem, chunks, build_s


def scale_db(n: int) -> tuple[Path, Population, float | None]:
    """The cached memories-only database of n rows (built first if missing), its population, and the
    seconds the build took (None when the file was cached)."""
    pop = Population(World(n, 21), n, 22)
    path = data_file(f"scale-{n}-d{DATA_VERSION}-{layout_key()}.db", stale=f"scale-{n}-")
    build_s = None if path.exists() else round(build_memories_only(path, pop), 1)
    return path, pop, build_s
