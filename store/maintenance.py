"""Whole-database operations: doctor, embed what is missing, reindex, backup.

`embed_missing` commits batch by batch, so an interrupted run loses at most one batch and the next run
continues where it stopped. `reindex` rebuilds the derived indexes (FTS, then vectors with the
configured model) from the canonical rows; `backup` uses VACUUM INTO, which reads one consistent
snapshot even while other processes write.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from store.errors import StoreError
from store.store import Store

Progress = Callable[[int, int], None] | None

BATCH = 256


def doctor(store: Store, *, load_model: bool = True) -> dict[str, Any]:
    integrity = store.integrity_check()
    problems = store.check_indexes()
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
    # Which runtime encodes (onnx, or sentence-transformers as the fallback) and why it fell back.
    model["runtime"] = getattr(embedder, "backend", None)
    model["runtime_problem"] = getattr(embedder, "backend_problem", None)
    rec = store.vectors.recorded_model()
    model["recorded_in_database"] = None if rec is None else {"name": rec[0], "dimension": rec[1]}
    missing_messages = store.scalar(
        "SELECT count(*) FROM messages m WHERE trim(content) != '' AND NOT EXISTS "
        "(SELECT 1 FROM message_chunks c WHERE c.message_id = m.id)"
    )
    return {
        "database": str(store.path),
        "schema_version": store.schema_version(),
        "integrity": integrity,
        "index_problems": problems,
        "tokenizer": store.tokens.status,
        "tokenizer_exact": store.tokens.exact,
        "model": model,
        "missing_vectors": {
            "messages": missing_messages,
            "memories": len(store.memories_missing_vectors(limit=10**9)),
        },
        "config": store.config.source or None,
        "counts": store.stats(),
        "ok": integrity == "ok" and not problems,
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
    result = embed_missing(store, progress=progress)
    return {**result, "keyword_index": "rebuilt"}


def backup(store: Store, dest: str | Path) -> Path:
    """A consistent copy of the database at `dest` (created 0600; refuses to overwrite)."""
    dest = Path(dest).expanduser().resolve()
    if dest.exists():
        raise StoreError(f"{dest} already exists; choose a new file name")
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(dest, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    os.close(fd)
    try:
        store.con.execute("VACUUM INTO ?", (str(dest),))
    except Exception:
        dest.unlink(missing_ok=True)
        raise
    return dest
