-- Validity of facts (issue 16): when a fact held in the world (event time, from the
-- message that said it), besides when the store learnt it (`created_at`). Reconciliation
-- that replaces a value closes the old fact (`valid_to`, `superseded_by`) instead of
-- rewriting or deleting it, so search can answer as of an event time and the app can show
-- what went stale. Existing facts hold from the time of their message.
ALTER TABLE memories ADD COLUMN valid_from INTEGER;
ALTER TABLE memories ADD COLUMN valid_to INTEGER;
ALTER TABLE memories ADD COLUMN superseded_by INTEGER;
CREATE INDEX memories_superseded ON memories (superseded_by) WHERE superseded_by IS NOT NULL;
UPDATE memories SET valid_from = COALESCE(occurred_at, created_at) WHERE kind = 'fact';
