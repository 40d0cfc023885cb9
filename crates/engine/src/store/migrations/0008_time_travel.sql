-- Time travel (issue 16): the store as it was at an instant is derived from the history and
-- the operation log, newest change first, so both are read by time. An undone operation
-- keeps its row and says when it was undone: between its end and its undo its changes were
-- in force.
CREATE INDEX history_time ON history (created_at, id);
CREATE INDEX memories_created ON memories (created_at);
ALTER TABLE sleep_cycles ADD COLUMN undone_at INTEGER;
