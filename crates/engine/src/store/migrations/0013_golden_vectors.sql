-- A golden query's vector, saved when the query is saved (or at its first run), with the id of
-- the model that made it: a process that ranks the saved queries (the what-if simulator, a
-- golden run) reads the vectors instead of embedding every query again. A vector from
-- another model is ignored and replaced at the next run.
ALTER TABLE golden_queries ADD COLUMN vector BLOB;
ALTER TABLE golden_queries ADD COLUMN vector_model TEXT;
