"""In-process vector search for long-lived processes (the TUI, the MCP server): the 1-bit codes of a
vector table held in numpy, scanned with a popcount, the nearest candidates re-scored exactly.

Why: sqlite-vec's vec0 scan of the bit tables costs 3x numpy's exact float scan at 10k rows and still
0.6x at 1M (README "Benchmarks"), while the same algorithm in numpy — XOR the query's code against a
packed uint64 matrix (stored word-major: one contiguous row per 64 dimensions, 4x faster to scan than
row-major), `np.bitwise_count`, argpartition — costs a fraction of it. chat.db
stays the truth: the matrix is a cache, loaded lazily (one read of the table, ids + codes + the filter
columns, about 90 bytes a row), and each search first checks, in one tiny statement, whether it is
current: `settings.vector_generation` (bumped by store.vectors.rows in the transaction of any change
that is not an append: a re-chunked message, an edited, trashed or deleted memory, a reindex) and the
table's largest id (appends: only the new rows are read). Writes by this process and by any other go
through the same code, so both are seen. Filters (category, trash, thread, role, dates) are numpy masks
over the held columns, applied before the scan.

Three sizes, three ways (the crossings measured by bench/perf/search.py's scaling points, CPU per query):
- up to EXACT_ROWS rows the vectors themselves are held (decoded from the float16 rows to float32, unit
  length) and every row is scored exactly: the numpy baseline itself;
- up to FLOAT_ROWS the codes *and* the float32 vectors are held: the codes pick the rows nearest by
  Hamming distance and those are scored exactly from memory. Re-scoring through SQLite costs a fixed
  ~0.5 ms (reading and decoding the float16 rows: numpy converts float16 slowly), more than the whole
  numpy scan of 10,000 rows (~0.3 ms), so a small table must not pay it;
- above that, only the codes (about 50 bytes a row): Hamming distance, then an asymmetric score, then
  the few hundred best re-scored from the float16 rows in chat.db.
The codes are made here from the float16 rows, in batches (the same bits as the vec0 tables' codes).
Above MAX_BYTES (estimated before loading) nothing is held and the vec0 path is used: memory stays
bounded; `nbytes` reports what is held. The nearest rows by Hamming distance are found by counting
(distances are small integers: a histogram gives the cut, one comparison the rows), not by a
partition of the whole array: 3-4x cheaper at 1M rows. How many rows are re-scored grows with the square
root of the table's rows (CANDIDATES_PER_ROOT), and the scan keeps its counts in uint8 / uint16: on a CPU
without AVX-512 (the AVX2-only EPYC of 2026-11-26) the uint64 counts and one candidate per 300 rows cost
0.35x numpy's scan at 100k and 1M rows, above the 0.3x of issue 19 met on an AVX-512 machine the day before;
with these, the candidates' rows read through carray() and widened by store.vectors.floats.widen, 0.27x
and 0.15x there.

One-shot processes (`memapp search` from a shell) do not use this: loading the table would cost more
than the one vec0 search it serves.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

import apsw
import numpy as np

from store.vectors.floats import sign_codes, stored_rows, unit_rows
from store.vectors.knn import Hit, rescore

# Below this many rows, hold the float32 rows and score every row exactly. Measured at 10k rows (CPU per
# query, one BLAS thread): the float scan 1.0-1.3x numpy's (the same matvec, plus selection), the codes
# 0.85-0.9x with recall@10 1.0, mostly the fixed cost of re-scoring 128 rows in SQLite (~0.8 ms) while the
# scan costs ~0.1 ms per 1,000 rows: they cross near 8,000.
EXACT_ROWS = 8_000
# Up to this many rows the float32 vectors are held beside the codes and the Hamming-nearest rows are
# scored from memory: at most 49 MB a table (384 dimensions); at 10k rows 0.8x numpy's scan instead of
# 3x through SQLite (README "Benchmarks").
FLOAT_ROWS = 32_000
MAX_BYTES = 512 * 1024 * 1024  # never hold more than this per table (estimated before loading)
MIN_CANDIDATES = 128  # rows re-scored exactly: at least this many,
# or this many times the square root of the table's rows (100k: 333, 200k: 470, 1M: 1,050): the rows
# whose Hamming rank can hide a true top-10 grow slower than the table. Chosen on tuning queries (seed 5
# of bench/lib/search_data.py's populations; the bench's own are seeds 1 and 2): recall@10 0.9975 at 100k
# memories, 0.9935 at 200k chunks, 0.9945 at 1M; one per 300 rows (3,333 at 1M) cost 2x the CPU at 1M.
CANDIDATES_PER_ROOT = 1.05
OVERSAMPLE = 4  # or this many per result asked for, whichever is most
COARSE = 8  # rows ranked by the asymmetric score per row re-scored (picked first by Hamming distance)
NEAREST = 2  # with the floats held: rows scored exactly per candidate, picked by Hamming distance alone
SPARSE = 8  # a filter passing fewer than 1/SPARSE of the rows scans only those rows
GENERATION_KEY = "vector_generation"
LOAD_BATCH = 65_536  # rows decoded at a time while loading


@dataclass(frozen=True)
class Spec:
    """A vector table as this module reads it."""

    table: str
    pk: str
    extra: str  # a column returned with each hit ("" for none)
    ints: tuple[str, ...]  # integer filter columns
    texts: tuple[str, ...]  # text filter columns (held as small integer codes)
    reals: tuple[str, ...]  # real filter columns


MEMORIES = Spec("vec_memories", "memory_id", "", ("deleted",), ("category",), ())
CHUNKS = Spec("vec_chunks", "chunk_id", "message_id", ("thread_id",), ("role",), ("created_at",))


@dataclass(frozen=True)
class Snapshot:
    ids: np.ndarray  # int64, ascending
    extra: np.ndarray  # int64
    codes: np.ndarray | None  # (words, n) uint64 sign bits, word-major; None in exact mode
    floats: np.ndarray | None  # (n, dim) float32 unit rows up to FLOAT_ROWS, else None
    cols: dict[str, np.ndarray]
    vocab: dict[str, dict[str, int]]  # text column -> {value: code}
    generation: str | None
    max_id: int

    @property
    def nbytes(self) -> int:
        arrays = [self.ids, self.extra, *self.cols.values()]
        arrays += [a for a in (self.codes, self.floats) if a is not None]
        return int(sum(a.nbytes for a in arrays))


@dataclass
class CodeTable:
    """The held copy of one vector table, for one database file; thread-safe."""

    spec: Spec
    dim: int
    max_bytes: int = field(default_factory=lambda: MAX_BYTES)
    exact_rows: int = field(default_factory=lambda: EXACT_ROWS)
    float_rows: int = field(default_factory=lambda: FLOAT_ROWS)
    snapshot: Snapshot | None = None
    too_big: bool = False
    loads: int = 0  # full loads (for tests and the bench)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def nbytes(self) -> int:
        snap = self.snapshot
        return 0 if snap is None else snap.nbytes

    # -- keeping in step ---------------------------------------------------------------------------

    def current(self, con: apsw.Connection) -> Snapshot | None:
        """The snapshot, brought up to date with the database (None: too big to hold, use vec0)."""
        s = self.spec
        gen, max_id, count = _row(
            con,
            f"SELECT (SELECT value FROM settings WHERE key = ?), (SELECT max({s.pk}) FROM {s.table}), "
            f"(SELECT count(*) FROM {s.table} WHERE {s.pk} > ?)",
            (GENERATION_KEY, self.snapshot.max_id if self.snapshot else 0),
        )
        gen = None if gen is None else str(gen)
        max_id = int(max_id or 0)
        snap = self.snapshot
        if snap is not None and snap.generation == gen and snap.max_id == max_id:
            return snap
        with self.lock:
            snap = self.snapshot
            if snap is None or snap.generation != gen or max_id < snap.max_id:
                snap = self._load(con, gen, None)
            elif max_id > snap.max_id:
                snap = self._load(con, gen, snap) if count else snap
            self.snapshot = snap
            return snap

    def _load(self, con: apsw.Connection, gen: str | None, base: Snapshot | None) -> Snapshot | None:
        s = self.spec
        after = base.max_id if base is not None else 0
        total = (len(base.ids) if base is not None else 0) + int(
            _row(con, f"SELECT count(*) FROM {s.table} WHERE {s.pk} > ?", (after,))[0]
        )
        keep_codes = total > self.exact_rows
        keep_floats = total <= max(self.float_rows, self.exact_rows)
        words = -(-self.dim // 64)
        row_bytes = (
            16
            + 8 * len(s.ints + s.texts + s.reals)
            + (4 * self.dim if keep_floats else 0)
            + (8 * words if keep_codes else 0)
        )
        if total * row_bytes > self.max_bytes:
            self.too_big = True
            return None
        self.too_big = False
        if base is not None and (
            (base.floats is not None) != keep_floats or (base.codes is not None) != keep_codes
        ):
            base, after = None, 0  # crossed EXACT_ROWS or FLOAT_ROWS: read it all in the other form
        cols = [*s.ints, *s.texts, *s.reals]
        cursor = iter(
            con.execute(
                f"SELECT {s.pk}, {s.extra or 0}, embedding{''.join(', ' + c for c in cols)} FROM {s.table} "
                f"WHERE {s.pk} > ? ORDER BY {s.pk}",
                (after,),
            )
        )
        vocab = {c: dict(base.vocab[c]) if base else {} for c in s.texts}
        parts: list[
            tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None, dict[str, np.ndarray]]
        ] = []
        # In batches: at 1M rows the float16 rows are 768 MB, the codes made from them 48 MB.
        while rows := list(islice(cursor, LOAD_BATCH)):
            n = len(rows)
            mat = stored_rows([r[2] for r in rows], self.dim)
            part_cols: dict[str, np.ndarray] = {}
            for j, c in enumerate(cols, start=3):
                if c in s.texts:
                    codes = vocab[c]
                    part_cols[c] = np.fromiter(
                        (codes.setdefault(r[j], len(codes)) for r in rows), np.int32, n
                    )
                else:
                    part_cols[c] = np.fromiter(
                        (r[j] for r in rows), np.float64 if c in s.reals else np.int64, n
                    )
            parts.append(
                (
                    np.fromiter((r[0] for r in rows), dtype=np.int64, count=n),
                    np.fromiter((r[1] for r in rows), dtype=np.int64, count=n),
                    unit_rows(mat) if keep_floats else None,
                    sign_codes(mat) if keep_codes else None,
                    part_cols,
                )
            )
        n = sum(len(p[0]) for p in parts)
        ids = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, np.int64)
        extra = np.concatenate([p[1] for p in parts]) if parts else np.zeros(0, np.int64)
        new_cols = {
            c: np.concatenate([p[4][c] for p in parts])
            if parts
            else np.zeros(0, np.int32 if c in s.texts else np.float64 if c in s.reals else np.int64)
            for c in cols
        }
        floats: np.ndarray | None = None
        codes_m: np.ndarray | None = None
        if keep_floats:
            floats = (
                np.concatenate([p[2] for p in parts if p[2] is not None])
                if parts
                else np.zeros((0, self.dim), np.float32)
            )
        if keep_codes:
            nbytes = -(-self.dim // 8)
            raw = (
                np.concatenate([p[3] for p in parts if p[3] is not None])
                if parts
                else np.zeros((0, nbytes), np.uint8)
            )
            pad = (-nbytes) % 8
            if pad:
                raw = np.concatenate([raw, np.zeros((n, pad), np.uint8)], axis=1)
            codes_m = np.ascontiguousarray(raw.view(np.uint64).T)  # word-major: each word's column contiguous
        if base is not None:
            ids = np.concatenate([base.ids, ids])
            extra = np.concatenate([base.extra, extra])
            new_cols = {c: np.concatenate([base.cols[c], new_cols[c]]) for c in cols}
            if floats is not None and base.floats is not None:
                floats = np.concatenate([base.floats, floats])
            if codes_m is not None and base.codes is not None:
                codes_m = np.concatenate([base.codes, codes_m], axis=1)
        else:
            self.loads += 1
        return Snapshot(ids, extra, codes_m, floats, new_cols, vocab, gen, int(ids[-1]) if len(ids) else 0)

    # -- searching ---------------------------------------------------------------------------------

    def search(
        self,
        con: apsw.Connection,
        query: np.ndarray,
        k: int,
        *,
        equal: dict[str, Any] | None = None,
        since: float | None = None,
        until: float | None = None,
    ) -> list[Hit] | None:
        """(id, extra, cosine) of the k nearest rows that pass the filters, best first; None when the
        table is too big to hold (the caller uses vec0)."""
        found = self.candidates(con, query, k, equal=equal, since=since, until=until)
        if found is None or isinstance(found, list):
            return found
        q = np.ascontiguousarray(query, dtype=np.float32)
        return rescore(con, self.spec.table, self.spec.pk, self.spec.extra, q, found, k)

    def candidates(
        self,
        con: apsw.Connection,
        query: np.ndarray,
        k: int,
        *,
        equal: dict[str, Any] | None = None,
        since: float | None = None,
        until: float | None = None,
    ) -> list[Hit] | np.ndarray | None:
        """The ids (int64 array) that `search` re-scores from the float16 rows; or the answer itself
        when the floats are held (tables up to FLOAT_ROWS: nothing to re-score from chat.db) or no row
        passes the filters; None when the table is too big to hold. The bench re-scores the same ids
        from float32."""
        snap = self.current(con)
        if snap is None:
            return None
        q = np.ascontiguousarray(query, dtype=np.float32)
        mask = _mask(snap, equal or {}, since, until)
        if mask is None or k <= 0:
            return []
        n_all = len(snap.ids)
        rows: np.ndarray | None = None  # a sparse filter: work on these rows only
        drop: np.ndarray | None = None  # a dense filter: score every row, then drop these
        if mask is not True:
            assert isinstance(mask, np.ndarray)
            n_pass = int(np.count_nonzero(mask))
            if n_pass == 0:
                return []
            if n_pass < n_all // SPARSE:
                rows = np.flatnonzero(mask)
            elif n_pass < n_all:
                drop = ~mask
        n_rows = n_all if rows is None else len(rows)
        if snap.codes is None:  # exact mode: every row scored
            assert snap.floats is not None
            sims = (snap.floats if rows is None else snap.floats[rows]) @ q
            if drop is not None:
                sims[drop] = -np.inf
            top = _top(sims, min(k, n_rows if drop is None else n_pass), largest=True)
            pick = top if rows is None else rows[top]
            return [
                (int(snap.ids[i]), int(snap.extra[i]), float(sims[t])) for i, t in zip(pick, top, strict=True)
            ]
        assert snap.codes is not None
        n_pass = n_rows if drop is None else n_rows - int(np.count_nonzero(drop))
        n = min(
            n_pass, max(MIN_CANDIDATES, OVERSAMPLE * k, math.ceil(CANDIDATES_PER_ROOT * math.sqrt(n_all)))
        )
        if n >= n_pass:
            cand = np.flatnonzero(mask) if isinstance(mask, np.ndarray) else np.arange(n_all)
        else:
            codes = snap.codes if rows is None else snap.codes[:, rows]
            dist = hamming(codes, query_code(q, codes.shape[0]))
            if drop is not None:
                dist[drop] = 64 * codes.shape[0] + 1  # beyond any real distance
            m = min(n_pass, (NEAREST if snap.floats is not None else COARSE) * n)
            coarse = nearest(dist, m) if m < len(dist) else np.arange(len(dist))
            if snap.floats is not None:  # the Hamming-nearest rows, scored exactly from memory
                return _scored(snap, coarse if rows is None else rows[coarse], q, k)
            # Hamming distance picks COARSE x n rows; the query's own floats against their sign bits (an
            # asymmetric score, far closer to the cosine) picks the n re-scored exactly among them.
            score = asymmetric(q, np.ascontiguousarray(codes[:, coarse].T))
            best = coarse[np.argpartition(-score, n - 1)[:n]] if n < m else coarse
            cand = best if rows is None else rows[best]
        if snap.floats is not None:
            return _scored(snap, cand, q, k)
        return np.asarray(snap.ids[cand])


def _scored(snap: Snapshot, positions: np.ndarray, q: np.ndarray, k: int) -> list[Hit]:
    """The k best of the held rows at `positions` (ascending) by exact cosine, best first, ties by id.
    einsum, not `@`: BLAS's gemv would wake its thread pool for a few hundred rows (store.vectors.floats)."""
    assert snap.floats is not None
    sims = np.einsum("ij,j->i", snap.floats[positions], q)
    top = _top(sims, k, largest=True)
    return [(int(snap.ids[positions[t]]), int(snap.extra[positions[t]]), float(sims[t])) for t in top]


def nearest(dist: np.ndarray, m: int) -> np.ndarray:
    """Ascending indices of the m smallest distances (ties: the lowest index first). Distances are
    small integers, so a histogram finds the cut and one comparison the rows: 3-4x cheaper than
    `np.argpartition` over the whole array at 100k-1M rows."""
    counts = np.cumsum(np.bincount(dist))
    cut = int(np.searchsorted(counts, m))  # the smallest distance with m rows at or below it
    chosen = np.flatnonzero(dist <= cut)  # ascending
    extra = len(chosen) - m  # rows at the cut beyond the m: the last of them go
    if extra > 0:
        at = np.flatnonzero(dist[chosen] == cut)
        chosen = np.delete(chosen, at[len(at) - extra :])
    return chosen


def _mask(
    snap: Snapshot, equal: dict[str, Any], since: float | None, until: float | None
) -> np.ndarray | bool | None:
    """True (every row), a boolean row mask, or None (no row can match)."""
    mask: np.ndarray | bool = True
    for col, value in equal.items():
        if value is None:
            continue
        if col in snap.vocab:
            code = snap.vocab[col].get(value)
            if code is None:
                return None
            hit = snap.cols[col] == code
        else:
            hit = snap.cols[col] == int(value)
        mask = hit if mask is True else mask & hit
    if since is not None or until is not None:
        when = snap.cols["created_at"]
        hit = np.ones(len(when), dtype=bool)
        if since is not None:
            hit &= when >= since
        if until is not None:
            hit &= when < until
        mask = hit if mask is True else mask & hit
    return mask


def _top(scores: np.ndarray, k: int, *, largest: bool) -> np.ndarray:
    """Indices of the k best scores, best first (ties by position)."""
    k = min(k, len(scores))
    key = -scores if largest else scores
    part = np.argpartition(key, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
    return part[np.lexsort((part, key[part]))]


def hamming(codes: np.ndarray, qcode: np.ndarray) -> np.ndarray:
    """Hamming distance (uint16) of every row (codes word-major) to the query's code, word by word into
    preallocated buffers, each word's count as uint8: 0.5 ms for 100k rows of 384 bits where uint64
    counts took 1.1-1.7 ms on an AVX2 CPU (less memory to write and add), and 3 ms the row-major
    one-liner."""
    n = codes.shape[1]
    if (
        n <= FLOAT_ROWS
    ):  # small: whole-matrix operations cost less than the loop's calls (84 vs 109 us at 10k)
        return np.bitwise_count(np.bitwise_xor(codes, qcode[:, None])).sum(axis=0, dtype=np.uint16)
    acc = np.zeros(n, np.uint16)
    buf = np.empty(n, np.uint64)
    count = np.empty(n, np.uint8)
    for j in range(codes.shape[0]):
        np.bitwise_xor(codes[j], qcode[j], out=buf)
        np.bitwise_count(buf, out=count, casting="unsafe")  # at most 64: fits
        acc += count
    return acc


def query_code(q: np.ndarray, words: int) -> np.ndarray:
    """The query's sign bits packed as sqlite-vec's vec_quantize_binary packs them (bit t of byte j is
    dimension 8j + t, set when > 0), so they match the held codes bit for bit."""
    raw = np.packbits(q > 0, bitorder="little")
    return np.concatenate([raw, np.zeros(words * 8 - len(raw), np.uint8)]).view(np.uint64)


_BITS = ((np.arange(256)[:, None] >> np.arange(8)) & 1).astype(np.float32) * 2 - 1  # byte -> 8 signs


def asymmetric(q: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """q . sign(x) for the given rows' codes: a table of 256 partial sums per code byte, then one lookup
    per byte and row."""
    nbytes = -(-len(q) // 8)
    qb = np.zeros(nbytes * 8, np.float32)
    qb[: len(q)] = q
    lut = qb.reshape(nbytes, 8) @ _BITS.T  # (nbytes, 256)
    # byte j of a row looks up lut[j, byte]: one flat index per byte (2.4x faster than lut[arange, b])
    offsets: np.ndarray = np.arange(nbytes, dtype=np.uint16 if nbytes <= 256 else np.uint32) * 256
    index = codes.view(np.uint8)[:, :nbytes] + offsets
    return np.asarray(np.take(lut.ravel(), index).sum(axis=1), dtype=np.float32)


def _row(con: apsw.Connection, sql: str, args: tuple[Any, ...]) -> Any:
    row = con.execute(sql, args).fetchone()
    assert row is not None
    return row


def bump_generation(con: apsw.Connection) -> None:
    """Tell every held copy (in any process) that rows changed other than by appending; in the caller's
    transaction."""
    con.execute(
        "INSERT INTO settings(key, value) VALUES (?, '1') "
        "ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1",
        (GENERATION_KEY,),
    )
