"""Text as the keyword index sees it, and user text turned into a safe FTS5 expression.

Why CJK characters are spaced out: FTS5's built-in `unicode61` tokenizer keeps a run of Han characters
as one token ("我们决定用向量数据库" is a single token), so the two-character word "向量" inside it could
never match, and `trigram` needs three characters. Indexing every CJK character as its own token and
searching a CJK word as a phrase of its characters ("向 量", adjacent and in order) finds any word of
any length with the tokenizer every SQLite has, so other tools can still read the index.

Why we build FTS5 expressions ourselves: raw user text is FTS5 syntax (`AND`, `c++`, `-x`, `"`,
`col:`), and `apsw.fts5query.quote("AND")` returns bare `AND`. We quote every token, always.
"""

from __future__ import annotations

import re
import unicodedata
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import apsw

# Han (incl. extensions and compatibility), Hiragana, Katakana, Hangul syllables, CJK punctuation-free.
_CJK = (
    "\u3040-\u30ff"  # Hiragana, Katakana
    "\u3400-\u4dbf"  # CJK ext A
    "\u4e00-\u9fff"  # CJK unified
    "\uac00-\ud7af"  # Hangul syllables
    "\uf900-\ufaff"  # CJK compatibility
    "\U00020000-\U0003134f"  # ext B..G
)
_CJK_CHAR = re.compile(f"([{_CJK}])")
_SPACES = re.compile(r"\s+")
# C0 controls but tab, newline and carriage return, and DEL: spaces in the index and in queries.
_CONTROL_CHARS = "".join(map(chr, [*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F]))
_CONTROL = re.compile(f"[{re.escape(_CONTROL_CHARS)}]")
_CONTROL_BYTES = _CONTROL_CHARS.encode("ascii")

# The keyword index's tokenizer (store.migrations creates the tables with it): which Unicode categories
# make tokens, and English words stemmed by porter ("decided" finds "decide"; CJK tokens pass unchanged).
FTS_TOKENIZE = "porter unicode61 remove_diacritics 2 categories 'L* N* Co So'"
_TOKEN_CATEGORIES = ("L", "N", "Co", "So")

MAX_QUERY_TOKENS = 64
# Only the start of a query is read for keywords: 64 distinct words fit in far less, and a pasted 10 MB
# "query" (repeating the same words, so the distinct-word cap is never reached) must not take minutes.
MAX_QUERY_CHARS = 20_000
_SURROGATE = re.compile("[\ud800-\udfff]")


def unpaired_surrogate(text: str) -> int | None:
    """Where `text` holds an unpaired UTF-16 surrogate (None if nowhere): Python can, SQLite cannot.

    They arrive from JSON "\\ud800" escapes in exports and from command-line bytes that are not UTF-8;
    writing one fails deep inside SQLite, so writers check first and say what is wrong.
    """
    if text.isascii():
        return None
    m = _SURROGATE.search(text)
    return None if m is None else m.start()


def printable(text: str) -> str:
    """`text` with unpaired surrogates replaced by U+FFFD, so it can be shown or written as UTF-8."""
    return _SURROGATE.sub("\ufffd", text)


def index_text(text: str) -> str:
    """The text written into the FTS tables for `text`."""
    if text.isascii():
        # The common case, at memory speed (an import indexes megabytes): ASCII has no CJK to space out,
        # and looking for control characters with bytes.translate is 4x faster than with the regex.
        raw = text.encode("ascii")
        return text if len(raw.translate(None, _CONTROL_BYTES)) == len(raw) else _CONTROL.sub(" ", text)
    return _CJK_CHAR.sub(r" \1 ", _CONTROL.sub(" ", text))


def _has_token_char(token: str) -> bool:
    for ch in token:
        cat = unicodedata.category(ch)
        if cat[0] in "LN" or cat in _TOKEN_CATEGORIES:
            return True
    return False


def query_terms(text: str) -> list[str]:
    """The user's words as the index would see them (CJK spaced), de-duplicated, in order, capped."""
    seen: dict[str, None] = {}
    if len(text) > MAX_QUERY_CHARS:
        # Cut at a space: a word cut in half ("mega" of "megabytes") is a word no row has, and it made a
        # pasted long query find nothing (the floor weighs the query's words by rarity).
        cut = text[: MAX_QUERY_CHARS + 1]
        space = max(cut.rfind(" "), cut.rfind("\n"), cut.rfind("\t"))
        text = cut[:space] if space > MAX_QUERY_CHARS // 2 else cut[:MAX_QUERY_CHARS]
    text = _SURROGATE.sub(" ", text)
    for raw in _SPACES.split(_CONTROL.sub(" ", text).replace('"', " ")):
        if not raw or not _has_token_char(raw):
            continue
        # A CJK run becomes one phrase of its characters; other text stays one phrase per word.
        term = _SPACES.sub(" ", index_text(raw)).strip()
        if term and term.casefold() not in {t.casefold() for t in seen}:
            seen[term] = None
        if len(seen) >= MAX_QUERY_TOKENS:
            break
    return list(seen)


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def fts_query(text: str, *, mode: str = "and", prefix_last: bool = False) -> str | None:
    """A MATCH expression that can never be a syntax error, or None when nothing is searchable.

    mode "and": every word must appear; mode "or": any word (BM25 ranks the rest).
    prefix_last: the last word also matches as a prefix (search as you type).
    """
    terms = query_terms(text)
    if not terms:
        return None
    quoted = [_quote(t) for t in terms]
    if prefix_last and not _CJK_CHAR.search(terms[-1]):
        quoted[-1] += "*"
    return (" OR " if mode == "or" else " AND ").join(quoted)


# -- writing keyword-index rows (inside the caller's transaction) --------------------------------------

FTS_TABLES = ("fts_messages", "fts_memories", "fts_summaries")


def fts_put(con: apsw.Connection, table: str, rowid: int, text: str) -> None:
    """(Re)index one row's text; call inside the transaction that writes the row."""
    assert table in FTS_TABLES
    con.execute(f"DELETE FROM {table} WHERE rowid = ?", (rowid,))
    con.execute(f"INSERT INTO {table}(rowid, body) VALUES (?, ?)", (rowid, index_text(text)))


def fts_delete(con: apsw.Connection, table: str, rowid: int) -> None:
    assert table in FTS_TABLES
    con.execute(f"DELETE FROM {table} WHERE rowid = ?", (rowid,))


# Where each keyword index's text comes from (rowid, text).
FTS_SOURCES = {
    "fts_messages": "SELECT id, content FROM messages",
    "fts_memories": "SELECT id, content FROM long_term_memories",
    "fts_summaries": "SELECT thread_id, content FROM thread_summaries",
}


def rebuild_fts(con: apsw.Connection, tokenize: str = FTS_TOKENIZE) -> None:
    """Drop and re-create every keyword index with `tokenize`, filled from the canonical rows. Call inside
    a transaction (`memapp reindex` does; migration 6 has its own frozen copy, store/m006.py)."""
    for table in FTS_TABLES:
        con.execute(f"DROP TABLE IF EXISTS {table}")
        con.execute(
            f"CREATE VIRTUAL TABLE {table} USING fts5(body, content='', contentless_delete=1, "
            f'tokenize="{tokenize}")'
        )
        rows = [(rowid, index_text(str(text))) for rowid, text in con.execute(FTS_SOURCES[table]).fetchall()]
        con.executemany(f"INSERT INTO {table}(rowid, body) VALUES (?, ?)", rows)
