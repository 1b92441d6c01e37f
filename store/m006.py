"""Migration 6 (stemmed keyword indexes), kept here as it was released: the rebuild carries its own code.

Why a copy: it called `store.text.rebuild_fts`, live code that also serves `memapp reindex`, so a later
change to how text is indexed would silently change what upgrading an old database does. Nothing here
imports store code; do not edit it to follow store.text.

What it does: every keyword index is dropped and re-created with the porter stemmer in front of the same
unicode61 tokenizer, and refilled from the canonical rows, CJK characters spaced out (each its own token)
and control characters turned into spaces, as store.text indexed text at schema version 6.
"""

from __future__ import annotations

import re

import apsw

_TOKENIZE = "porter unicode61 remove_diacritics 2 categories 'L* N* Co So'"
_SOURCES = {
    "fts_messages": "SELECT id, content FROM messages",
    "fts_memories": "SELECT id, content FROM long_term_memories",
    "fts_summaries": "SELECT thread_id, content FROM thread_summaries",
}
_CJK = (
    "\u3040-\u30ff"  # Hiragana, Katakana
    "\u3400-\u4dbf"  # CJK ext A
    "\u4e00-\u9fff"  # CJK unified
    "\uac00-\ud7af"  # Hangul syllables
    "\uf900-\ufaff"  # CJK compatibility
    "\U00020000-\U0003134f"  # ext B..G
)
_CJK_CHAR = re.compile(f"([{_CJK}])")
_CONTROL_CHARS = "".join(map(chr, [*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F]))
_CONTROL = re.compile(f"[{re.escape(_CONTROL_CHARS)}]")
_CONTROL_BYTES = _CONTROL_CHARS.encode("ascii")


def migrate(con: apsw.Connection) -> None:
    """Re-create and refill the three keyword indexes, in the caller's transaction."""
    for table, source in _SOURCES.items():
        con.execute(f"DROP TABLE IF EXISTS {table}")
        con.execute(
            f"CREATE VIRTUAL TABLE {table} USING fts5(body, content='', contentless_delete=1, "
            f'tokenize="{_TOKENIZE}")'
        )
        rows = [(rowid, _index_text(str(text))) for rowid, text in con.execute(source).fetchall()]
        con.executemany(f"INSERT INTO {table}(rowid, body) VALUES (?, ?)", rows)


def _index_text(text: str) -> str:
    if text.isascii():
        raw = text.encode("ascii")
        return text if len(raw.translate(None, _CONTROL_BYTES)) == len(raw) else _CONTROL.sub(" ", text)
    return _CJK_CHAR.sub(r" \1 ", _CONTROL.sub(" ", text))
