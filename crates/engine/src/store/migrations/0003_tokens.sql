-- Token count of a memory's text (the model's tokenizer), computed when the text is
-- written, so packing a context never re-tokenises. NULL: not counted yet.
ALTER TABLE memories ADD COLUMN tokens INTEGER;
