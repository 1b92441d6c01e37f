"""Numbered schema migrations, applied in order and recorded in the database.

Each migration is a small named function that runs inside its own transaction together with its
bookkeeping row in `schema_migrations` and `PRAGMA user_version`, so a crash leaves the file at the
previous version, never between two. A file whose `user_version` is newer than the newest migration
known here was written by a newer memapp: we refuse to touch it (SchemaTooNewError) instead of guessing.

The vector tables are not created here: their dimension depends on the embedding model, so
`store.vectors.rows` creates them the first time vectors are written (and `reindex` recreates them);
migration 7 only converts the ones that exist.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import apsw

from store.errors import SchemaTooNewError

Migration = Callable[[apsw.Connection], None]


def _m001_initial(con: apsw.Connection) -> None:
    con.execute(
        """
        CREATE TABLE settings(
            key TEXT PRIMARY KEY,
            value TEXT NOT NULL
        );

        CREATE TABLE threads(
            id INTEGER PRIMARY KEY,
            source TEXT NOT NULL,
            external_id TEXT,
            title TEXT NOT NULL DEFAULT '',
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            message_count INTEGER NOT NULL DEFAULT 0,
            token_count INTEGER NOT NULL DEFAULT 0,
            metadata TEXT NOT NULL DEFAULT '{}',
            UNIQUE(source, external_id)
        );
        CREATE INDEX threads_updated ON threads(updated_at DESC, id DESC);

        CREATE TABLE messages(
            id INTEGER PRIMARY KEY,
            thread_id INTEGER NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            role TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
            content TEXT NOT NULL,
            token_count INTEGER NOT NULL DEFAULT 0,
            importance_score REAL NOT NULL DEFAULT 0,
            compressed INTEGER NOT NULL DEFAULT 0,
            external_id TEXT,
            created_at REAL,
            metadata TEXT NOT NULL DEFAULT '{}',
            UNIQUE(thread_id, seq)
        );
        CREATE UNIQUE INDEX messages_external ON messages(thread_id, external_id)
            WHERE external_id IS NOT NULL;
        CREATE INDEX messages_created ON messages(created_at);

        CREATE TABLE message_chunks(
            id INTEGER PRIMARY KEY,
            message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
            chunk_index INTEGER NOT NULL,
            start_char INTEGER NOT NULL,
            end_char INTEGER NOT NULL,
            UNIQUE(message_id, chunk_index)
        );

        CREATE TABLE thread_summaries(
            thread_id INTEGER PRIMARY KEY REFERENCES threads(id) ON DELETE CASCADE,
            content TEXT NOT NULL,
            last_message_seq INTEGER NOT NULL,
            token_count INTEGER NOT NULL DEFAULT 0,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL
        );

        CREATE TABLE long_term_memories(
            id INTEGER PRIMARY KEY,
            category TEXT NOT NULL CHECK (category IN ('preference', 'project', 'skill', 'fact')),
            content TEXT NOT NULL,
            importance INTEGER NOT NULL DEFAULT 5 CHECK (importance BETWEEN 1 AND 10),
            access_count INTEGER NOT NULL DEFAULT 0,
            last_accessed REAL,
            pinned INTEGER NOT NULL DEFAULT 0,
            user_edited INTEGER NOT NULL DEFAULT 0,
            origin TEXT NOT NULL DEFAULT 'manual',
            source_thread_id INTEGER REFERENCES threads(id) ON DELETE SET NULL,
            content_hash TEXT NOT NULL,
            token_count INTEGER NOT NULL DEFAULT 0,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            deleted_at REAL
        );
        CREATE INDEX memories_active ON long_term_memories(deleted_at, category, pinned DESC);
        CREATE INDEX memories_hash ON long_term_memories(content_hash);

        CREATE TABLE memory_history(
            id INTEGER PRIMARY KEY,
            memory_id INTEGER NOT NULL,
            event TEXT NOT NULL CHECK (event IN ('add', 'edit', 'merge', 'pin', 'unpin', 'recategorise',
                'importance', 'delete', 'restore', 'cleanup', 'purge', 'access')),
            old TEXT,
            new TEXT,
            at REAL NOT NULL
        );
        CREATE INDEX memory_history_memory ON memory_history(memory_id, id);

        CREATE TABLE memory_topics(
            thread_id INTEGER NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
            topic TEXT NOT NULL,
            mention_count INTEGER NOT NULL DEFAULT 1,
            last_seen_at REAL NOT NULL,
            PRIMARY KEY(thread_id, topic)
        );

        CREATE TABLE compression_history(
            id INTEGER PRIMARY KEY,
            thread_id INTEGER NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
            before_tokens INTEGER NOT NULL,
            after_tokens INTEGER NOT NULL,
            ratio REAL NOT NULL,
            messages_compressed INTEGER NOT NULL,
            strategy TEXT NOT NULL,
            created_at REAL NOT NULL,
            details TEXT NOT NULL DEFAULT '{}'
        );

        -- Keyword indexes. Contentless (the canonical rows hold the text), rowid = canonical id, and
        -- written by the Store in the same transaction as the row. The indexed text is the row's text
        -- passed through store.text.index_text(), which spaces out CJK characters so a two-character
        -- Chinese word inside a sentence is found as a phrase with the built-in unicode61 tokenizer.
        CREATE VIRTUAL TABLE fts_messages USING fts5(
            body, content='', contentless_delete=1, tokenize="unicode61 remove_diacritics 2 categories 'L* N* Co So'");
        CREATE VIRTUAL TABLE fts_memories USING fts5(
            body, content='', contentless_delete=1, tokenize="unicode61 remove_diacritics 2 categories 'L* N* Co So'");
        CREATE VIRTUAL TABLE fts_summaries USING fts5(
            body, content='', contentless_delete=1, tokenize="unicode61 remove_diacritics 2 categories 'L* N* Co So'");
        """
    )


def _m002_suggestions(con: apsw.Connection) -> None:
    """Memory suggestions found in threads, kept after the user decides, so a rejected one (same text,
    by content hash) is never suggested again. `merge_with` is the existing memory a suggestion is a
    near-duplicate of (accepting it merges there); `memory_id` the memory that accepting produced."""
    con.execute(
        """
        CREATE TABLE memory_suggestions(
            id INTEGER PRIMARY KEY,
            thread_id INTEGER REFERENCES threads(id) ON DELETE SET NULL,
            message_id INTEGER REFERENCES messages(id) ON DELETE SET NULL,
            category TEXT NOT NULL CHECK (category IN ('preference', 'project', 'skill', 'fact')),
            content TEXT NOT NULL,
            content_hash TEXT NOT NULL UNIQUE,
            importance INTEGER NOT NULL DEFAULT 5 CHECK (importance BETWEEN 1 AND 10),
            pattern TEXT NOT NULL DEFAULT '',
            status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'accepted', 'rejected')),
            merge_with INTEGER REFERENCES long_term_memories(id) ON DELETE SET NULL,
            similarity REAL,
            memory_id INTEGER REFERENCES long_term_memories(id) ON DELETE SET NULL,
            created_at REAL NOT NULL,
            decided_at REAL
        );
        CREATE INDEX memory_suggestions_thread ON memory_suggestions(thread_id, status);
        CREATE INDEX memory_suggestions_status ON memory_suggestions(status, id);
        CREATE INDEX memory_suggestions_message ON memory_suggestions(message_id);
        CREATE INDEX memory_suggestions_memory ON memory_suggestions(merge_with);
        CREATE INDEX memory_suggestions_result ON memory_suggestions(memory_id);
        """
    )


def _m003_import_files(con: apsw.Connection) -> None:
    """Where each coding-agent session file was read up to, so a re-import reads only what was appended
    (store.importing.sessions): an unchanged file (same size and mtime) is not even opened. The row goes
    with its thread: a deleted thread is read again whole by the next import, as any export would be."""
    con.execute(
        """
        CREATE TABLE import_files(
            path TEXT PRIMARY KEY,
            format TEXT NOT NULL,
            size INTEGER NOT NULL,
            mtime_ns INTEGER NOT NULL,
            offset INTEGER NOT NULL,
            head TEXT NOT NULL,
            thread_id INTEGER REFERENCES threads(id) ON DELETE CASCADE,
            imported_at REAL NOT NULL
        );
        CREATE INDEX import_files_thread ON import_files(thread_id);
        """
    )


def _m004_thread_archive(con: apsw.Connection) -> None:
    """Archived threads: hidden from the thread lists and from search unless asked for, but kept whole
    (messages, summary, vectors), so unarchiving is instant. NULL = not archived."""
    con.execute(
        """
        ALTER TABLE threads ADD COLUMN archived_at REAL;
        CREATE INDEX threads_archived ON threads(archived_at) WHERE archived_at IS NOT NULL;
        """
    )


def _m005_truth(con: apsw.Connection) -> None:
    """Keeping memories true (issue 17). A memory is valid from `valid_from` (its creation, or when the
    fact it states became true) until `valid_until`, when a newer memory (`superseded_by`) replaced it:
    a superseded memory is kept and searchable, ranked down, and left out of context. Provenance: the
    message a memory came from (`source_message_id`, beside `source_thread_id`), or, when there is none,
    where it was imported from (`source_note`). `memory_conflicts` is the review queue for pairs the
    classifier could not decide (store.truth). The foreign keys are deferred so that a restore, which
    inserts rows in id order inside one transaction, can point an old memory at a newer one."""
    con.execute(
        """
        ALTER TABLE long_term_memories ADD COLUMN valid_from REAL;
        ALTER TABLE long_term_memories ADD COLUMN valid_until REAL;
        ALTER TABLE long_term_memories ADD COLUMN superseded_by INTEGER
            REFERENCES long_term_memories(id) ON DELETE SET NULL DEFERRABLE INITIALLY DEFERRED;
        ALTER TABLE long_term_memories ADD COLUMN source_message_id INTEGER
            REFERENCES messages(id) ON DELETE SET NULL DEFERRABLE INITIALLY DEFERRED;
        ALTER TABLE long_term_memories ADD COLUMN source_note TEXT;
        UPDATE long_term_memories SET valid_from = created_at;
        CREATE INDEX memories_superseded ON long_term_memories(superseded_by) WHERE superseded_by IS NOT NULL;
        CREATE INDEX memories_source_message ON long_term_memories(source_message_id)
            WHERE source_message_id IS NOT NULL;

        CREATE TABLE memory_conflicts(
            id INTEGER PRIMARY KEY,
            new_id INTEGER NOT NULL REFERENCES long_term_memories(id) ON DELETE CASCADE,
            old_id INTEGER NOT NULL REFERENCES long_term_memories(id) ON DELETE CASCADE,
            relation TEXT NOT NULL CHECK (relation IN ('reversal', 'update', 'paraphrase', 'unsure')),
            similarity REAL,
            reasons TEXT NOT NULL DEFAULT '[]',
            status TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'resolved')),
            resolution TEXT CHECK (resolution IN ('new', 'old', 'both', 'merge')),
            created_at REAL NOT NULL,
            resolved_at REAL,
            UNIQUE(new_id, old_id)
        );
        CREATE INDEX memory_conflicts_status ON memory_conflicts(status, id);
        CREATE INDEX memory_conflicts_old ON memory_conflicts(old_id);

        CREATE TABLE memory_history_v5(
            id INTEGER PRIMARY KEY,
            memory_id INTEGER NOT NULL,
            event TEXT NOT NULL CHECK (event IN ('add', 'edit', 'merge', 'pin', 'unpin', 'recategorise',
                'importance', 'delete', 'restore', 'cleanup', 'purge', 'access',
                'supersede', 'reinstate', 'conflict', 'resolve')),
            old TEXT,
            new TEXT,
            at REAL NOT NULL
        );
        INSERT INTO memory_history_v5(id, memory_id, event, old, new, at)
            SELECT id, memory_id, event, old, new, at FROM memory_history;
        DROP TABLE memory_history;
        ALTER TABLE memory_history_v5 RENAME TO memory_history;
        CREATE INDEX memory_history_memory ON memory_history(memory_id, id);
        """
    )


def _m006_stemmed_keywords(con: apsw.Connection) -> None:
    """The keyword indexes, re-created with the porter stemmer in front of the same unicode61 tokenizer
    ("decided" finds "decide", "backups" finds "backup"; CJK characters pass through unchanged) and
    refilled from the canonical rows (issue 14: stemming measurably improves recall)."""
    from store import m006  # the rebuild as released (store.text's live one serves `memapp reindex`)

    m006.migrate(con)


def _m007_float16_vectors(con: apsw.Connection) -> None:
    """The exact copy of every vector (`vec_memories`, `vec_chunks`, created by store.vectors on the
    first vector write) is stored as float16 instead of float32: half the bytes of the rows that were
    58 % of chat.db, with the same search results (store.vectors.floats says why). The rows are
    converted in batches into new tables that then take the old names, all inside this migration's
    transaction: a kill leaves the float32 tables as they were. The freed pages stay in the file (and
    are reused by later writes) until `memapp backup` writes a compact copy. A new chat.db has no vector
    tables yet: nothing to convert, and opening it stays free of numpy (tests/hygiene/test_light_imports)."""
    has_vectors = con.execute(
        "SELECT 1 FROM sqlite_schema WHERE name IN ('vec_memories', 'vec_chunks') LIMIT 1"
    ).fetchone()
    if has_vectors is None:
        return
    from store import m007  # numpy: imported only when there are vectors to convert

    m007.migrate(con)


def _m008_import_titles_and_reads(con: apsw.Connection) -> None:
    """Two things an import keeps so that what it did once is not undone or repeated:

    - `threads.source_title`: the title the export gave the thread at its last import, beside the title
      shown, so that a re-import keeps a rename made in memapp unless the export itself renamed the thread
      (store.titles). NULL for threads imported before: their title may already be a rename, so it is kept.
    - `import_files.read_upto`: the furthest byte of a session file ever read. A file that shrank and
      grew back, or was edited, is read again over bytes already imported, in other pieces than before;
      such a read looks up what is stored (store.importing.sessions). NULL for files read before: their
      offset stands for it."""
    con.execute("ALTER TABLE threads ADD COLUMN source_title TEXT")
    con.execute("ALTER TABLE import_files ADD COLUMN read_upto INTEGER")


def _m009_sync_ids(con: apsw.Connection) -> None:
    """Global ids for every row that syncs, and the sync bookkeeping tables (issue 29): the SQL, as it
    was released, is in store.sync.m009."""
    from store.sync import m009

    m009.migrate(con)


MIGRATIONS: list[tuple[int, str, Migration]] = [
    (1, "initial", _m001_initial),
    (2, "suggestions", _m002_suggestions),
    (3, "import_files", _m003_import_files),
    (4, "thread_archive", _m004_thread_archive),
    (5, "truth", _m005_truth),
    (6, "stemmed_keywords", _m006_stemmed_keywords),
    (7, "float16_vectors", _m007_float16_vectors),
    (8, "import_titles_and_reads", _m008_import_titles_and_reads),
    (9, "sync_ids", _m009_sync_ids),
]
LATEST = MIGRATIONS[-1][0]


def current_version(con: apsw.Connection) -> int:
    row = con.execute("PRAGMA user_version").fetchall()[0]
    return int(row[0])  # type: ignore[arg-type]


def check_not_newer(con: apsw.Connection, path: str) -> int:
    version = current_version(con)
    if version > LATEST:
        raise SchemaTooNewError(
            f"{path} has schema version {version}, but this memapp knows only up to {LATEST}. "
            "It was written by a newer memapp; upgrade memapp to open it (the file was not changed)."
        )
    return version


def migrate(con: apsw.Connection, path: str) -> int:
    """Bring the schema up to LATEST. Returns the number of migrations applied."""
    applied = 0
    if check_not_newer(con, path) == LATEST:
        return 0  # the common case: no write transaction at all
    for version, name, fn in MIGRATIONS:
        with con:
            # Re-read inside the write transaction: another process may have migrated meanwhile.
            if check_not_newer(con, path) >= version:
                continue
            con.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations("
                "version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at REAL NOT NULL)"
            )
            fn(con)
            # time.time(), not store.records.now() (the same epoch seconds): opening chat.db, which the TUI
            # does before its first frame, then does not import the records' dataclasses (~13 ms).
            con.execute("INSERT INTO schema_migrations VALUES (?, ?, ?)", (version, name, time.time()))
            con.execute(f"PRAGMA user_version = {int(version)}")
            applied += 1
    return applied
