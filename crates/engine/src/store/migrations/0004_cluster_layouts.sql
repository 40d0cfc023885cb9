-- Clustering and projection (SPEC.md "Clustering and projection").

-- The cached 2D/3D layout of each (method, dims): ids as i64 LE, coordinates as f32 LE
-- row-major, the fitted model where the method has one (PCA: mean then components, f32 LE)
-- and the parameters that made it (JSON).
CREATE TABLE layouts (
    method      TEXT    NOT NULL,
    dims        INTEGER NOT NULL,
    params      TEXT    NOT NULL,
    ids         BLOB    NOT NULL,
    coords      BLOB    NOT NULL,
    model       BLOB,
    computed_at INTEGER NOT NULL,
    placed_incrementally INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (method, dims)
);

-- Liquid clustering energy of a memory, as of liquid step `at_step`; it decays by a factor
-- per step, applied lazily (energy × decay^(current step − at_step)) so a step only writes
-- the memories whose energy changed for another reason. `accesses` is the access count the
-- energy has already been credited for.
CREATE TABLE memory_energy (
    memory_id INTEGER PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE,
    energy    REAL    NOT NULL,
    at_step   INTEGER NOT NULL,
    accesses  INTEGER NOT NULL
);

-- Lets a liquid step find the memories accessed since the previous one without a scan.
CREATE INDEX memories_last_accessed ON memories (last_accessed);
-- …and the co-access pairs that changed since then.
CREATE INDEX co_access_last_at ON co_access (last_at);
