-- Somna's whole data model (SPEC.md "Data model"). Times are Unix milliseconds, UTC.

CREATE TABLE memories (
    -- AUTOINCREMENT: an id is never reused, so a hard-deleted memory's history stays its own.
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    kind          TEXT    NOT NULL CHECK (kind IN ('episode', 'fact', 'summary', 'schema')),
    text          TEXT    NOT NULL,
    who           TEXT,
    what          TEXT,
    "when"        TEXT,
    "where"       TEXT,
    why           TEXT,
    how           TEXT,
    conversation  TEXT,
    session       TEXT,
    occurred_at   INTEGER,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL,
    importance    REAL    NOT NULL CHECK (importance BETWEEN 0 AND 1),
    novelty       REAL    NOT NULL CHECK (novelty BETWEEN 0 AND 1),
    access_count  INTEGER NOT NULL DEFAULT 0,
    last_accessed INTEGER,
    state         TEXT    NOT NULL DEFAULT 'active'
                  CHECK (state IN ('active', 'warm', 'cold', 'archived', 'forgotten')),
    tags          TEXT    NOT NULL DEFAULT '[]',
    source        TEXT    NOT NULL,
    l_score       REAL    NOT NULL,
    metadata      TEXT    NOT NULL DEFAULT '{}',
    details       TEXT    NOT NULL DEFAULT '{"type":"none"}',
    -- f32 little-endian, 384 values; NULL until embedded.
    embedding     BLOB,
    -- Position in the store's embedding change log; the vector index records the
    -- highest value it has seen and catches up from there.
    embed_seq     INTEGER,
    deleted_at    INTEGER
);
CREATE INDEX memories_conversation ON memories (conversation, occurred_at);
CREATE INDEX memories_turns ON memories (conversation, session, kind, id);
CREATE INDEX memories_state ON memories (state);
CREATE INDEX memories_kind_state ON memories (kind, state);
CREATE INDEX memories_who ON memories (who);
CREATE INDEX memories_embed_seq ON memories (embed_seq);

-- Lexical index over the text and 5W1H fields, kept in sync by triggers.
CREATE VIRTUAL TABLE memories_fts USING fts5 (
    text, who, what, "when", "where", why, how,
    content = 'memories', content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts (rowid, text, who, what, "when", "where", why, how)
    VALUES (new.id, new.text, new.who, new.what, new."when", new."where", new.why, new.how);
END;
CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, text, who, what, "when", "where", why, how)
    VALUES ('delete', old.id, old.text, old.who, old.what, old."when", old."where", old.why, old.how);
END;
CREATE TRIGGER memories_fts_update AFTER UPDATE OF text, who, what, "when", "where", why, how ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, text, who, what, "when", "where", why, how)
    VALUES ('delete', old.id, old.text, old.who, old.what, old."when", old."where", old.why, old.how);
    INSERT INTO memories_fts (rowid, text, who, what, "when", "where", why, how)
    VALUES (new.id, new.text, new.who, new.what, new."when", new."where", new.why, new.how);
END;

CREATE TABLE links (
    src        INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    dst        INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    kind       TEXT    NOT NULL CHECK (kind IN ('similar', 'derived_from', 'causal', 'co_access')),
    score      REAL    NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (src, dst, kind)
);
CREATE INDEX links_dst ON links (dst);

-- Pairs of memories returned together by one retrieval (a < b).
CREATE TABLE co_access (
    a          INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    b          INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    count      INTEGER NOT NULL,
    last_at    INTEGER NOT NULL,
    PRIMARY KEY (a, b)
);

-- The raw conversation log. (conversation, external_id) makes imports resumable.
CREATE TABLE messages (
    id           INTEGER PRIMARY KEY,
    conversation TEXT    NOT NULL,
    session      TEXT,
    role         TEXT    NOT NULL,
    speaker      TEXT,
    text         TEXT    NOT NULL,
    occurred_at  INTEGER,
    external_id  TEXT,
    metadata     TEXT    NOT NULL DEFAULT '{}',
    memory_id    INTEGER REFERENCES memories (id) ON DELETE SET NULL,
    created_at   INTEGER NOT NULL
);
CREATE UNIQUE INDEX messages_external ON messages (conversation, external_id);
CREATE INDEX messages_conversation ON messages (conversation, id);

-- Every change of a memory, as mem0's history(): who changed what, from what to what.
CREATE TABLE history (
    id         INTEGER PRIMARY KEY,
    memory_id  INTEGER NOT NULL,
    event      TEXT    NOT NULL CHECK (event IN ('add', 'update', 'delete', 'restore', 'hard_delete', 'state')),
    old_value  TEXT,
    new_value  TEXT,
    actor      TEXT    NOT NULL,
    cause      TEXT,
    created_at INTEGER NOT NULL
);
CREATE INDEX history_memory ON history (memory_id, id);

CREATE TABLE sleep_cycles (
    id           INTEGER PRIMARY KEY,
    started_at   INTEGER NOT NULL,
    ended_at     INTEGER,
    trigger      TEXT    NOT NULL,
    status       TEXT    NOT NULL,
    phase_stats  TEXT    NOT NULL DEFAULT '{}',
    created_ids  TEXT    NOT NULL DEFAULT '[]',
    changed      TEXT    NOT NULL DEFAULT '[]',
    forgotten_ids TEXT   NOT NULL DEFAULT '[]'
);

CREATE TABLE clusters (
    id         INTEGER PRIMARY KEY,
    label      TEXT    NOT NULL DEFAULT '',
    centroid   BLOB    NOT NULL,
    energy     REAL    NOT NULL DEFAULT 0,
    merged_into INTEGER REFERENCES clusters (id),
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE TABLE cluster_members (
    memory_id  INTEGER PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE,
    cluster_id INTEGER NOT NULL REFERENCES clusters (id),
    confidence REAL    NOT NULL
);
CREATE INDEX cluster_members_cluster ON cluster_members (cluster_id);
CREATE TABLE cluster_merges (
    id         INTEGER PRIMARY KEY,
    from_id    INTEGER NOT NULL,
    into_id    INTEGER NOT NULL,
    similarity REAL    NOT NULL,
    merged_at  INTEGER NOT NULL
);

-- Store-wide settings and counters (embedding model, embed_seq high-water mark).
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
