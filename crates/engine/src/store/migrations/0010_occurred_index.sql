-- Retrieval by date (issue 20): a question that names a time ("in May 2023", "on 1 May")
-- brings the memories that happened then into its candidates, read by this index.
CREATE INDEX memories_occurred ON memories (occurred_at) WHERE occurred_at IS NOT NULL;
