"""Keyword ranking held in process (store.search.held): the rows FTS5 would rank best, found in numpy.

tests/store/test_keyword_retriever.py runs its whole equality suite through this path too (the "held"
parameter: CJK pairs, prefixes, filters, ties, trash). Here: what it holds (every row's length, read
from the index's docsize varints, long rows included), that it follows writes from this connection and
from another one, that it steps aside inside a transaction, and phrases of several tokens.
On the real apsw + sqlite-vec database in a temp file.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from store import MessageIn, Store, ThreadIn, db
from store.search import held
from store.search.candidates import TABLES
from store.search.filters import Filters
from store.search.held import HeldKeywords, decode_varints, phrase_postings
from store.search.keyword import RESCORE_DEPTH
from store.search.query import parse_query
from store.search.rank import Fusion
from store.search.terms import table_tokenizer
from store.text import fts_put

WORDS = ["say", "restic", "backup", "backups", "nightly", "o'reilly", "熊猫基地", "公司", "thermostat", "the"]


@pytest.fixture(autouse=True)
def reread_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests write and search at once: every change is read at the next search (the throttle on
    re-reading has its own test)."""
    monkeypatch.setattr(held, "REREAD_SHARE", 0)


def _varint(n: int) -> bytes:
    """SQLite's varint (big-endian groups of 7 bits, the high bit set on all but the last byte)."""
    groups = [n & 0x7F]
    n >>= 7
    while n:
        groups.append(0x80 | (n & 0x7F))
        n >>= 7
    return bytes(reversed(groups))


def _both(
    store: Store, query: str, kinds: tuple[str, ...] = ("message", "memory", "summary"), **f: object
) -> None:
    """The held ranking gives the hits the SQL path gives, and it did answer (not left it to FTS5)."""
    parsed = parse_query(query, prefix_last=query.endswith("*"))
    filters = Filters(**f)  # type: ignore[arg-type]
    store.in_memory_keywords = False
    want = store.keyword_hits(parsed, kinds, filters, 50, Fusion())
    store.in_memory_keywords = True
    held = store.held_keywords()
    assert held is not None
    for kind in kinds:
        assert held.best_rows(store.con, kind, filters, parsed.phrases, parsed.prefix, 100) is not None
    assert store.keyword_hits(parsed, kinds, filters, 50, Fusion()) == want, query


@pytest.fixture
def chats(store: Store) -> Store:
    rng = random.Random(7)
    for t in range(6):
        msgs = [
            MessageIn(
                "user" if i % 2 == 0 else "assistant",
                " ".join(rng.choice(WORDS) for _ in range(rng.choice([2, 6, 30]))),
                f"{t}-{i}",
                1_700_000_000.0 + t * 1000 + i,
            )
            for i in range(25)
        ]
        tid = store.write_thread(ThreadIn("generic", f"t{t}", f"thread {t}", msgs)).thread_id
        summary = " ".join(rng.choice(WORDS) for _ in range(12))
        with store.con:
            store.con.execute(
                "INSERT INTO thread_summaries(thread_id, content, last_message_seq, token_count, created_at, "
                "updated_at) VALUES (?, ?, 24, 12, 1.7e9, 1.7e9)",
                (tid, summary),
            )
            fts_put(store.con, "fts_summaries", tid, summary)
    for _ in range(40):
        store.add_memory(" ".join(rng.choice(WORDS) for _ in range(8)), "fact", force=True)
    return store


def test_decode_varints_reads_sqlite_varints() -> None:
    values = [0, 1, 127, 128, 300, 16_383, 16_384, 2_097_151, 2_097_152, 10**9, 2**49 + 5]
    got = decode_varints(b"".join(_varint(v) for v in values))
    assert got is not None and got.tolist() == values
    assert decode_varints(b"") is not None and len(decode_varints(b"")) == 0  # type: ignore[arg-type]
    assert decode_varints(b"\x81") is None  # does not end a varint


def test_lengths_equal_fts5s_own_row_sizes(chats: Store) -> None:
    """Every row's held length is the size FTS5's API reports for it, long rows (2- and 3-byte varints)
    and the index's totals included."""
    long_text = " ".join(["restic"] * 20_000)  # 20,000 tokens: a 3-byte varint
    tid = chats.write_thread(
        ThreadIn(
            "generic", "long", "long", [MessageIn("user", long_text + " nightly", "l-0", 1_800_000_000.0)]
        )
    ).thread_id
    assert tid
    held = HeldKeywords()
    con = chats.con
    for table in TABLES.values():
        lengths = held.lengths(con, table)
        assert lengths is not None
        sizes = dict(
            (int(r), [int(x) for x in str(tf).split()])
            for r, tf in con.execute(
                f"SELECT rowid, memapp_tf({table}) FROM {table} WHERE {table} MATCH ?",
                ('"say" OR "restic" OR "backup" OR "nightly" OR "the"',),
            )
        )
        assert sizes, table
        for rid, (rows, tokens, size, *_) in sizes.items():
            assert lengths.lengths[rid] == size and lengths.rows == rows and lengths.tokens == tokens
    assert int(held.lengths(con, "fts_messages").lengths.max()) == 20_001  # type: ignore[union-attr]
    assert held.nbytes > 0
    _both(chats, "restic nightly")


def test_follows_writes_from_this_and_another_connection(chats: Store, db_path: Path) -> None:
    _both(chats, "say restic backups")
    before = chats.held_keywords()
    assert before is not None
    thread = chats.write_thread(
        ThreadIn("generic", "new", "new", [MessageIn("user", "thermostat thermostat restic", "n-0", 1.9e9)])
    )
    _both(chats, "thermostat restic")  # the new row, its length read again
    other = db.connect(db_path)
    with other:
        fts_put(other, "fts_memories", 99_999, "thermostat " * 40)
    _both(chats, "thermostat say")  # written by another connection
    with other:
        other.execute("DELETE FROM fts_memories WHERE rowid = 99999")
    _both(chats, "thermostat say")
    chats.delete_thread(thread.thread_id)
    mid = chats.add_memory("thermostat nightly backup", "fact", force=True).memory.id
    chats.edit_memory(mid, content="thermostat " * 30)  # the same id, another length
    _both(chats, "thermostat nightly")
    chats.delete_memory(mid)  # in the trash: still in the index, never a hit
    _both(chats, "thermostat nightly")
    other.close()


def test_steps_aside_inside_a_transaction(chats: Store) -> None:
    """Rows written in the caller's open transaction are found: the SQL path answers there."""
    held = HeldKeywords()
    chats.con.execute("BEGIN")
    try:
        fts_put(chats.con, "fts_memories", 77_777, "zyzzyva zyzzyva")
        parsed = parse_query("zyzzyva")
        assert held.best_rows(chats.con, "memory", Filters(), parsed.phrases, None, 10) is None
        chats.hold_keywords()
        assert not chats.keyword_hits(parsed, ["memory"], Filters(), 10)  # not a memory row: no hit
        assert chats.keyword_hits(parsed, ["message"], Filters(), 10) == []
    finally:
        chats.con.execute("ROLLBACK")


def test_phrases_of_several_tokens_and_prefixes(chats: Store) -> None:
    """A phrase is its tokens one after another (o'reilly, CJK pairs); a prefix matches every term
    starting with it, the last token of a phrase too."""
    con = chats.con
    tok = table_tokenizer(con, "fts_messages")
    assert tok is not None
    docs, counts = phrase_postings(con, "fts_messages", tok, "熊 猫", False)  # type: ignore[misc]
    want = [
        int(r)
        for (r,) in con.execute(
            "SELECT rowid FROM fts_messages WHERE fts_messages MATCH '\"熊 猫\"' ORDER BY rowid"
        )
    ]
    assert docs.tolist() == want and (counts >= 1).all() and np.all(np.diff(docs) > 0)
    for query in (
        "o'reilly backup",
        "熊猫基地 公司",
        "what about the 熊猫",
        "say backu*",
        "o'rei*",
        "nightl*",
    ):
        _both(chats, query)
    _both(chats, "backu*", kinds=("message",), role="user")


def test_kept_postings_are_reused_until_the_index_changes(
    chats: Store, monkeypatch: pytest.MonkeyPatch, db_path: Path
) -> None:
    """A common term's postings are read once and answered from memory after; any write to the index
    (from this connection or another) makes the next search read them again, and the hits stay equal
    to FTS5's."""
    monkeypatch.setattr(held, "CACHE_MIN", 1)
    _both(chats, "restic nightly")
    kept = chats.held_keywords()
    assert kept is not None and kept.reads > 0
    reads, reused = kept.reads, kept.reused
    _both(chats, "restic nightly")
    assert kept.reads == reads and kept.reused > reused  # nothing read again
    chats.write_thread(
        ThreadIn("generic", "n", "n", [MessageIn("user", "restic restic restic", "n-0", 1.9e9)])
    )
    _both(chats, "restic nightly")  # the new row is a hit: the kept postings were not used
    assert kept.reads > reads
    reads = kept.reads
    other = db.connect(db_path)
    with other:
        fts_put(other, "fts_memories", 88_888, "nightly " * 5)
    _both(chats, "restic nightly")
    assert kept.reads > reads
    other.close()


def test_kept_postings_stay_within_their_bound(chats: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(held, "CACHE_MIN", 1)
    monkeypatch.setattr(held, "CACHE_BYTES", 4_000)
    chats.hold_keywords()
    kept = chats.held_keywords()
    assert kept is not None

    def postings_bytes() -> int:
        lengths = [kept.lengths(chats.con, t) for t in TABLES.values()]
        return kept.nbytes - sum(x.nbytes for x in lengths if x is not None)

    for word in WORDS:
        _both(chats, f"{word} nightly")
        assert 0 <= postings_bytes() <= 4_000
    assert postings_bytes() > 0 and chats.keyword_memory_bytes() == kept.nbytes
    kept.drop_postings()
    assert postings_bytes() == 0
    _both(chats, "restic say")


def test_a_filter_the_best_rows_fail_is_checked_a_widening_few_at_a_time(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Role = user where the best-scoring rows are all the assistant's: the rows are checked best first,
    WIDEN times as many each round, until enough pass; not every match at once."""
    short = [MessageIn("assistant", "zebra zebra", f"a-{i}", 1.7e9 + i) for i in range(300)]
    user = [
        MessageIn("user", "zebra " + "and some other words " * 3, f"u-{i}", 1.8e9 + i) for i in range(200)
    ]
    long = [MessageIn("assistant", "zebra " + "filler text " * 40, f"l-{i}", 1.9e9 + i) for i in range(2000)]
    store.write_thread(ThreadIn("generic", "z", "z", short + user + long))
    checked: list[int] = []
    real = held.passing_ids

    def counting(con: object, kind: str, filters: Filters, ids: list[int]) -> set[int] | None:
        checked.append(len(ids))
        return real(con, kind, filters, ids)  # type: ignore[arg-type]

    monkeypatch.setattr(held, "passing_ids", counting)
    limit = RESCORE_DEPTH  # what keyword_hits asks the held ranking for
    first = limit + limit // held.CHECK_MORE
    _both(store, "zebra", kinds=("message",), role="user")
    # none of the first `first` is the user's (the 300 short rows score best), 148 of the next: enough
    assert checked == [first, first * held.WIDEN - first] * 2, checked  # _both asks twice
    checked.clear()
    _both(store, "zebra", kinds=("message",), role="assistant")
    assert checked == [first] * 2, checked


def test_load_reads_every_index_before_the_first_search(chats: Store) -> None:
    """hold_keywords(load=True) (the TUI's model worker): the row lengths are read then, not by a search."""
    assert chats.keyword_memory_bytes() == 0
    chats.hold_keywords(load=True)
    rows = sum(int(db.scalar(chats.con, f"SELECT max(rowid) + 1 FROM {t}")) for t in TABLES.values())
    assert chats.keyword_memory_bytes() == 8 * rows
    _both(chats, "restic nightly")


def test_an_index_that_keeps_changing_is_ranked_by_fts5_between_readings(
    chats: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Soon after a reading (REREAD_SHARE times its cost), a changed index is not read again: FTS5
    ranks that search, with the same hits; later the lengths are read again."""
    monkeypatch.setattr(held, "REREAD_SHARE", 10**9)  # "soon" lasts for the whole test
    _both(chats, "restic nightly")  # the first reading is never put off
    chats.write_thread(ThreadIn("generic", "n", "n", [MessageIn("user", "restic zyzzyva", "n-0", 1.9e9)]))
    kept = chats.held_keywords()
    assert kept is not None
    parsed = parse_query("restic zyzzyva")
    assert kept.best_rows(chats.con, "message", Filters(), parsed.phrases, None, 10) is None
    assert kept.best_rows(chats.con, "memory", Filters(), parsed.phrases, None, 10) is not None  # unchanged
    hits = chats.keyword_hits(parsed, ["message"], Filters(), 10)
    assert hits and hits[0].key == ("message", int(db.scalar(chats.con, "SELECT max(id) FROM messages")))
    monkeypatch.setattr(held, "REREAD_SHARE", 0)
    _both(chats, "restic zyzzyva")  # read again: the held ranking answers, the same hits
