"""The import pipeline: exports on disk -> chat.db, one thread per transaction, embeddings batched.

    from store.importing.pipeline import import_paths
    report = import_paths(store, ["chatgpt-export.zip"], progress=print)
    print(report.to_json())   # threads_added, threads_updated, messages_added, memories_added, skipped, errors

Why it is shaped like this:
- The parsers (store/importing/formats/) yield ThreadIn / MemoryIn / ImportProblem; this module is the only
  place that writes them, so every format gets the same guarantees: each thread is written in its own
  transaction (messages, token counts, FTS rows, chunk vectors), a killed import leaves whole threads
  only, and a re-run adds exactly what is missing (Store.write_thread is idempotent by source and
  external ids).
- The model is the slow part. Calling it once per thread wastes most of its time on tiny batches, so
  the new messages of several threads are chunked and embedded in one call (about BATCH_CHUNKS chunks),
  and only then written, thread by thread. While the database writes batch N, the model already
  encodes batch N+1 on a worker thread, so per-message database work stays out of the model's way.
- Without the model, token counting (tiktoken, exact) is as slow as everything else together. An
  import of more than one batch counts in a helper process (embeddings.token_worker): it counts batch
  N+1 on another core while this process parses and writes batch N. A thread does not help (it waits
  for the GIL after every message); if the helper cannot run, counting happens here, with the same counts.
- A re-import reads which messages are new before writing; a thread stored whole is not written at all.
- A problem with one thread or memory is reported (file, conversation, error) and skipped; the rest
  imports. Only database failures (disk full, I/O) stop the import.
- A file written by `memapp export` is not another tool's export: it is restored whole (store.export),
  so `memapp import` is the one way back in for every JSON file memapp reads.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from store.crypto.keys import export_passphrase
from store.crypto.seal import AGE_MAGIC, open_export
from store.export import restore_json
from store.importing.formats import ImportFormatError, ImportProblem, read_export
from store.importing.formats._common import describe
from store.importing.run import BATCH_CHUNKS, ImportProgress, ImportReport, ImportTotals, ProgressFn, Run
from store.importing.sessions import SessionImport, is_session_path
from store.maintenance import embed_missing
from store.records import ThreadIn
from store.store import Store


def count_export(
    paths: Sequence[str | os.PathLike[str]],
    fmt: str = "auto",
    progress: Callable[[ImportTotals], None] | None = None,
) -> ImportTotals:
    """Threads and messages in the exports (a parse-only pass, for progress totals and ETA). `progress`
    gets the counts so far a few times a second: on a big export this pass takes seconds."""
    threads = messages = 0
    shown = time.monotonic()
    for path in paths:
        if is_session_path(path, fmt):
            continue  # counting would read every session, also the unchanged ones
        try:
            items = read_export(path, fmt)
        except ImportFormatError:
            continue
        for item in items:
            if isinstance(item, ThreadIn):
                threads += 1
                messages += len(item.messages)
                if progress is not None and time.monotonic() - shown >= 0.2:
                    shown = time.monotonic()
                    progress(ImportTotals(threads, messages))
    return ImportTotals(threads, messages)


def import_paths(
    store: Store,
    paths: Sequence[str | os.PathLike[str]],
    fmt: str = "auto",
    *,
    embed: bool = True,
    progress: ProgressFn | None = None,
    totals: ImportTotals | None = None,
    batch_chunks: int = BATCH_CHUNKS,
    overlap: bool = True,
    summarize: bool = True,
    count_process: bool = True,
) -> ImportReport:
    """Import every thread and memory in `paths` into `store`; problems are reported, not raised.

    `embed=False` writes no vectors (`memapp embed` adds them later). `progress` is called after each
    thread; pass `totals` (from `count_export`, a parse-only pass) for snapshots with totals and an ETA.
    `overlap` encodes the next batch while the current one is written; `count_process` lets an import
    of more than one batch count tokens in a helper process meanwhile. `summarize`: afterwards, threads
    that grew by at least `summary.trigger_messages` messages get their summary and topics updated (each
    in its own transaction, after every thread is safely written). Raises only what the database raises
    (and KeyboardInterrupt): every thread written before that stays complete.
    """
    report = ImportReport()
    run = Run(
        store,
        report,
        embed=embed,
        progress=progress,
        totals=totals,
        batch_chunks=batch_chunks,
        overlap=overlap,
        count_process=count_process,
    )
    sessions = SessionImport(store, run.feed, run.finish)
    try:
        for path in paths:
            label = str(path)
            if fmt == "auto" and is_memapp_export(path):
                run.finish()
                _restore(store, path, report, embed=embed)
                continue
            if is_session_path(path, fmt):
                sessions.import_path(Path(path), fmt)
                continue
            try:
                items = read_export(path, fmt)
            except ImportFormatError as exc:
                report.errors.append(ImportProblem(label, None, str(exc)))
                continue
            run.feed(label, items)
        run.finish()
    finally:
        run.close()
        report.files_unchanged += sessions.unchanged
        report.files_read += sessions.read
    if summarize:
        due = summaries_due(store, report.grown_threads)
        report.summaries_updated += summarize_due(store, due, use_model=embed, progress=progress)
    return report


def summaries_due(store: Store, grown: Sequence[int] = ()) -> list[int]:
    """Threads whose summary an import brings up to date: those that grew (`grown`, this run) or are
    behind by at least `summary.trigger_messages` messages.

    Not only the threads a run grew: a killed or --no-summarize import left threads whose summary is
    behind (derived from last_message_seq, so nothing else has to remember it), and re-running the
    import, which then writes no message, must still bring them up to date."""
    from store.extract.summaries import threads_to_summarize, unsummarised_count

    trigger = max(1, store.config.summary.trigger_messages)
    behind = threads_to_summarize(store, min_new=trigger)
    grown_due = [t for t in dict.fromkeys(grown) if unsummarised_count(store, t) >= trigger]
    return list(dict.fromkeys([*grown_due, *behind]))


def unsummarised_messages(store: Store, threads: Sequence[int]) -> int:
    """Messages the summaries of `threads` have not covered yet (what summarising them will read)."""
    from store.extract.summaries import unsummarised_count

    return sum(unsummarised_count(store, t) for t in threads)


def summarize_due(
    store: Store, due: Sequence[int], *, use_model: bool = True, progress: ProgressFn | None = None
) -> int:
    """Summarise each thread in `due` (each in its own transaction); returns how many were updated.
    `use_model=False` (an import with --no-embed) never loads the model: the summaries use TF-IDF."""
    from store.extract.summaries import maybe_summarize

    started = time.monotonic()
    updated = 0
    for done, thread_id in enumerate(due):
        if progress is not None:  # a phase of its own: seconds on a big import, never a silent 100 %
            progress(
                ImportProgress("", done, len(due), 0, None, 0, time.monotonic() - started, "summarising")
            )
        if maybe_summarize(store, thread_id, use_model=use_model) is not None:
            updated += 1
    return updated


_EXPORT_HEAD = re.compile(rb'^\s*\{\s*"format"\s*:\s*"memapp-export"')


def is_memapp_export(path: str | os.PathLike[str]) -> bool:
    """A file `memapp export` wrote (its first key is "format": "memapp-export"), or an age-encrypted one
    (an encrypted chat.db's export, store.crypto.seal)."""
    try:
        with open(path, "rb") as fp:
            head = fp.read(1024)
    except OSError:  # a folder, or unreadable: the format readers report it
        return False
    return bool(_EXPORT_HEAD.match(head.removeprefix(b"\xef\xbb\xbf"))) or head.startswith(AGE_MAGIC)


def _read_export(store: Store, path: str | os.PathLike[str]) -> Any:
    """The export's JSON; an age-encrypted one is opened in memory with the passphrase of chat.db (or the
    one MEMAPP_PASSPHRASE_COMMAND or a prompt gives for a plain chat.db), never through a plain file."""
    with open(path, "rb") as fp:
        data = fp.read()
    if data.startswith(AGE_MAGIC):
        data = open_export(data, export_passphrase(store.path, Path(path)))
    return json.loads(data.decode("utf-8-sig"))


def _restore(store: Store, path: str | os.PathLike[str], report: ImportReport, *, embed: bool) -> None:
    """`memapp import` of a memapp export restores it whole (same ids) into an empty database; it is one
    transaction, so a refusal or a malformed export writes nothing."""
    try:
        counts = restore_json(store, _read_export(store, path))
    except Exception as exc:  # reported as a skipped file; the transaction rolled back
        report.errors.append(ImportProblem(str(path), None, f"not restored: {describe(exc)}"))
        return
    report.threads_added += counts.get("threads", 0)
    report.messages_added += counts.get("messages", 0)
    report.memories_added += counts.get("long_term_memories", 0)
    if embed and store.vector_problem is None:
        embed_missing(store)  # an export without vectors of this model: embed now, as an import would


__all__ = [
    "BATCH_CHUNKS",
    "ImportProgress",
    "ImportReport",
    "ImportTotals",
    "ProgressFn",
    "count_export",
    "import_paths",
    "is_memapp_export",
    "summaries_due",
    "summarize_due",
    "unsummarised_messages",
]
