-- Somna's data model on Postgres + pgvector: the SQLite store's schema as of its migration
-- 0012 (store/migrations/), table for table and column for column, so one statement text
-- serves both (store/sql.rs). Differences, each for a reason:
-- * Integers are BIGINT, reals DOUBLE PRECISION, blobs BYTEA; flags stay 0/1 integers
--   (the statements compare them with 0 and 1).
-- * A memory's embedding is pgvector's `vector(384)` (all-MiniLM-L6-v2), read back as the
--   little-endian f32 bytes SQLite stores; `clusters.centroid` likewise. It lives in a
--   table of its own, `memory_vectors`, not in `memories.embedding` (see there).
-- * The lexical index is a generated `tsvector` column with a GIN index in place of FTS5
--   (the text weighted A, when/where/why/how B, as FTS5's column weights 1.0 and 0.5).
-- * Ids come from sequences. An insert that names no id (or NULL, as SQLite allows) takes
--   the next one; an insert with an explicit id (a restore) moves the sequence past it, so
--   ids are never reused (SQLite's AUTOINCREMENT).

CREATE EXTENSION IF NOT EXISTS vector;

CREATE FUNCTION somna_fill_id() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.id IS NULL THEN
        NEW.id := nextval(TG_ARGV[0]::regclass);
    ELSIF NEW.id > COALESCE(pg_sequence_last_value(TG_ARGV[0]::regclass), 0) THEN
        PERFORM setval(TG_ARGV[0]::regclass, NEW.id);
    END IF;
    RETURN NEW;
END $$;

CREATE TABLE memories (
    id            BIGINT PRIMARY KEY,
    kind          TEXT   NOT NULL CHECK (kind IN ('episode', 'fact', 'summary', 'schema')),
    text          TEXT   NOT NULL,
    who           TEXT,
    what          TEXT,
    "when"        TEXT,
    "where"       TEXT,
    why           TEXT,
    how           TEXT,
    conversation  TEXT,
    session       TEXT,
    occurred_at   BIGINT,
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL,
    importance    DOUBLE PRECISION NOT NULL CHECK (importance BETWEEN 0 AND 1),
    novelty       DOUBLE PRECISION NOT NULL CHECK (novelty BETWEEN 0 AND 1),
    state         TEXT   NOT NULL DEFAULT 'active'
                  CHECK (state IN ('active', 'warm', 'cold', 'archived', 'forgotten')),
    tags          TEXT   NOT NULL DEFAULT '[]',
    source        TEXT   NOT NULL,
    l_score       DOUBLE PRECISION NOT NULL,
    metadata      TEXT   NOT NULL DEFAULT '{}',
    details       TEXT   NOT NULL DEFAULT '{"type":"none"}',
    embed_seq     BIGINT,
    deleted_at    BIGINT,
    tokens        BIGINT,
    pinned        BIGINT NOT NULL DEFAULT 0 CHECK (pinned IN (0, 1)),
    valid_from    BIGINT,
    valid_to      BIGINT,
    superseded_by BIGINT,
    fts           tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('english'::regconfig, text), 'A') ||
        setweight(to_tsvector('english'::regconfig, coalesce("when", '') || ' ' ||
            coalesce("where", '') || ' ' || coalesce(why, '') || ' ' || coalesce(how, '')), 'B')
    ) STORED
);
CREATE INDEX memories_conversation ON memories (conversation, occurred_at);
CREATE INDEX memories_turns ON memories (conversation, session, kind, id);
-- Adjacent turns (store/memories.rs, `adjacent_episodes`): NULL matching NULL, indexable.
-- Also in postgres.rs's ADDED.
CREATE INDEX memories_turns_coalesced
    ON memories ((COALESCE(conversation, '')), (COALESCE(session, '')), kind, id);
CREATE INDEX memories_state ON memories (state);
CREATE INDEX memories_kind_state ON memories (kind, state);
CREATE INDEX memories_who ON memories (who);
CREATE INDEX memories_who_lower ON memories (lower(who));
CREATE INDEX memories_embed_seq ON memories (embed_seq);
CREATE INDEX memories_pinned ON memories (pinned) WHERE pinned = 1;
CREATE INDEX memories_created ON memories (created_at);
CREATE INDEX memories_superseded ON memories (superseded_by) WHERE superseded_by IS NOT NULL;
CREATE INDEX memories_occurred ON memories (occurred_at) WHERE occurred_at IS NOT NULL;
CREATE INDEX memories_fts ON memories USING gin (fts);

-- Each memory's embedding, in a table of its own: beside a memory's other columns the
-- 1.5 KB vector made every row too wide for a page to hold more than five, so the lexical
-- stage, which reads the rows holding a word, read a page per row (and a vector is never
-- short enough for Postgres to move out of the row by itself). The vector stage of every
-- search (store/nearest.rs) walks pgvector's HNSW index of it: cosine distance, pgvector's
-- defaults (m 16, ef_construction 64). Also in postgres.rs's ADDED.
CREATE TABLE memory_vectors (
    id        BIGINT PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE,
    embedding vector(384) NOT NULL
);
CREATE INDEX memory_vectors_hnsw ON memory_vectors USING hnsw (embedding vector_cosine_ops);

CREATE TABLE links (
    src        BIGINT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    dst        BIGINT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    kind       TEXT   NOT NULL CHECK (kind IN ('similar', 'derived_from', 'causal', 'co_access')),
    score      DOUBLE PRECISION NOT NULL,
    created_at BIGINT NOT NULL,
    -- What SQLite's rowid gives: the order links were made in (store/external.rs).
    seq        BIGSERIAL,
    PRIMARY KEY (src, dst, kind)
);
CREATE INDEX links_dst ON links (dst);
CREATE INDEX links_kind ON links (kind);

CREATE TABLE co_access (
    a          BIGINT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    b          BIGINT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    count      BIGINT NOT NULL,
    last_at    BIGINT NOT NULL,
    PRIMARY KEY (a, b)
);
CREATE INDEX co_access_last_at ON co_access (last_at);

CREATE TABLE messages (
    id           BIGINT PRIMARY KEY,
    conversation TEXT   NOT NULL,
    session      TEXT,
    role         TEXT   NOT NULL,
    speaker      TEXT,
    text         TEXT   NOT NULL,
    occurred_at  BIGINT,
    external_id  TEXT,
    metadata     TEXT   NOT NULL DEFAULT '{}',
    memory_id    BIGINT REFERENCES memories (id) ON DELETE SET NULL,
    created_at   BIGINT NOT NULL
);
CREATE UNIQUE INDEX messages_external ON messages (conversation, external_id);
CREATE INDEX messages_conversation ON messages (conversation, id);

CREATE TABLE history (
    id         BIGINT PRIMARY KEY,
    memory_id  BIGINT NOT NULL,
    event      TEXT   NOT NULL CHECK (event IN ('add', 'update', 'delete', 'restore', 'hard_delete', 'state')),
    old_value  TEXT,
    new_value  TEXT,
    actor      TEXT   NOT NULL,
    cause      TEXT,
    created_at BIGINT NOT NULL
);
CREATE INDEX history_memory ON history (memory_id, id);
CREATE INDEX history_time ON history (created_at, id);

CREATE TABLE sleep_cycles (
    id            BIGINT PRIMARY KEY,
    started_at    BIGINT NOT NULL,
    ended_at      BIGINT,
    trigger       TEXT   NOT NULL,
    status        TEXT   NOT NULL,
    phase_stats   TEXT   NOT NULL DEFAULT '{}',
    created_ids   TEXT   NOT NULL DEFAULT '[]',
    changed       TEXT   NOT NULL DEFAULT '[]',
    forgotten_ids TEXT   NOT NULL DEFAULT '[]',
    op            TEXT   NOT NULL DEFAULT 'sleep',
    undone_at     BIGINT
);
CREATE INDEX sleep_cycles_op ON sleep_cycles (op, id);

CREATE TABLE clusters (
    id              BIGINT PRIMARY KEY,
    label           TEXT   NOT NULL DEFAULT '',
    centroid        vector(384) NOT NULL,
    energy          DOUBLE PRECISION NOT NULL DEFAULT 0,
    merged_into     BIGINT REFERENCES clusters (id),
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL,
    label_by_person BIGINT NOT NULL DEFAULT 0 CHECK (label_by_person IN (0, 1))
);
CREATE TABLE cluster_members (
    memory_id  BIGINT PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE,
    cluster_id BIGINT NOT NULL REFERENCES clusters (id),
    confidence DOUBLE PRECISION NOT NULL,
    by_person  BIGINT NOT NULL DEFAULT 0 CHECK (by_person IN (0, 1))
);
CREATE INDEX cluster_members_cluster ON cluster_members (cluster_id);
CREATE INDEX cluster_members_by_person ON cluster_members (memory_id) WHERE by_person = 1;
CREATE TABLE cluster_merges (
    id         BIGINT PRIMARY KEY,
    from_id    BIGINT NOT NULL,
    into_id    BIGINT NOT NULL,
    similarity DOUBLE PRECISION NOT NULL,
    merged_at  BIGINT NOT NULL
);

CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE layouts (
    method      TEXT   NOT NULL,
    dims        BIGINT NOT NULL,
    params      TEXT   NOT NULL,
    ids         BYTEA  NOT NULL,
    coords      BYTEA  NOT NULL,
    model       BYTEA,
    computed_at BIGINT NOT NULL,
    placed_incrementally BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (method, dims)
);

CREATE TABLE layout_history (
    method      TEXT   NOT NULL,
    dims        BIGINT NOT NULL,
    computed_at BIGINT NOT NULL,
    ids         BYTEA  NOT NULL,
    coords      BYTEA  NOT NULL
);
CREATE UNIQUE INDEX layout_history_key ON layout_history (method, dims, computed_at);

CREATE TABLE memory_energy (
    memory_id BIGINT PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE,
    energy    DOUBLE PRECISION NOT NULL,
    at_step   BIGINT NOT NULL,
    accesses  BIGINT NOT NULL
);

CREATE TABLE golden_queries (
    id         BIGINT PRIMARY KEY,
    query      TEXT   NOT NULL,
    expected   TEXT   NOT NULL,
    k          BIGINT NOT NULL,
    options    TEXT   NOT NULL DEFAULT '{}',
    created_at BIGINT NOT NULL,
    vector       BYTEA,
    vector_model TEXT,
    vector_text  TEXT
);

CREATE TABLE golden_runs (
    id       BIGINT PRIMARY KEY,
    run_at   BIGINT NOT NULL,
    stage    TEXT   NOT NULL,
    cycle_id BIGINT
);
CREATE INDEX golden_runs_cycle ON golden_runs (cycle_id);

CREATE TABLE golden_results (
    run_id   BIGINT NOT NULL REFERENCES golden_runs (id) ON DELETE CASCADE,
    query_id BIGINT NOT NULL REFERENCES golden_queries (id) ON DELETE CASCADE,
    recall   DOUBLE PRECISION NOT NULL,
    ndcg     DOUBLE PRECISION NOT NULL,
    ranked   TEXT   NOT NULL,
    PRIMARY KEY (run_id, query_id)
);
CREATE INDEX golden_results_query ON golden_results (query_id, run_id);

CREATE TABLE ledger (
    id        BIGINT PRIMARY KEY,
    at        BIGINT NOT NULL,
    op        TEXT   NOT NULL,
    millis    DOUBLE PRECISION NOT NULL,
    items     BIGINT NOT NULL DEFAULT 0,
    llm_calls BIGINT NOT NULL DEFAULT 0,
    tokens    BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX ledger_at ON ledger (at);

CREATE TABLE memory_access (
    memory_id BIGINT PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE,
    count     BIGINT NOT NULL DEFAULT 0,
    last_at   BIGINT
);
CREATE INDEX memory_access_last_at ON memory_access (last_at);

CREATE TABLE fact_contradictions (
    fact_id  BIGINT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    by_id    BIGINT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    found_at BIGINT NOT NULL,
    PRIMARY KEY (fact_id, by_id)
);
CREATE INDEX fact_contradictions_by ON fact_contradictions (by_id);

CREATE TABLE fact_restated (
    memory_id BIGINT PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE,
    count     BIGINT NOT NULL DEFAULT 0,
    last_at   BIGINT NOT NULL
);

-- Every table with an id takes it from a sequence of its own (see somna_fill_id above).
DO $$
DECLARE t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['memories', 'messages', 'history', 'sleep_cycles', 'clusters', 'cluster_merges', 'golden_queries', 'golden_runs', 'ledger'] LOOP
        EXECUTE format('CREATE SEQUENCE %I OWNED BY %I.id', t || '_id_seq', t);
        EXECUTE format('CREATE TRIGGER %I BEFORE INSERT ON %I FOR EACH ROW
                        EXECUTE FUNCTION somna_fill_id(%L)', t || '_id', t, t || '_id_seq');
    END LOOP;
END $$;
