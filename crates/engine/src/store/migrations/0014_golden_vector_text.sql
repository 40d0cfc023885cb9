-- The text a golden query's vector was made from: a search embeds the question without the
-- names of the people it is about, so the saved vector is that text's, and it is used only
-- while the search would embed the same text (the store's speaker names decide it). A vector
-- saved before this column existed is of the query as written (NULL here).
ALTER TABLE golden_queries ADD COLUMN vector_text TEXT;
