-- index import_files_thread
CREATE INDEX import_files_thread ON import_files(thread_id);
-- index memories_active
CREATE INDEX memories_active ON long_term_memories(deleted_at, category, pinned DESC);
-- index memories_hash
CREATE INDEX memories_hash ON long_term_memories(content_hash);
-- index memories_source_message
CREATE INDEX memories_source_message ON long_term_memories(source_message_id)
            WHERE source_message_id IS NOT NULL;
-- index memories_superseded
CREATE INDEX memories_superseded ON long_term_memories(superseded_by) WHERE superseded_by IS NOT NULL;
-- index memories_uid
CREATE UNIQUE INDEX memories_uid ON long_term_memories(uid);
-- index memory_conflicts_old
CREATE INDEX memory_conflicts_old ON memory_conflicts(old_id);
-- index memory_conflicts_status
CREATE INDEX memory_conflicts_status ON memory_conflicts(status, id);
-- index memory_conflicts_uid
CREATE UNIQUE INDEX memory_conflicts_uid ON memory_conflicts(uid);
-- index memory_history_memory
CREATE INDEX memory_history_memory ON memory_history(memory_id, id);
-- index memory_history_uid
CREATE UNIQUE INDEX memory_history_uid ON memory_history(uid);
-- index memory_suggestions_memory
CREATE INDEX memory_suggestions_memory ON memory_suggestions(merge_with);
-- index memory_suggestions_message
CREATE INDEX memory_suggestions_message ON memory_suggestions(message_id);
-- index memory_suggestions_result
CREATE INDEX memory_suggestions_result ON memory_suggestions(memory_id);
-- index memory_suggestions_status
CREATE INDEX memory_suggestions_status ON memory_suggestions(status, id);
-- index memory_suggestions_thread
CREATE INDEX memory_suggestions_thread ON memory_suggestions(thread_id, status);
-- index messages_created
CREATE INDEX messages_created ON messages(created_at);
-- index messages_external
CREATE UNIQUE INDEX messages_external ON messages(thread_id, external_id)
            WHERE external_id IS NOT NULL;
-- index messages_uid
CREATE UNIQUE INDEX messages_uid ON messages(uid);
-- index sync_messages_thread
CREATE INDEX sync_messages_thread ON sync_messages(thread_uid, pos);
-- index threads_archived
CREATE INDEX threads_archived ON threads(archived_at) WHERE archived_at IS NOT NULL;
-- index threads_uid
CREATE UNIQUE INDEX threads_uid ON threads(uid);
-- index threads_updated
CREATE INDEX threads_updated ON threads(updated_at DESC, id DESC);
-- table compression_history
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
-- table fts_memories
CREATE VIRTUAL TABLE fts_memories USING fts5(body, content='', contentless_delete=1, tokenize="porter unicode61 remove_diacritics 2 categories 'L* N* Co So'");
-- table fts_messages
CREATE VIRTUAL TABLE fts_messages USING fts5(body, content='', contentless_delete=1, tokenize="porter unicode61 remove_diacritics 2 categories 'L* N* Co So'");
-- table fts_summaries
CREATE VIRTUAL TABLE fts_summaries USING fts5(body, content='', contentless_delete=1, tokenize="porter unicode61 remove_diacritics 2 categories 'L* N* Co So'");
-- table import_files
CREATE TABLE import_files(
            path TEXT PRIMARY KEY,
            format TEXT NOT NULL,
            size INTEGER NOT NULL,
            mtime_ns INTEGER NOT NULL,
            offset INTEGER NOT NULL,
            head TEXT NOT NULL,
            thread_id INTEGER REFERENCES threads(id) ON DELETE CASCADE,
            imported_at REAL NOT NULL
        , read_upto INTEGER);
-- table long_term_memories
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
        , valid_from REAL, valid_until REAL, superseded_by INTEGER
            REFERENCES long_term_memories(id) ON DELETE SET NULL DEFERRABLE INITIALLY DEFERRED, source_message_id INTEGER
            REFERENCES messages(id) ON DELETE SET NULL DEFERRABLE INITIALLY DEFERRED, source_note TEXT, uid TEXT);
-- table memory_conflicts
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
            resolved_at REAL, uid TEXT, kind TEXT NOT NULL DEFAULT 'classifier',
            UNIQUE(new_id, old_id)
        );
-- table memory_history
CREATE TABLE "memory_history"(
            id INTEGER PRIMARY KEY,
            memory_id INTEGER NOT NULL,
            event TEXT NOT NULL CHECK (event IN ('add', 'edit', 'merge', 'pin', 'unpin', 'recategorise',
                'importance', 'delete', 'restore', 'cleanup', 'purge', 'access',
                'supersede', 'reinstate', 'conflict', 'resolve')),
            old TEXT,
            new TEXT,
            at REAL NOT NULL
        , uid TEXT, memory_uid TEXT);
-- table memory_suggestions
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
-- table memory_topics
CREATE TABLE memory_topics(
            thread_id INTEGER NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
            topic TEXT NOT NULL,
            mention_count INTEGER NOT NULL DEFAULT 1,
            last_seen_at REAL NOT NULL,
            PRIMARY KEY(thread_id, topic)
        );
-- table message_chunks
CREATE TABLE message_chunks(
            id INTEGER PRIMARY KEY,
            message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
            chunk_index INTEGER NOT NULL,
            start_char INTEGER NOT NULL,
            end_char INTEGER NOT NULL,
            UNIQUE(message_id, chunk_index)
        );
-- table messages
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
            metadata TEXT NOT NULL DEFAULT '{}', uid TEXT,
            UNIQUE(thread_id, seq)
        );
-- table schema_migrations
CREATE TABLE schema_migrations(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at REAL NOT NULL);
-- table settings
CREATE TABLE settings(
            key TEXT PRIMARY KEY,
            value TEXT NOT NULL
        );
-- table sync_access
CREATE TABLE sync_access(
    memory_uid TEXT NOT NULL, device TEXT NOT NULL, count INTEGER NOT NULL, last_accessed REAL,
    PRIMARY KEY(memory_uid, device)
) WITHOUT ROWID;
-- table sync_applied
CREATE TABLE sync_applied(
    device TEXT PRIMARY KEY,
    seq INTEGER NOT NULL,
    at REAL NOT NULL
);
-- table sync_conflicts
CREATE TABLE sync_conflicts(
    uid TEXT PRIMARY KEY, new_uid TEXT, old_uid TEXT, relation TEXT, similarity REAL, reasons TEXT,
    kind TEXT, status TEXT, resolution TEXT, created_at REAL, resolved_at REAL, stamps TEXT NOT NULL
) WITHOUT ROWID;
-- table sync_history
CREATE TABLE sync_history(
    uid TEXT PRIMARY KEY, memory_uid TEXT, event TEXT, old TEXT, new TEXT, at REAL
) WITHOUT ROWID;
-- table sync_memories
CREATE TABLE sync_memories(
    uid TEXT PRIMARY KEY, category TEXT, content TEXT, importance INTEGER, origin TEXT,
    user_edited INTEGER, source_thread_uid TEXT, source_message_uid TEXT, source_note TEXT,
    created_at REAL, updated_at REAL, deleted_at REAL, valid_from REAL, valid_until REAL,
    superseded_by_uid TEXT, stamps TEXT NOT NULL
) WITHOUT ROWID;
-- table sync_messages
CREATE TABLE sync_messages(
    uid TEXT PRIMARY KEY, thread_uid TEXT NOT NULL, pos INTEGER NOT NULL
) WITHOUT ROWID;
-- table sync_pending
CREATE TABLE sync_pending(
    id INTEGER PRIMARY KEY,
    changeset BLOB NOT NULL,
    clock INTEGER NOT NULL,
    at REAL NOT NULL
);
-- table sync_pins
CREATE TABLE sync_pins(
    memory_uid TEXT NOT NULL, token TEXT NOT NULL, PRIMARY KEY(memory_uid, token)
) WITHOUT ROWID;
-- table sync_state
CREATE TABLE sync_state(key TEXT PRIMARY KEY, value TEXT NOT NULL);
-- table sync_threads
CREATE TABLE sync_threads(
    uid TEXT PRIMARY KEY, source TEXT, external_id TEXT, title TEXT, created_at REAL, updated_at REAL,
    metadata TEXT, archived_at REAL, stamps TEXT NOT NULL
) WITHOUT ROWID;
-- table sync_wire_messages
CREATE TABLE sync_wire_messages(
    uid TEXT PRIMARY KEY, thread_uid TEXT, pos INTEGER, role TEXT, content TEXT, external_id TEXT,
    created_at REAL, metadata TEXT
) WITHOUT ROWID;
-- table thread_summaries
CREATE TABLE thread_summaries(
            thread_id INTEGER PRIMARY KEY REFERENCES threads(id) ON DELETE CASCADE,
            content TEXT NOT NULL,
            last_message_seq INTEGER NOT NULL,
            token_count INTEGER NOT NULL DEFAULT 0,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL
        );
-- table threads
CREATE TABLE threads(
            id INTEGER PRIMARY KEY,
            source TEXT NOT NULL,
            external_id TEXT,
            title TEXT NOT NULL DEFAULT '',
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            message_count INTEGER NOT NULL DEFAULT 0,
            token_count INTEGER NOT NULL DEFAULT 0,
            metadata TEXT NOT NULL DEFAULT '{}', archived_at REAL, source_title TEXT, uid TEXT,
            UNIQUE(source, external_id)
        );
-- trigger long_term_memories_uid
CREATE TRIGGER long_term_memories_uid AFTER INSERT ON long_term_memories WHEN NEW.uid IS NULL BEGIN UPDATE long_term_memories SET uid = coalesce(NEW.uid, CASE WHEN CASE WHEN NEW.origin != 'manual' THEN 'h:' || NEW.category || ':' || NEW.content_hash END IS NOT NULL AND NOT EXISTS (SELECT 1 FROM long_term_memories WHERE uid = CASE WHEN NEW.origin != 'manual' THEN 'h:' || NEW.category || ':' || NEW.content_hash END) THEN CASE WHEN NEW.origin != 'manual' THEN 'h:' || NEW.category || ':' || NEW.content_hash END ELSE 'u:' || lower(hex(randomblob(16))) END) WHERE rowid = NEW.rowid; END;
-- trigger memory_conflicts_uid
CREATE TRIGGER memory_conflicts_uid AFTER INSERT ON memory_conflicts WHEN NEW.uid IS NULL BEGIN UPDATE memory_conflicts SET uid = coalesce(NEW.uid, 'u:' || lower(hex(randomblob(16)))) WHERE rowid = NEW.rowid; END;
-- trigger memory_history_uid
CREATE TRIGGER memory_history_uid AFTER INSERT ON memory_history WHEN NEW.uid IS NULL OR NEW.memory_uid IS NULL BEGIN UPDATE memory_history SET uid = coalesce(NEW.uid, 'u:' || lower(hex(randomblob(16)))), memory_uid = coalesce(NEW.memory_uid, (SELECT m.uid FROM long_term_memories m WHERE m.id = NEW.memory_id)) WHERE rowid = NEW.rowid; END;
-- trigger messages_uid
CREATE TRIGGER messages_uid AFTER INSERT ON messages WHEN NEW.uid IS NULL BEGIN UPDATE messages SET uid = coalesce(NEW.uid, CASE WHEN (SELECT t.uid FROM threads t WHERE t.id = NEW.thread_id) || '#' || coalesce('e:' || NEW.external_id, 's:' || NEW.seq) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM messages WHERE uid = (SELECT t.uid FROM threads t WHERE t.id = NEW.thread_id) || '#' || coalesce('e:' || NEW.external_id, 's:' || NEW.seq)) THEN (SELECT t.uid FROM threads t WHERE t.id = NEW.thread_id) || '#' || coalesce('e:' || NEW.external_id, 's:' || NEW.seq) ELSE 'u:' || lower(hex(randomblob(16))) END) WHERE rowid = NEW.rowid; END;
-- trigger threads_uid
CREATE TRIGGER threads_uid AFTER INSERT ON threads WHEN NEW.uid IS NULL BEGIN UPDATE threads SET uid = coalesce(NEW.uid, CASE WHEN 'x:' || NEW.source || '/' || NEW.external_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM threads WHERE uid = 'x:' || NEW.source || '/' || NEW.external_id) THEN 'x:' || NEW.source || '/' || NEW.external_id ELSE 'u:' || lower(hex(randomblob(16))) END) WHERE rowid = NEW.rowid; END;
