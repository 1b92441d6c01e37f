"""FTS5's best rows for a query, found in numpy for long-lived processes (the TUI, the MCP server).

Why: FTS5 ranks by calling its bm25() for every row that matches any query word, one row at a time, and a
question nearly always holds one common word ("say" in "what did we say about the NAS": 6,000 of 145,000
messages); that scoring was most of the keyword half of a hybrid search (README "Benchmarks"), and the
max-score bound of store.search.candidates only pays for far commoner words. Here the query words'
postings are read from the index as they are (an `fts5vocab` instance table seeks each term and returns its
rows in one `group_concat`, in C), and the whole query is scored at once in numpy: FTS5's own bm25 (the
same formula, constants and order of operations, so the same rows win: tests/store/test_keyword_held.py
pins them against the SQL path), the best `limit` rows kept, and their term counts handed to
store.search.keyword exactly as the `memapp_tf` auxiliary function gives them.

What it holds: each keyword index's row lengths (in tokens), read from the index's own `docsize` table
(one varint per row: the tables have one column), 8 bytes per rowid; and the postings of the common
terms a search has read (CACHE_MIN occurrences or more: "say" in 6,000 messages costs ~1.5 ms to read and
parse; a rare word ~0.2 ms, read each time), the least recently used dropped past CACHE_BYTES.
Search as you type asks for the words already typed at every key, and a person's questions share their
common words. Both are current while the index's structure record (`%_data` row 10, rewritten by every
write that reaches the index: an insert, a delete, an update, a merge) is the same bytes; otherwise they
are read again (the lengths: ~50 ms CPU at 145,000 rows), but not more often than keeps that reading
under 1/REREAD_SHARE of the time: while an import in another process keeps changing an index, the searches
in between are ranked by FTS5 (store.search.candidates), as one-shot commands are. The reads of one search
share one read transaction, so the lengths and the postings are of the same moment.

Never inside the caller's transaction (an index write not yet committed would not be in the lengths), and
a phrase FTS5 could read otherwise than this module (a tokenizer that gives colocated synonyms, an empty
phrase, an index with more than one column) leaves the search to the SQL path: the result never depends
on this module, only its speed does.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import apsw
import numpy as np

from store.core import StoreCore
from store.db import read_snapshot
from store.search.candidates import FTS5_K1, TABLES, Matches, passing_ids
from store.search.filters import Filters
from store.search.terms import table_tokenizer, tokenizer_lock

FTS5_B = 0.75  # the b of FTS5's built-in bm25()
STRUCTURE_ID = 10  # the id of an FTS5 index's structure record in its %_data table
VOCAB_PREFIX = "memapp_instances_"  # temp.memapp_instances_<table>: fts5vocab 'instance' view of an index
CHECK_MORE = 8  # rows checked against the filters at first: `limit` and 1/CHECK_MORE more
WIDEN = 4  # ... then, while too few pass, this many times as many again
CACHE_MIN = 1_000  # a term read with at least this many occurrences is kept for the next search
CACHE_BYTES = 32 << 20  # the kept postings of one Store, at most
REREAD_SHARE = 20  # an index's lengths are read again at most once per this many times the reading's cost
_TOP = "\U0010ffff"  # above every character: a prefix's terms are those in [prefix, prefix + _TOP)


@dataclass(frozen=True, slots=True)
class Lengths:
    """One keyword index's row lengths, as of the index's structure record `structure`."""

    structure: bytes
    lengths: np.ndarray  # int64, indexed by rowid; 0 for a rowid not in the index
    rows: int  # rows in the index (FTS5's row count)
    tokens: int  # tokens in the index (FTS5's total size)
    read_at: float = 0.0  # time.monotonic() when read
    cost: float = 0.0  # seconds the reading took

    @property
    def nbytes(self) -> int:
        return int(self.lengths.nbytes)


class HeldKeywords:
    """The row lengths of each keyword index and the postings of its common terms, shared by the
    connections of one Store."""

    def __init__(self) -> None:
        self._tables: dict[str, Lengths] = {}
        # (table, token, prefix, offsets) -> (the structure record it was read under, _instances' array)
        self._postings: OrderedDict[tuple[str, str, bool, bool], tuple[bytes, np.ndarray]] = OrderedDict()
        self._postings_bytes = 0
        self._lock = threading.Lock()
        self.reads = self.reused = 0  # postings read from an index, and answered from the kept ones

    @property
    def nbytes(self) -> int:
        """Bytes held: the row lengths and the kept postings."""
        return sum(t.nbytes for t in self._tables.values()) + self._postings_bytes

    def lengths(self, con: apsw.Connection, table: str) -> Lengths | None:
        """The current lengths of `table` (read again if the index changed); None if they cannot be read,
        or the index changed again too soon after the last reading (REREAD_SHARE). Call inside a read
        transaction."""
        row = con.execute(f"SELECT block FROM {table}_data WHERE id = ?", (STRUCTURE_ID,)).fetchone()
        structure = bytes(row[0]) if row and row[0] is not None else b""  # type: ignore[arg-type]
        with self._lock:
            held = self._tables.get(table)
            if held is not None and held.structure == structure:
                return held
            start = time.monotonic()
            if held is not None and start - held.read_at < REREAD_SHARE * held.cost:
                return None  # the index keeps changing: FTS5 ranks this search
            self._forget(table)  # postings read under another structure are stale
            held = read_lengths(con, table, structure)
            if held is None:
                self._tables.pop(table, None)
            else:
                held = replace(held, read_at=start, cost=time.monotonic() - start)
                self._tables[table] = held
            return held

    def load(self, con: apsw.Connection) -> None:
        """Read every keyword index's row lengths now (outside a transaction of the caller's)."""
        if con.in_transaction:
            return
        with read_snapshot(con):
            for table in TABLES.values():
                self.lengths(con, table)

    def _forget(self, table: str) -> None:
        """Drop `table`'s kept postings (hold the lock)."""
        for key in [k for k in self._postings if k[0] == table]:
            self._postings_bytes -= self._postings.pop(key)[1].nbytes

    def drop_postings(self) -> None:
        """Forget every kept posting (the row lengths stay): the next search reads what it needs."""
        with self._lock:
            for table in {k[0] for k in self._postings}:
                self._forget(table)

    def instances(
        self, con: apsw.Connection, table: str, structure: bytes
    ) -> Callable[[str, bool, bool], np.ndarray]:
        """`_instances` for `table` as of `structure`, through the kept postings."""

        def read(token: str, prefix: bool, offsets: bool) -> np.ndarray:
            key = (table, token, prefix, offsets)
            with self._lock:
                kept = self._postings.get(key)
                if kept is not None and kept[0] == structure:
                    self._postings.move_to_end(key)
                    self.reused += 1
                    return kept[1]
                self.reads += 1
            found = _instances(con, table, token, prefix, offsets)
            if len(found) >= CACHE_MIN and found.nbytes <= CACHE_BYTES // 4:
                found.flags.writeable = False  # shared between searches: nobody may change it
                with self._lock:
                    old = self._postings.pop(key, None)
                    self._postings_bytes += found.nbytes - (old[1].nbytes if old else 0)
                    self._postings[key] = (structure, found)
                    while self._postings_bytes > CACHE_BYTES:
                        self._postings_bytes -= self._postings.popitem(last=False)[1][1].nbytes
            return found

        return read

    def best_rows(
        self,
        con: apsw.Connection,
        kind: str,
        filters: Filters,
        phrases: Sequence[str],
        prefix: str | None,
        limit: int,
    ) -> tuple[list[int], Matches] | None:
        """(each phrase's document frequency, the `limit` rows FTS5 ranks best for the OR of `phrases`
        among those passing `filters`), as store.search.candidates gives them; None when this module
        cannot answer (the caller then asks FTS5)."""
        if con.in_transaction or not phrases or limit <= 0:
            return None
        table = TABLES[kind]
        with read_snapshot(con):  # the lengths and the postings of the same moment
            held = self.lengths(con, table)
            if held is None:
                return None
            tokenizer = table_tokenizer(con, table)
            if tokenizer is None:
                return None
            read = self.instances(con, table, held.structure)
            found = [phrase_postings(con, table, tokenizer, p, p == prefix, read) for p in phrases]
            postings = [f for f in found if f is not None]
            if len(postings) < len(found):
                return None
            dfs = [len(docs) for docs, _ in postings]
            if not any(dfs):
                return dfs, Matches(held.rows, held.tokens, [], np.zeros(0), np.zeros((len(phrases), 0)))
            docs = _union([d for d, _ in postings])
            if int(docs[-1]) >= len(held.lengths):
                return None  # a row the lengths do not know: the index changed under the structure check
            freqs = np.zeros((len(phrases), len(docs)))
            for i, (d, tf) in enumerate(postings):
                freqs[i, np.searchsorted(docs, d)] = tf
            sizes = held.lengths[docs].astype(np.float64)
            chosen = _passing(con, kind, filters, docs, _scores(freqs, sizes, dfs, held), limit)
        ids = [int(i) for i in docs[chosen]]
        return dfs, Matches(held.rows, held.tokens, ids, sizes[chosen], freqs[:, chosen])


def _union(arrays: Sequence[np.ndarray]) -> np.ndarray:
    """The distinct values of sorted arrays, ascending."""
    every = np.sort(np.concatenate(arrays))
    return every[np.concatenate(([True], every[1:] != every[:-1]))]


def read_lengths(con: apsw.Connection, table: str, structure: bytes) -> Lengths | None:
    """Every row's length from `table`'s docsize table (one varint per row and column); None when the
    index has another shape than one column with sizes kept."""
    try:
        ids_text, sizes_hex = con.execute(
            f"SELECT group_concat(id), group_concat(hex(sz), '') FROM {table}_docsize"
        ).fetchone()  # type: ignore[misc]
        columns = con.execute(f"SELECT count(*) FROM pragma_table_info('{table}')").fetchone()
    except apsw.SQLError:  # no docsize table (columnsize=0) or no index at all
        return None
    if not columns or columns[0] != 1:
        return None
    if not ids_text:
        return Lengths(structure, np.zeros(1, np.int64), 0, 0)
    ids = _ints(ids_text)
    sizes = decode_varints(bytes.fromhex(str(sizes_hex)))
    if sizes is None or len(sizes) != len(ids) or int(ids.min()) < 0:
        return None
    lengths = np.zeros(int(ids.max()) + 1, np.int64)
    lengths[ids] = sizes
    return Lengths(structure, lengths, len(ids), int(sizes.sum()))


def decode_varints(raw: bytes) -> np.ndarray | None:
    """SQLite varints packed end to end (a byte below 0x80 ends one; values up to 2^56), as int64;
    None if the bytes do not end a varint."""
    b = np.frombuffer(raw, np.uint8).astype(np.int64)
    if len(b) == 0:
        return np.zeros(0, np.int64)
    ends = np.flatnonzero(b < 0x80)
    if len(ends) == 0 or ends[-1] != len(b) - 1:
        return None
    starts = np.concatenate(([0], ends[:-1] + 1))
    if int((ends - starts).max()) >= 8:
        return None  # a 9-byte varint: no row is that long
    # value = sum over a varint's bytes of (byte & 0x7f) << 7 * (bytes after it)
    after = np.repeat(ends, ends - starts + 1) - np.arange(len(b))
    return np.add.reduceat((b & 0x7F) << (7 * after), starts)


def _instances(con: apsw.Connection, table: str, token: str, prefix: bool, offsets: bool) -> np.ndarray:
    """The rows holding `token` (`prefix`: a term starting with it), one entry per occurrence, in order;
    with `offsets`, each entry is row << 32 | the occurrence's offset in the row."""
    view = f"temp.{VOCAB_PREFIX}{table}"
    cond, args = ("term >= ? AND term < ?", (token, token + _TOP)) if prefix else ("term = ?", (token,))
    what = "group_concat(doc), group_concat(offset)" if offsets else "group_concat(doc), NULL"
    sql = f"SELECT {what} FROM {view} WHERE {cond}"
    try:
        docs_text, offsets_text = con.execute(sql, args).fetchone()  # type: ignore[misc]
    except apsw.SQLError:
        con.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS {view} USING fts5vocab(main, {table}, instance)")
        docs_text, offsets_text = con.execute(sql, args).fetchone()  # type: ignore[misc]
    if not docs_text:
        return np.zeros(0, np.int64)
    docs = _ints(docs_text)
    if not offsets:
        return docs if not prefix else np.sort(docs)
    keys = (docs << 32) | _ints(offsets_text)
    return np.sort(keys) if prefix else keys


def _ints(text: object) -> np.ndarray:
    """Comma-separated integers (a group_concat), parsed in C: 6x faster than splitting in Python."""
    return np.fromstring(str(text), dtype=np.int64, sep=",")


def phrase_postings(
    con: apsw.Connection,
    table: str,
    tokenizer: apsw.FTS5Tokenizer,
    phrase: str,
    prefix: bool,
    read: Callable[[str, bool, bool], np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray] | None:
    """(rows holding `phrase`, ascending; how many times each holds it), read as FTS5 reads the quoted
    phrase (its last token a prefix when `prefix`): the tokens consecutive in a row. None when the phrase
    has no token or a token with synonyms (left to FTS5). `tokenizer`: the table's (terms.table_tokenizer);
    `read`: how a token's instances are read (HeldKeywords.instances; default: from the index each time)."""
    if read is None:

        def read(token: str, prefix: bool, offsets: bool) -> np.ndarray:
            return _instances(con, table, token, prefix, offsets)

    flags = apsw.FTS5_TOKENIZE_QUERY | (apsw.FTS5_TOKENIZE_PREFIX if prefix else 0)
    with tokenizer_lock(con):
        raw = list(tokenizer(phrase.encode("utf-8"), flags, None, include_offsets=False))
    tokens: list[str] = []
    for token in raw:
        if isinstance(token, str):
            tokens.append(token)
        elif len(token) == 1:
            tokens.append(str(token[0]))
        else:
            return None
    if not tokens:
        return None
    if len(tokens) == 1:
        docs = read(tokens[0], prefix, False)
    else:  # the positions where token 0 starts a run of all the tokens, one after another
        keys = read(tokens[0], False, True)
        for j, token in enumerate(tokens[1:], start=1):
            last = prefix and j == len(tokens) - 1
            nxt = read(token, last, True)
            keys = np.intersect1d(keys + 1, nxt, assume_unique=True)  # token j right after token j-1
        docs = keys >> 32
    if len(docs) == 0:
        return docs, docs
    start = np.flatnonzero(np.concatenate(([True], docs[1:] != docs[:-1])))
    return docs[start], np.diff(np.append(start, len(docs)))


def _scores(freqs: np.ndarray, sizes: np.ndarray, dfs: Sequence[int], held: Lengths) -> np.ndarray:
    """Each row's FTS5 bm25 (k1 1.2, b 0.75, its IDF), as a positive score. The arithmetic follows
    fts5_aux.c's operation by operation, so each is the very double FTS5 computes (negated)."""
    k1, b = FTS5_K1, FTS5_B
    rows = held.rows
    avgdl = float(held.tokens) / float(rows) if rows else 1.0
    norm = k1 * (1 - b + b * sizes / avgdl)
    score = np.zeros(len(sizes))
    for i, df in enumerate(dfs):
        idf = float(np.log((rows - df + 0.5) / (df + 0.5)))
        if idf <= 0.0:
            idf = 1e-6
        f = freqs[i]
        score += idf * ((f * (k1 + 1.0)) / (f + norm))
    return score


def best_first(score: np.ndarray, m: int) -> np.ndarray:
    """Positions of the `m` best scores, best first, ties by position (the rows are in rowid order):
    as `ORDER BY bm25(t), rowid LIMIT m`. A partition, then a sort of those only."""
    if m < len(score):
        cut = -np.partition(-score, m - 1)[m - 1]  # the m-th best score
        top = np.flatnonzero(score >= cut)  # ties at the cut: all of them, then the first by rowid
    else:
        top = np.arange(len(score))
    return top[np.lexsort((top, -score[top]))][:m]


def _passing(
    con: apsw.Connection, kind: str, filters: Filters, docs: np.ndarray, score: np.ndarray, limit: int
) -> np.ndarray:
    """Positions of the `limit` best rows that pass `filters`, checked in SQL best first: the best
    `limit` and 1/CHECK_MORE more (few of the best fail what every search checks: the trash), then, while
    fewer than `limit` have passed, WIDEN times as many again (a filter that half the rows fail, such as a
    role, needs about twice `limit`; checking every match at once cost more than FTS5's own ranking)."""
    order = best_first(score, limit + limit // CHECK_MORE)
    kept: list[np.ndarray] = []
    done = passed = 0
    while True:
        batch = order[done:]
        ok = passing_ids(con, kind, filters, docs[batch].tolist())
        if ok is None:  # the filters ask nothing of these rows
            return order[:limit]
        kept.append(batch[np.isin(docs[batch], np.fromiter(ok, np.int64, len(ok)))])
        passed += len(kept[-1])
        if passed >= limit or len(order) == len(score):
            return np.concatenate(kept)[:limit]
        done = len(order)  # best_first's order is total (score, then position): a longer list extends it
        order = best_first(score, min(len(score), len(order) * WIDEN))


class HoldingMixin(StoreCore):
    """A Store's held keyword index: off by default (one-shot commands let FTS5 rank), on in long-lived
    processes. Here rather than in the core so the core never depends on a feature package (the search
    mixins build on the core, not the other way round)."""

    _held_index: HeldKeywords | None = None
    _held_index_lock = threading.Lock()

    def _held(self) -> HeldKeywords:
        with self._held_index_lock:  # one index per store, whichever thread asks first
            if self._held_index is None:
                self._held_index = HeldKeywords()
            return self._held_index

    def hold_keywords(self, *, load: bool = False) -> None:
        """Rank keyword matches in process from now on (long-lived processes: the TUI, the MCP server).
        Each keyword index's row lengths (8 bytes a row) are read by the first search, or now with `load`
        (e.g. in a worker: about 0.1 s at 145,000 messages + 100,000 memories); the postings of common
        terms are kept between searches (at most CACHE_BYTES)."""
        self.in_memory_keywords = True
        held = self._held()
        if load:
            held.load(self.con)

    def held_keywords(self) -> HeldKeywords | None:
        """What store.search.keyword uses to rank in process, when in_memory_keywords is on."""
        return self._held() if self.in_memory_keywords else None

    def keyword_memory_bytes(self) -> int:
        """Bytes held for ranking keyword matches in process: row lengths and kept postings."""
        return 0 if self._held_index is None else self._held_index.nbytes
