"""The import's machinery behind store.importing.import_paths: batches of threads, their embeddings and
token counts made ahead (on a worker thread and in a counting helper process), each thread written in its
own transaction, and the report and progress it gives. store.importing says why it is shaped this way.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from embeddings.token_worker import TokenCountProcess
from embeddings.tokens import TokenCounter
from store.errors import DuplicateMemoryError, StoreError
from store.importing.formats import ImportProblem
from store.records import MemoryIn, SuggestionIn, ThreadIn
from store.store import Store
from store.text import printable, unpaired_surrogate
from store.threads import PreparedChunks, StoredThread

BATCH_CHUNKS = 256  # chunks per model call: large enough to keep the model busy, small enough to resume
BATCH_THREADS = 64  # a batch also ends after this many threads, so a re-import of known threads streams
BATCH_MESSAGES = 2000  # ... or new messages (their token counts are one request to the counting helper)
READ_AHEAD = 8  # batches parsed ahead while the counting helper starts

Span = tuple[int, int]


@dataclass
class ImportReport:
    """What an import did. `to_json()` is the `memapp import --json` output."""

    threads_added: int = 0
    threads_updated: int = 0
    threads_unchanged: int = 0
    messages_added: int = 0
    memories_added: int = 0
    memories_existing: int = 0
    suggestions_added: int = 0  # pending memory suggestions (--format text), never memories
    suggestions_known: int = 0  # already a memory, or suggested before (pending, accepted or rejected)
    files_unchanged: int = 0  # session logs not read: same size and mtime as at the last import
    files_read: int = 0  # session logs read (from where the last import stopped)
    errors: list[ImportProblem] = field(default_factory=list)
    notes: list[ImportProblem] = field(default_factory=list)  # repaired, nothing skipped (not a failure)
    vector_problem: str | None = None  # why threads were written without vectors, when embedding was asked
    grown_threads: list[int] = field(default_factory=list)  # threads that received messages (to summarise)
    summaries_updated: int = 0
    summaries_background: int = (
        0  # threads left to a background `memapp summarize --due` (app/cli/background.py)
    )

    @property
    def skipped(self) -> int:
        """Threads, memories and files (or parts of files) that were not imported: one per error."""
        return len(self.errors)

    @property
    def ok(self) -> bool:
        return not self.errors

    def to_json(self) -> dict[str, Any]:
        return {
            "threads_added": self.threads_added,
            "threads_updated": self.threads_updated,
            "messages_added": self.messages_added,
            "memories_added": self.memories_added,
            "suggestions_added": self.suggestions_added,
            "files_read": self.files_read,
            "files_unchanged": self.files_unchanged,
            "summaries_background": self.summaries_background,
            "skipped": self.skipped,
            "errors": [
                {"file": e.file, "conversation": e.conversation, "error": e.error} for e in self.errors
            ],
            "notes": [{"file": e.file, "conversation": e.conversation, "note": e.error} for e in self.notes],
        }


@dataclass(frozen=True)
class ImportProgress:
    """A snapshot for progress displays. Totals are None when the input was not counted first."""

    file: str
    threads_done: int
    threads_total: int | None
    messages_done: int  # messages of the threads done, whether new or already stored
    messages_total: int | None
    messages_added: int
    elapsed: float
    phase: str = "writing"
    """'writing' (threads being embedded and written; the counts above), or 'summarising' (after every
    thread is written: `threads_done` of `threads_total` grown threads have been looked at). Before the
    first thread is written, so a display never sits at 0 % without a word: 'reading' (the export is
    being parsed: `threads_read` so far), 'loading the model' and 'embedding' (the first batch)."""
    threads_read: int = 0


@dataclass(frozen=True)
class ImportTotals:
    threads: int
    messages: int


ProgressFn = Callable[[ImportProgress], None]


FTS_AUTOMERGE = 4  # FTS5's default, restored after an import


def _fts_automerge(store: Store, value: int) -> None:
    """Set fts_messages' automerge (an FTS5 setting kept in chat.db, so one short transaction).

    Why: every thread is its own transaction, and at each commit FTS5 writes the thread's terms as a new
    index segment and, with automerge on, merges segments a little. Over an import that merging is most
    of the commit cost; with automerge 0 only FTS5's `crisismerge` (16 segments on a level) merges, far
    less often. The default comes back at the end, followed by one bounded merge step, so searches see
    the usual index. It is switched off once an import has written its first thread (an import that
    changes nothing takes no write lock). An import killed in between leaves automerge at 0: correct,
    just merged by crisismerge until the next import ends.
    """
    with store.con:
        store.con.execute("INSERT INTO fts_messages(fts_messages, rank) VALUES ('automerge', ?)", (value,))
        if value:
            store.con.execute("INSERT INTO fts_messages(fts_messages, rank) VALUES ('merge', 500)")


# --- the machinery -------------------------------------------------------------------------------


@dataclass
class _Pending:
    """A thread waiting for its batch's vectors and token counts: which of its messages are new, their
    chunk spans, and where their chunks and texts sit in the batch."""

    label: str
    thread: ThreadIn
    stored: StoredThread  # what the read found (write_thread re-checks inside its transaction)
    positions: list[int]  # in thread.messages
    spans: list[list[Span]]
    first_chunk: int
    n_chunks: int
    first_text: int


@dataclass
class _Batch:
    items: list[_Pending] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)  # chunks to embed
    new_texts: list[str] = field(default_factory=list)  # new messages, to count tokens of
    keys: set[tuple[str, str]] = field(default_factory=set)


_InFlight = tuple[_Batch, "Future[np.ndarray | None] | None", "Future[list[int]] | None"]


class Run:
    """One import: batches threads, embeds each batch in one call, writes each thread in its own transaction."""

    def __init__(
        self,
        store: Store,
        report: ImportReport,
        *,
        embed: bool,
        progress: ProgressFn | None,
        totals: ImportTotals | None,
        batch_chunks: int,
        overlap: bool,
        count_process: bool,
    ) -> None:
        self.store = store
        self.report = report
        self.progress = progress
        self.totals = totals
        self.batch_chunks = max(1, batch_chunks)
        self.bulk_fts = False  # fts_messages automerge switched off for this import (see _fts_automerge)
        self.embedding = embed and store.vector_problem is None and store.embedder is not None
        if embed and not self.embedding:
            report.vector_problem = store.vector_problem
        self.batch = _Batch()
        self.in_flight: deque[_InFlight] = deque()  # sent to the model and the counter, not written yet
        # Only without the model (beside it, counting is a rounding error) and only the stock counter: the
        # helper builds the same one, and says so before it is used.
        self.may_count_elsewhere = (
            count_process and not self.embedding and type(store.tokens) is TokenCounter and store.tokens.exact
        )
        self.counter: TokenCountProcess | None = None
        # Batches sent ahead of the one being written: with the counting helper two, so that a slow moment
        # of it does not stall the writes, and up to READ_AHEAD while it starts (about half a second).
        self.depth = 2 if self.may_count_elsewhere else 1
        self.pool = (
            ThreadPoolExecutor(1, thread_name_prefix="memapp-embed") if self.embedding and overlap else None
        )
        self.started = time.monotonic()
        self.threads_done = 0
        self.messages_done = 0
        self.threads_read = 0
        self.noted = 0.0  # when the last phase snapshot was sent (they are rate-limited)

    # -- input -------------------------------------------------------------------------------------

    def feed(self, label: str, items: Iterable[ThreadIn | MemoryIn | SuggestionIn | ImportProblem]) -> None:
        """Import one file's items. Memories wait until its threads are written: adding one embeds it,
        and the model must not be called from two threads at once (its tokenizer is not thread-safe).
        Suggestions (a text list of memories) are stored pending, for the person to accept or reject."""
        memories: list[MemoryIn] = []
        suggestions: list[SuggestionIn] = []
        for item in items:
            if isinstance(item, ImportProblem):
                (self.report.notes if item.note else self.report.errors).append(item)
            elif isinstance(item, MemoryIn):
                memories.append(item)
            elif isinstance(item, SuggestionIn):
                suggestions.append(item)
            else:
                self._thread(label, item)
        if memories or suggestions:
            self.finish()
            for memory in memories:
                self._memory(label, memory)
        if suggestions:
            from store.extract.suggestions import suggest_imported

            added, known = suggest_imported(self.store, suggestions, embed=self.embedding)
            self.report.suggestions_added += added
            self.report.suggestions_known += known

    def _memory(self, label: str, memory: MemoryIn) -> None:
        thread_id, message_id = self.store.locate_source(
            memory.thread_source, memory.thread_external_id, memory.message_external_ids
        )
        try:
            res = self.store.add_memory(
                memory.content,
                memory.category,
                importance=memory.importance,
                pinned=memory.pinned,
                origin=memory.origin,
                source_thread_id=thread_id,
                source_message_id=message_id,
                source_note=None if message_id is not None else _file_name(label),
                created_at=memory.created_at,
                embed=self.embedding,
            )
        except DuplicateMemoryError as exc:
            self.report.errors.append(
                ImportProblem(label, _memory_name(memory), f"memory not imported: {exc}")
            )
            return
        except StoreError as exc:  # InvalidInputError: a category or importance out of range
            self.report.errors.append(ImportProblem(label, _memory_name(memory), str(exc)))
            return
        if res.action == "added":
            self.report.memories_added += 1
        else:
            self.report.memories_existing += 1

    def _thread(self, label: str, thread: ThreadIn) -> None:
        bad = next(
            (
                n
                for n, v in (("id", thread.external_id), ("source", thread.source))
                if v and unpaired_surrogate(v) is not None
            ),
            None,
        )
        if bad is not None:
            # Checked before the first lookup: SQLite cannot even be asked about such an id, and the
            # UnicodeEncodeError used to end the whole import with nothing written.
            self.report.errors.append(
                ImportProblem(
                    label,
                    printable(thread.external_id or ""),
                    f"the thread's {bad} is not valid Unicode text (an unpaired surrogate); the thread was not imported",
                )
            )
            return
        self.threads_read += 1
        if not self.threads_done:
            self._note("reading")
        # The secret gate, before anything is counted, chunked or embedded from the text (store.secrets).
        thread = self.store.redact_thread(thread)
        key = (thread.source, thread.external_id) if thread.external_id is not None else None
        if key is not None and (key in self.batch.keys or any(key in b[0].keys for b in self.in_flight)):
            self.finish()  # the same thread again before it was written: write it before reading what is new
        stored = self.store.stored_thread(thread)
        positions = stored.new_positions(thread)
        new = [thread.messages[i] for i in positions]
        spans: list[list[Span]] = []
        first = len(self.batch.texts)
        if self.embedding:
            embedder = self.store.embedder
            assert embedder is not None
            spans = [embedder.chunk(m.content) for m in new]
            self.batch.texts.extend(m.content[a:b] for m, ss in zip(new, spans, strict=True) for a, b in ss)
        n_chunks = len(self.batch.texts) - first
        self.batch.items.append(
            _Pending(label, thread, stored, positions, spans, first, n_chunks, len(self.batch.new_texts))
        )
        self.batch.new_texts.extend(m.content for m in new)
        if key is not None:
            self.batch.keys.add(key)
        if (
            len(self.batch.texts) >= self.batch_chunks
            or len(self.batch.items) >= BATCH_THREADS
            or len(self.batch.new_texts) >= BATCH_MESSAGES
        ):
            self._flush(full=True)

    # -- batches -----------------------------------------------------------------------------------

    def _flush(self, full: bool = False) -> None:
        """Send the open batch to the model and the token counter; write the oldest batches sent, leaving
        `depth` in flight. `full`: the batch ended by size, so the import is not a small one."""
        batch, self.batch = self.batch, _Batch()
        if not batch.items:
            return
        future = None
        if batch.texts and self.embedding:
            if not self.threads_done and self.store.embedder is not None and not self.store.embedder.loaded:
                self._note("loading the model", now=True)
            future = (
                self.pool.submit(self._encode, batch.texts) if self.pool else _done(self._encode(batch.texts))
            )
        if full and self.counter is None and self.may_count_elsewhere:
            self.counter = TokenCountProcess(self.store.tokens, self.store.config.tokenizer.bpe_file or None)
        counts = self.counter.submit(batch.new_texts) if self.counter and batch.new_texts else None
        self.in_flight.append((batch, future, counts))
        depth = READ_AHEAD if self.counter is not None and self.counter.starting else self.depth
        while len(self.in_flight) > depth:
            self._write_batch(*self.in_flight.popleft())

    def finish(self) -> None:
        """Write everything read so far."""
        self._flush()
        while self.in_flight:
            self._write_batch(*self.in_flight.popleft())

    def close(self) -> None:
        # A Ctrl-C that lands between a thread's BEGIN and the block that would roll it back (Python checks
        # for signals between any two bytecodes) leaves that thread's transaction open: undo it here, so the
        # half-written thread is not committed with the automerge reset below (or the next write).
        if self.store.con.in_transaction:
            self.store.con.execute("ROLLBACK")
        if self.pool is not None:
            self.pool.shutdown(wait=False, cancel_futures=True)
        if self.counter is not None:
            self.counter.close()
        if self.bulk_fts:
            _fts_automerge(self.store, FTS_AUTOMERGE)
            self.bulk_fts = False

    def _encode(self, texts: list[str]) -> np.ndarray | None:
        """The model call, on the encode thread (Store.embed_texts: one failure policy; `checked`, as the
        run checked vector_problem when it started, so it touches no database: a connection there would
        be one more per import)."""
        return self.store.embed_texts(texts, checked=True)

    def _write_batch(
        self,
        batch: _Batch,
        future: Future[np.ndarray | None] | None,
        counted: Future[list[int]] | None,
    ) -> None:
        if future is not None and not future.done() and not self.threads_done:
            self._note("embedding", now=True)
        vectors = future.result() if future is not None else None
        if future is not None and vectors is None and self.embedding:
            self.embedding = False  # the model failed: write the rest without vectors, say why
            self.report.vector_problem = self.store.vector_problem
        counts = self.counter.counts(counted) if self.counter is not None else None
        for pending in batch.items:
            self._write(pending, vectors, counts)

    def _note(self, phase: str, *, now: bool = False) -> None:
        """A snapshot of a phase before the first thread is written (at most 5 a second unless `now`)."""
        t = time.monotonic()
        if self.progress is None or (not now and t - self.noted < 0.2):
            return
        self.noted = t
        self.progress(
            ImportProgress(
                "",
                0,
                self.totals.threads if self.totals else None,
                0,
                self.totals.messages if self.totals else None,
                0,
                t - self.started,
                phase,
                self.threads_read,
            )
        )

    def _write(self, p: _Pending, vectors: np.ndarray | None, counts: list[int] | None) -> None:
        prepared = None
        if vectors is not None:
            prepared = PreparedChunks(p.spans, vectors[p.first_chunk : p.first_chunk + p.n_chunks])
        token_counts: list[int | None] | None = None
        if counts is not None and p.positions:
            token_counts = [None] * len(p.thread.messages)
            for n, i in enumerate(p.positions):
                token_counts[i] = counts[p.first_text + n]
        try:
            # embed=self.embedding: should the thread have changed since its new messages were read (another
            # importer), write_thread finds `prepared` stale and embeds the thread's messages itself.
            res = self.store.write_thread(
                p.thread,
                embed=self.embedding,
                prepared=prepared,
                token_counts=token_counts,
                stored=p.stored,
                redacted=True,
            )
        except StoreError as exc:  # InvalidInputError: an unknown role slipped past the parser
            self.report.errors.append(ImportProblem(p.label, p.thread.external_id, str(exc)))
        else:
            r = self.report
            r.messages_added += res.messages_added
            if res.messages_added:
                r.grown_threads.append(res.thread_id)
                if not self.bulk_fts:  # from the second written thread on, see _fts_automerge
                    _fts_automerge(self.store, 0)
                    self.bulk_fts = True
            if res.created:
                r.threads_added += 1
            elif res.messages_added or res.title_changed:
                r.threads_updated += 1
            else:
                r.threads_unchanged += 1
        self.threads_done += 1
        self.messages_done += len(p.thread.messages)
        if self.progress is not None:
            self.progress(
                ImportProgress(
                    p.label,
                    self.threads_done,
                    self.totals.threads if self.totals else None,
                    self.messages_done,
                    self.totals.messages if self.totals else None,
                    self.report.messages_added,
                    time.monotonic() - self.started,
                )
            )


def _done(value: np.ndarray | None) -> Future[np.ndarray | None]:
    future: Future[np.ndarray | None] = Future()
    future.set_result(value)
    return future


def _memory_name(memory: MemoryIn) -> str:
    text = " ".join(memory.content.split())
    return "memory: " + (text if len(text) <= 60 else text[:59] + "…")


def _file_name(label: str) -> str:
    """Where an imported memory came from, as its file's name: a full path would tie the database (and its
    exports) to one machine's folders."""
    return printable(label.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1] or label)
