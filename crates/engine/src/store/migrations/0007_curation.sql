-- Curation (issue 17). A pinned memory is never compressed, decayed, archived or forgotten
-- by a sleep cycle. `sleep_cycles` becomes the store's one log of undoable operations:
-- `op` is 'sleep' for a cycle, or the curation ('merge', 'delete', 'restore', 'pin',
-- 'unpin', 'tag', 'importance') recorded there with the same changed/created columns, so
-- one undo and one "a later operation touched this" rule serve both.
ALTER TABLE memories ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0 CHECK (pinned IN (0, 1));
CREATE INDEX memories_pinned ON memories (pinned) WHERE pinned = 1;
ALTER TABLE sleep_cycles ADD COLUMN op TEXT NOT NULL DEFAULT 'sleep';
CREATE INDEX sleep_cycles_op ON sleep_cycles (op, id);
-- A cluster a person named keeps that label: liquid steps do not relabel it (a full
-- re-clustering starts over).
ALTER TABLE clusters ADD COLUMN label_by_person INTEGER NOT NULL DEFAULT 0 CHECK (label_by_person IN (0, 1));
-- A memory a person moved to a cluster stays there: liquid steps do not move it, and the
-- store never overwrites its membership.
ALTER TABLE cluster_members ADD COLUMN by_person INTEGER NOT NULL DEFAULT 0 CHECK (by_person IN (0, 1));
CREATE INDEX cluster_members_by_person ON cluster_members (memory_id) WHERE by_person = 1;
