"""`StoreCore`: what every part of the Store stands on: the per-thread connections, the vector index of
each, the embedding model and why it may be unusable, and a few small helpers for the feature modules.

The Store is one object (README "Python API") assembled from mixins, one per kind of canonical row
(memories.py, threads.py) plus search; each mixin inherits this core, so its calls go down to code it
imports, never up to the class that combines them. Feature modules (summaries, suggestions, context,
export, maintenance) use the same public members (`con`, `scalar()`, `embed_texts()`, `embed_query()`,
`vectors`, `ensure_vector_tables()`), never a private one (ruff SLF001 is on).

Each thread gets its own connection (apsw connections must not be shared across threads), opened on
first use through `store.db.connect`, so TUI workers, the MCP server and scripts can all call the same
Store. Embedding happens *before* a write transaction begins (seconds of model work must never hold the
write lock), and a Store with no usable model still works: rows are written without vectors and
`memapp embed` fills them in later.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, Self

import apsw
import numpy as np

from embeddings import Embedder, TokenCounter, precision_switching
from embeddings.onnx_embedder import make_embedder
from store import db
from store.access import AccessCounts
from store.config import Config
from store.records import ThreadIn
from store.vectors import codes
from store.vectors.codes import CodeTable
from store.vectors.rows import VectorIndex

log = logging.getLogger("store.store")

EmbedderArg = Embedder | None | Literal["auto"]


class StoreCore:
    def __init__(
        self,
        path: str | Path,
        *,
        config: Config | None = None,
        embedder: EmbedderArg = "auto",
        tokens: TokenCounter | None = None,
        create: bool = True,
    ) -> None:
        self.path = Path(path)
        self.config = config or Config()
        self._local = threading.local()
        self._all: list[tuple[threading.Thread, apsw.Connection]] = []
        self._all_lock = threading.Lock()
        self._create = create
        self.tokens = tokens or TokenCounter(
            self.config.tokenizer.encoding, self.config.tokenizer.bpe_file or None
        )
        self.embedder_problem: str | None = None
        self.embedder: Embedder | None
        if embedder == "auto":
            self.embedder = self._default_embedder()
        else:
            self.embedder = embedder
            if embedder is None:
                self.embedder_problem = "semantic search is off (no embedding model)"
        # Long-lived processes (TUI, MCP server) turn this on (hold_vectors): vector search then scans codes
        # held in memory (store.vectors.codes), loaded once and kept in step with chat.db.
        self.in_memory_vectors = False
        # ... and this (hold_keywords, store.search.held): FTS5's best rows for a query are then found in
        # numpy over the query words' postings, with each index's row lengths held and kept in step.
        self.in_memory_keywords = False
        self._code_tables: dict[str, CodeTable] = {}
        self._code_lock = threading.Lock()
        # Access counts are written without making an answer wait (store.access); off in a read-only
        # server (`memapp mcp --read-only`), which must never write chat.db.
        self.track_access = True
        self.access_counts = AccessCounts(lambda: self.con, lambda: db.BUSY_TIMEOUT_MS)
        _ = self.con  # open now: a bad path or newer schema fails here, with a clear message

    def _default_embedder(self) -> Embedder | None:
        cfg = self.config.embedding
        if not cfg.enabled:
            self.embedder_problem = "semantic search is disabled in config (embedding.enabled = false)"
            return None
        try:
            if cfg.model == "multilingual-e5-small":
                from embeddings.e5 import E5Embedder

                return E5Embedder(
                    batch_size=cfg.batch_size, chunk_tokens=cfg.chunk_tokens, chunk_overlap=cfg.chunk_overlap
                )
            return make_embedder(
                cfg.model_path or None,
                backend=cfg.backend,
                precision=cfg.precision,
                batch_size=cfg.batch_size,
                chunk_tokens=cfg.chunk_tokens,
                chunk_overlap=cfg.chunk_overlap,
            )
        except Exception as exc:
            self.embedder_problem = str(exc)
            return None

    # -- connections ---------------------------------------------------------------------------------

    @property
    def con(self) -> db.Connection:
        con: db.Connection | None = getattr(self._local, "con", None)
        if con is None:
            con = db.connect(self.path, create=self._create)
            self._local.con = con
            self._local.vectors = VectorIndex(con)
            with self._all_lock:
                self._close_finished_threads()
                self._all.append((threading.current_thread(), con))
        return con

    def code_table(self, name: str) -> CodeTable | None:
        """The in-memory copy of vector table `name` ("memories" or "chunks") when in_memory_vectors is
        on and the database has the current layout, else None (vec0 searches instead)."""
        if not self.in_memory_vectors or self.embedder is None:
            return None
        facts = self.vectors.facts()
        if not facts.tables_exist or facts.legacy:
            return None
        with self._code_lock:
            table = self._code_tables.get(name)
            if table is None or table.dim != self.embedder.dimension:
                spec = codes.MEMORIES if name == "memories" else codes.CHUNKS
                table = self._code_tables[name] = CodeTable(spec, self.embedder.dimension)
        return None if table.too_big else table

    def hold_vectors(self, *, load: bool = True) -> None:
        """Search vectors in process from now on (long-lived processes: the TUI, the MCP server); `load`
        reads the held copies now (e.g. in a worker after the model loaded) instead of on the first search."""
        self.in_memory_vectors = True
        if load and self.vector_problem is None:
            for name in ("memories", "chunks"):
                table = self.code_table(name)
                if table is not None:
                    table.current(self.con)

    def vector_memory_bytes(self) -> int:
        """Bytes held by the in-memory vector copies (0 when none is loaded)."""
        return sum(t.nbytes for t in self._code_tables.values())

    def _close_finished_threads(self) -> None:
        """Close the connections of threads that have ended (the TUI runs each worker in a thread of its
        own: without this, every search or import left a connection, and its file handles, open until
        the app quit). A finished thread cannot be using its connection any more."""
        alive = []
        for thread, con in self._all:
            if thread.is_alive():
                alive.append((thread, con))
            else:
                with contextlib.suppress(apsw.Error):
                    con.close()
        self._all = alive

    @property
    def vectors(self) -> VectorIndex:
        """The vector tables as seen from this thread's connection (their layout read once per write)."""
        _ = self.con
        index: VectorIndex = self._local.vectors
        return index

    def close(self) -> None:
        self.access_counts.close()  # what is still counted in memory is written before the connections go
        with self._all_lock:
            for _, con in self._all:
                with contextlib.suppress(apsw.Error):  # closing is best effort
                    con.close()
            self._all.clear()
        self._local = threading.local()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- embedding state -----------------------------------------------------------------------------

    @property
    def vector_problem(self) -> str | None:
        """Why vectors cannot be written or searched right now, or None when they can."""
        if self.embedder is None:
            return self.embedder_problem or "no embedding model"
        if self.embedder_problem:
            return self.embedder_problem
        problem = self.vectors.mismatch(self.embedder.name, self.embedder.dimension)
        recorded = self.vectors.recorded_model() if problem else None
        # The same model at the other precision (float32 / int8): the embedder switches to the one this
        # database was embedded with, so its vectors never mix and no reindex is needed.
        switching = precision_switching(self.embedder)
        if recorded is not None and switching is not None and switching.use_model_of(recorded[0]):
            problem = self.vectors.mismatch(self.embedder.name, self.embedder.dimension)
        return problem

    @property
    def precision_note(self) -> str | None:
        """A hint when this database is embedded at a precision other than the configured one (a chat.db
        embedded in float32 before int8 became the default keeps float32, so its vectors never mix): the
        model in use, and how to move to the configured one. None when they agree or there is no model."""
        if self.embedder is None or self.vector_problem:
            return None
        switching = precision_switching(self.embedder)
        configured = None if switching is None else switching.configured_name
        if configured is None or configured == self.embedder.name:
            return None
        faster = (
            " (the int8 copy encodes about 3x the chunks per CPU-second)"
            if configured.endswith("(int8)")
            else ""
        )
        return (
            f"this chat.db's vectors were made by {self.embedder.name}, so memapp embeds with it here; "
            f"`memapp reindex` re-embeds everything with the configured {configured}{faster}"
        )

    @property
    def semantic_state(self) -> str:
        """'ready', 'not loaded' (will load on first use) or 'unavailable: why'."""
        problem = self.vector_problem
        if problem:
            return f"unavailable: {problem}"
        assert self.embedder is not None
        return "ready" if self.embedder.loaded else "not loaded"

    def load_model(self) -> bool:
        """Load the embedding model now (for workers). False, with the reason recorded, on failure."""
        if self.vector_problem:
            return False
        assert self.embedder is not None
        name = self.embedder.name
        # Asked again when loading changed the model's name: an int8 encoder that fell back to
        # sentence-transformers makes float32 vectors now, which a database of int8 vectors must refuse.
        return self._load_model() and (self.embedder.name == name or not self.vector_problem)

    def _load_model(self) -> bool:
        assert self.embedder is not None
        try:
            self.embedder.load()  # idempotent: cheap once loaded
            return True
        except Exception as exc:
            log.warning("embedding model failed to load: %s", exc)
            self.embedder_problem = f"the embedding model failed to load: {exc}"
            return False

    def embed_texts(self, texts: Sequence[str], *, checked: bool = False) -> np.ndarray | None:
        """Vectors for `texts`, or None when no model is usable (the rows are written without them); a
        failure is recorded in `embedder_problem`. `checked`: the caller has just found `vector_problem`
        empty (saves reading the database's recorded model again)."""
        name = self.embedder.name if self.embedder else None
        if not texts or not (self._load_model() if checked and self.embedder else self.load_model()):
            return None
        assert self.embedder is not None
        try:
            vectors = self.embedder.embed_documents(list(texts))
        except Exception as exc:
            log.warning("embedding failed: %s", exc)
            self.embedder_problem = f"embedding failed: {exc}"
            return None
        # Loading can change what the vectors are (an int8 encoder that fell back to sentence-transformers
        # makes float32 ones, and its name says so): never hand them out for a database of another model's.
        if self.embedder.name != name and (problem := self.vector_problem):
            self.embedder_problem = problem
            return None
        return vectors

    def embed_query(self, text: str) -> np.ndarray | None:
        if not self.load_model():
            return None
        assert self.embedder is not None
        try:
            return self.embedder.embed_query(text)
        except Exception as exc:
            self.embedder_problem = f"embedding failed: {exc}"
            return None

    def ensure_vector_tables(self) -> None:
        """Create (or complete) the vector tables for this store's model, inside the caller's write
        transaction, before writing vectors (answered from `vectors` when nothing needs doing)."""
        assert self.embedder is not None
        self.vectors.ensure_tables(self.embedder.name, self.embedder.dimension)

    # -- secrets (store.secrets; docs/guide/privacy.md) ------------------------------------------------

    @property
    def redacting(self) -> bool:
        """Whether secrets are replaced by markers in text entering chat.db (`[privacy] redact = "store"`)."""
        return self.config.privacy.redact == "store"

    def redact(self, text: str) -> str:
        """The gate every text entering chat.db passes (memories, edits, titles, suggestions, restores):
        `text` with its secrets replaced by markers, or as it is with `redact = "off"`."""
        if not self.redacting:
            return text
        from store.secrets.detector import redact  # the detector alone: no whole-database code

        return redact(text)[0]

    def redact_thread(self, thread: ThreadIn) -> ThreadIn:
        """The same gate for an imported thread: its title, message texts and metadata (store.secrets.rows)."""
        if not self.redacting:
            return thread
        from store.secrets.rows import redact_thread

        return redact_thread(thread)

    # -- settings and the data version: per database, not per kind of row (docs/design/store-surface.md) --

    def get_setting(self, key: str, default: str | None = None) -> str | None:
        """A value from the `settings` table (per database: e.g. the TUI's theme)."""
        row = self.con.execute("SELECT value FROM settings WHERE key = ?", (key,)).fetchone()
        return default if row is None else str(row[0])

    def set_setting(self, key: str, value: str) -> None:
        with self.con:
            self.con.execute(
                "INSERT INTO settings(key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

    def data_version(self) -> int:
        """SQLite's `PRAGMA data_version` on this thread's connection: it changes when another
        connection (another process, or another thread's connection) has committed a write. The TUI
        polls it (a few microseconds) to notice the CLI or the MCP server writing beside it."""
        return int(self.con.execute("PRAGMA data_version").fetchall()[0][0])  # type: ignore[arg-type]

    def scalar(self, sql: str, args: Sequence[Any] = ()) -> Any:
        """The first column of the first row of `sql` on this thread's connection, or None."""
        return db.scalar(self.con, sql, args)
