-- The second rule of "stale" (issue 16): a fact not confirmed in N days while a newer fact
-- contradicts it. Reconciliation replaces a contradicted value only among the speaker's facts
-- of the same conversation; a contradiction across conversations (or with a fact the
-- similarity search did not bring up) is recorded here instead, the older fact (by event
-- time) first. A fact is confirmed when it is said again (the re-statement reconciliation
-- drops as a duplicate: `fact_restated`, by event time) or retrieved (`memory_access`).
CREATE TABLE fact_contradictions (
    fact_id  INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    by_id    INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    found_at INTEGER NOT NULL,
    PRIMARY KEY (fact_id, by_id)
) WITHOUT ROWID;
CREATE INDEX fact_contradictions_by ON fact_contradictions (by_id);

CREATE TABLE fact_restated (
    memory_id INTEGER PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE,
    count     INTEGER NOT NULL DEFAULT 0,
    last_at   INTEGER NOT NULL
);
