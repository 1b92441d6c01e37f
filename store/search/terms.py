"""How many rows of a keyword index contain each phrase of a query (BM25's document frequency).

Why not `SELECT count(*) FROM fts WHERE fts MATCH '"phrase"'`, as before: that walks every matching row
through SQLite's virtual machine, one statement per phrase and kind, and a common word ("say", "use")
matches tens of thousands of rows in a big archive. FTS5 keeps each term's postings together, and an
`fts5vocab` table (one per keyword index, created per connection in the temp schema: nothing is stored)
counts one term's rows inside FTS5's own C loop, with rows deleted from the contentless index already
left out. So a phrase that is one index term is looked up there, after tokenising it with the table's
own tokenizer (read from its CREATE statement, so stemming and case folding match what the index holds:
"backups" is looked up as "backup"). What is not one term keeps the exact count: a prefix being typed
(many terms, and a row holding two of them must count once), a CJK pair or "o'reilly" (a phrase of two
tokens, whose rows the vocabulary cannot tell), or an index whose tokenizer cannot be read.
"""

from __future__ import annotations

import re
import shlex
import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field

import apsw

VOCAB_PREFIX = "memapp_vocab_"  # temp.memapp_vocab_<table>: the fts5vocab 'row' view of one keyword index
_TOKENIZE = re.compile(r"""tokenize\s*=\s*(?:"((?:[^"]|"")*)"|'((?:[^']|'')*)')""", re.IGNORECASE)


@dataclass(slots=True)
class _Known:
    """What one connection knows: each keyword index's tokenizer, by the index's CREATE statement (a
    rebuilt index may have another). One lock for them: the porter tokenizer writes into a buffer of its
    own, and two searches can share a connection from two threads."""

    tokenizers: dict[str, apsw.FTS5Tokenizer | None] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


_KNOWN: weakref.WeakKeyDictionary[apsw.Connection, _Known] = weakref.WeakKeyDictionary()
_KNOWN_LOCK = threading.Lock()


def parse_tokenize(ddl: str) -> list[str]:
    """The tokenizer and its arguments from an FTS5 CREATE statement (FTS5's default: unicode61)."""
    match = _TOKENIZE.search(ddl)
    spec = (
        "unicode61"
        if match is None
        else (match[1] or "").replace('""', '"') or (match[2] or "").replace("''", "'")
    )
    return shlex.split(spec)


def _known(con: apsw.Connection) -> _Known:
    with _KNOWN_LOCK:
        known = _KNOWN.get(con)
        if known is None:
            known = _KNOWN[con] = _Known()
        return known


def table_tokenizer(con: apsw.Connection, table: str) -> apsw.FTS5Tokenizer | None:
    """The tokenizer `table` was created with, as an apsw FTS5Tokenizer; None if it cannot be made."""
    row = con.execute("SELECT sql FROM sqlite_master WHERE name = ? AND type = 'table'", (table,)).fetchone()
    ddl = str(row[0]) if row and row[0] else ""
    tokenizers = _known(con).tokenizers
    if ddl not in tokenizers:
        try:
            words = parse_tokenize(ddl)
            tokenizers[ddl] = con.fts5_tokenizer(words[0], words[1:]) if ddl and words else None
        except (ValueError, apsw.Error):
            tokenizers[ddl] = None
    return tokenizers[ddl]


def tokenizer_lock(con: apsw.Connection) -> threading.Lock:
    """Hold this while calling a tokenizer from `table_tokenizer(con, ...)` (see _Known)."""
    return _known(con).lock


def _docs(con: apsw.Connection, table: str, term: str) -> int:
    """The rows of `table` holding the index term `term`, from its fts5vocab view (made on first use, and
    again if a rolled-back transaction took it away)."""
    sql = f"SELECT doc FROM temp.{VOCAB_PREFIX}{table} WHERE term = ?"
    try:
        row = con.execute(sql, (term,)).fetchone()
    except apsw.SQLError:
        con.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{VOCAB_PREFIX}{table} USING fts5vocab(main, {table}, row)"
        )
        row = con.execute(sql, (term,)).fetchone()
    return int(row[0]) if row else 0  # type: ignore[arg-type]


def single_term(tokenizer: apsw.FTS5Tokenizer, phrase: str) -> str | None:
    """The one index term `phrase` is, as FTS5 reads a quoted phrase; None if it is not exactly one."""
    tokens = list(tokenizer(phrase.encode("utf-8"), apsw.FTS5_TOKENIZE_QUERY, None, include_offsets=False))
    if len(tokens) != 1:
        return None
    token = tokens[0]  # without offsets: a tuple of the token and its colocated synonyms
    if isinstance(token, str):
        return token
    return str(token[0]) if len(token) == 1 else None


def count_rows(con: apsw.Connection, table: str, phrase: str, *, prefix: bool = False) -> int:
    """The exact count, through MATCH (any phrase, prefix or not)."""
    expr = '"' + phrase.replace('"', '""') + '"' + ("*" if prefix else "")
    row = con.execute(f"SELECT count(*) FROM {table} WHERE {table} MATCH ?", (expr,)).fetchone()
    return int(row[0]) if row else 0  # type: ignore[arg-type]


def document_frequencies(
    con: apsw.Connection, table: str, phrases: Sequence[str], prefix: str | None = None
) -> list[int]:
    """How many rows of `table` contain each phrase (`prefix`: the phrase matched as a prefix)."""
    tokenizer = table_tokenizer(con, table)
    with _known(con).lock:
        terms = [None if tokenizer is None or p == prefix else single_term(tokenizer, p) for p in phrases]
    return [
        count_rows(con, table, p, prefix=p == prefix) if term is None else _docs(con, table, term)
        for p, term in zip(phrases, terms, strict=True)
    ]
