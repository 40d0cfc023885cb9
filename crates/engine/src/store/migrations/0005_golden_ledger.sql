-- Retrieval regression suite (SPEC.md "Evaluation"): saved queries with the memories they
-- should find, and every run of them (by hand, or before and after a sleep cycle).
CREATE TABLE golden_queries (
    id         INTEGER PRIMARY KEY,
    query      TEXT    NOT NULL,
    -- JSON array of the memory ids the query should find.
    expected   TEXT    NOT NULL,
    k          INTEGER NOT NULL,
    -- JSON: search options (filter, mode, route).
    options    TEXT    NOT NULL DEFAULT '{}',
    created_at INTEGER NOT NULL
);

CREATE TABLE golden_runs (
    id       INTEGER PRIMARY KEY,
    run_at   INTEGER NOT NULL,
    -- manual, before_sleep or after_sleep.
    stage    TEXT    NOT NULL,
    -- The sleep cycle it ran around (no foreign key: an undone cycle keeps its runs).
    cycle_id INTEGER
);
CREATE INDEX golden_runs_cycle ON golden_runs (cycle_id);

CREATE TABLE golden_results (
    run_id   INTEGER NOT NULL REFERENCES golden_runs (id) ON DELETE CASCADE,
    query_id INTEGER NOT NULL REFERENCES golden_queries (id) ON DELETE CASCADE,
    recall   REAL    NOT NULL,
    ndcg     REAL    NOT NULL,
    -- JSON array of the ids ranked in the top k.
    ranked   TEXT    NOT NULL,
    PRIMARY KEY (run_id, query_id)
);
CREATE INDEX golden_results_query ON golden_results (query_id, run_id);

-- Cost and latency ledger: one row per engine operation.
CREATE TABLE ledger (
    id        INTEGER PRIMARY KEY,
    at        INTEGER NOT NULL,
    op        TEXT    NOT NULL,
    millis    REAL    NOT NULL,
    items     INTEGER NOT NULL DEFAULT 0,
    llm_calls INTEGER NOT NULL DEFAULT 0,
    tokens    INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX ledger_at ON ledger (at);
