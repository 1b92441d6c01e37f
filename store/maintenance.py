"""Whole-database operations: doctor, embed what is missing, reindex, backup.

`embed_missing` commits batch by batch, so an interrupted run loses at most one batch and the next run
continues where it stopped. `reindex` rebuilds the derived indexes (FTS, then vectors with the
configured model) from the canonical rows; `backup` uses VACUUM INTO, which reads one consistent
snapshot even while other processes write.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import apsw

from embeddings import precision_switching, runtime_reporting
from store.checks import SAMPLE, content_problems
from store.errors import StoreError
from store.files import commit_partial, partial_file, refuse_database_paths
from store.store import Store

Progress = Callable[[int, int], None] | None

BATCH = 256


def doctor(store: Store, *, load_model: bool = True, full: bool = False) -> dict[str, Any]:
    """Everything `memapp doctor` reports. Never raises on a damaged file: a part that cannot be read is
    reported as a problem (a corrupted page once crashed doctor itself). `full`: compare every row's
    content, not a sample (store/checks.py)."""
    problems: list[str] = []

    def attempt(what: str, fn: Callable[[], Any], default: Any = None) -> Any:
        try:
            return fn()
        except apsw.Error as exc:
            problems.append(f"{what}: could not be read ({exc})")
            return default

    integrity = attempt("integrity check", store.integrity_check, "not checked")
    index_problems = attempt("indexes", store.check_indexes, [])
    content = content_problems(store.con, full=full)
    embedder = store.embedder
    model: dict[str, Any] = {
        "name": embedder.name if embedder else None,
        "dimension": embedder.dimension if embedder else None,
    }
    if load_model and not store.vector_problem:
        t0 = time.monotonic()
        store.load_model()
        model["load_seconds"] = round(time.monotonic() - t0, 2)
    model["state"] = store.semantic_state
    model["note"] = store.precision_note
    # Which runtime encodes (onnx, or sentence-transformers as the fallback) and why it fell back.
    runtime = runtime_reporting(embedder)
    model["runtime"] = None if runtime is None else runtime.backend
    model["runtime_problem"] = None if runtime is None else runtime.backend_problem
    rec = attempt("vector model", store.vectors.recorded_model)
    model["recorded_in_database"] = None if rec is None else {"name": rec[0], "dimension": rec[1]}
    missing_messages = attempt(
        "missing vectors",
        lambda: store.scalar(
            "SELECT count(*) FROM messages m WHERE trim(content) != '' AND NOT EXISTS "
            "(SELECT 1 FROM message_chunks c WHERE c.message_id = m.id)"
        ),
    )
    missing_memories = attempt("missing vectors", lambda: len(store.memories_missing_vectors(limit=10**9)))
    return {
        "database": str(store.path),
        "schema_version": store.schema_version(),
        "integrity": integrity,
        "index_problems": index_problems,
        "content_problems": content,
        "content_checked": "all rows" if full else f"a sample of up to {SAMPLE} rows per table",
        "read_problems": problems,
        "tokenizer": store.tokens.status,
        "tokenizer_exact": store.tokens.exact,
        "model": model,
        "missing_vectors": {"messages": missing_messages, "memories": missing_memories},
        "config": store.config.source or None,
        "counts": attempt("counts", store.stats, {}),
        "ok": integrity == "ok" and not index_problems and not content and not problems,
    }


def embed_missing(store: Store, *, progress: Progress = None) -> dict[str, Any]:
    """Embed every message and memory that has no vector yet, a batch per transaction."""
    if store.vector_problem:
        return {"messages": 0, "memories": 0, "error": store.vector_problem}
    total = int(
        store.scalar(
            "SELECT count(*) FROM messages m WHERE trim(content) != '' AND NOT EXISTS "
            "(SELECT 1 FROM message_chunks c WHERE c.message_id = m.id)"
        )
    )
    total += len(store.memories_missing_vectors(limit=10**9))
    done_messages = done_memories = 0
    while batch := store.messages_missing_vectors(BATCH):
        if store.embed_messages(batch) == 0:
            return {"messages": done_messages, "memories": done_memories, "error": store.vector_problem}
        done_messages += len(batch)
        if progress:
            progress(done_messages, total)
    while mem_batch := store.memories_missing_vectors(BATCH):
        if store.embed_memories(mem_batch) == 0:
            return {"messages": done_messages, "memories": done_memories, "error": store.vector_problem}
        done_memories += len(mem_batch)
        if progress:
            progress(done_messages + done_memories, total)
    return {"messages": done_messages, "memories": done_memories}


def reindex(store: Store, *, vectors: bool = True, progress: Progress = None) -> dict[str, Any]:
    store.rebuild_keyword_index()
    if not vectors:
        return {"messages": 0, "memories": 0, "keyword_index": "rebuilt"}
    if store.embedder is None:
        return {"messages": 0, "memories": 0, "keyword_index": "rebuilt", "error": store.vector_problem}
    store.drop_vectors()  # also forgets the recorded model, which clears a model mismatch
    # An embedder that switched to this database's precision (float32 / int8) goes back to the configured
    # one: reindexing is how a database moves to it.
    switching = precision_switching(store.embedder)
    if switching is not None:
        switching.use_model_of(switching.configured_name)
    result = embed_missing(store, progress=progress)
    return {**result, "keyword_index": "rebuilt"}


def backup(store: Store, dest: str | Path, *, parents: bool = True) -> Path:
    """A consistent copy of the database at `dest` (0600; refuses to overwrite).

    The database is checked first (`PRAGMA integrity_check`): a damaged one is refused with the reason,
    and nothing is written (issue 31, 9: a backup of a damaged file "succeeded" with a damaged copy).
    VACUUM INTO writes a temporary file beside `dest`, which takes the name only once it is complete and
    synced: an interrupted backup used to leave a partial file under the name, which memapp then opened as
    a valid, empty database, and a re-run refused the name. `parents=False` refuses a missing folder."""
    dest = Path(dest).expanduser().resolve()
    if dest.exists():
        raise StoreError(f"{dest} already exists; choose a new file name")
    if not parents and not dest.parent.is_dir():
        raise StoreError(f"{dest.parent} does not exist; create it first")
    refuse_database_paths(dest, store.path)
    _check_whole(store)
    with partial_file(dest, binary=True) as (tmp, _fh):  # synced (the same inode) when the block ends
        store.con.execute("VACUUM INTO ?", (str(tmp),))
    commit_partial(tmp, dest, replace=False)
    return dest


def _check_whole(store: Store) -> None:
    """StoreError naming what is wrong when the database fails its integrity check."""
    try:
        problems = store.integrity_check()
    except apsw.Error as exc:  # a page too damaged to be read at all
        problems = str(exc)
    if problems != "ok":
        flat = " ".join(problems.replace("*** in database main ***", "").split())  # one line
        shown = flat if len(flat) <= 300 else flat[:299] + "…"
        raise StoreError(
            f"{store.path} is damaged ({shown}); no backup was written, since it would copy the damage. "
            "Run `memapp doctor`, or restore an earlier backup (`memapp restore FILE`)"
        )
