"""What the Store's mixins may rely on (declared once, for readers and for mypy)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import apsw
    import numpy as np

    from embeddings import Embedder, TokenCounter
    from store.config import Config
    from store.vectors.codes import CodeTable
    from store.vectors.rows import VectorIndex


class StoreBase:
    if TYPE_CHECKING:
        config: Config
        tokens: TokenCounter
        embedder: Embedder | None

        @property
        def con(self) -> apsw.Connection: ...

        @property
        def vectors(self) -> VectorIndex: ...

        @property
        def vector_problem(self) -> str | None: ...

        def code_table(self, name: str) -> CodeTable | None: ...

        def embed_texts(self, texts: Sequence[str], *, checked: bool = False) -> np.ndarray | None: ...

        def _ensure_vector_tables(self) -> None: ...

        def _scalar(self, sql: str, args: Sequence[Any] = ()) -> Any: ...


def json_dumps(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def json_loads(text: str | None) -> Any:
    import json

    if not text:
        return {}
    try:
        return json.loads(text)
    except ValueError:
        return {}


FTS_TABLES = ("fts_messages", "fts_memories", "fts_summaries")


def fts_put(con: apsw.Connection, table: str, rowid: int, text: str) -> None:
    """(Re)index one row's text; call inside the transaction that writes the row."""
    from store.text import index_text

    assert table in FTS_TABLES
    con.execute(f"DELETE FROM {table} WHERE rowid = ?", (rowid,))
    con.execute(f"INSERT INTO {table}(rowid, body) VALUES (?, ?)", (rowid, index_text(text)))


def fts_delete(con: apsw.Connection, table: str, rowid: int) -> None:
    assert table in FTS_TABLES
    con.execute(f"DELETE FROM {table} WHERE rowid = ?", (rowid,))


class read_snapshot:  # noqa: N801 - used like a function: `with read_snapshot(con):`
    """A read transaction: one consistent view across several queries, without taking the write lock
    (`with con:` is IMMEDIATE for writers, which would block imports during an export)."""

    def __init__(self, con: apsw.Connection) -> None:
        self.con = con

    def __enter__(self) -> apsw.Connection:
        self.con.execute("BEGIN DEFERRED")
        return self.con

    def __exit__(self, *exc: object) -> None:
        self.con.execute("COMMIT" if exc[0] is None else "ROLLBACK")
