-- Every full computation of a layout, kept beside the cached one (`layouts`), so the time
-- scrubber can put the points where they were at a past instant: each computation is
-- aligned to the one before it, so their coordinates share one frame. Memories placed
-- incrementally after a computation are not in it. The newest few per (method, dims) are
-- kept (store/layouts.rs, LAYOUT_HISTORY_KEPT).
CREATE TABLE layout_history (
    method      TEXT    NOT NULL,
    dims        INTEGER NOT NULL,
    computed_at INTEGER NOT NULL,
    ids         BLOB    NOT NULL,
    coords      BLOB    NOT NULL
);
CREATE UNIQUE INDEX layout_history_key ON layout_history (method, dims, computed_at);

-- A store's cached layouts are its first snapshots.
INSERT INTO layout_history (method, dims, computed_at, ids, coords)
    SELECT method, dims, computed_at, ids, coords FROM layouts;
