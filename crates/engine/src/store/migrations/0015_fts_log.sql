-- The documents each change to memories_fts touched, in order: a large store's copy of the
-- index in memory (store/lexicon.rs) catches up with these instead of reading the whole
-- index again after every write. The triggers keep the last 65,536 entries. Nothing for
-- Postgres, whose lexical search has no such copy.
CREATE TABLE memories_fts_log (seq INTEGER PRIMARY KEY, doc INTEGER NOT NULL);

DROP TRIGGER memories_fts_insert;
DROP TRIGGER memories_fts_delete;
DROP TRIGGER memories_fts_update;
CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts (rowid, text, who, what, "when", "where", why, how)
    VALUES (new.id, new.text, new.who, new.what, new."when", new."where", new.why, new.how);
    INSERT INTO memories_fts_log (doc) VALUES (new.id);
    DELETE FROM memories_fts_log WHERE seq <= last_insert_rowid() - 65536;
END;
CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, text, who, what, "when", "where", why, how)
    VALUES ('delete', old.id, old.text, old.who, old.what, old."when", old."where", old.why, old.how);
    INSERT INTO memories_fts_log (doc) VALUES (old.id);
    DELETE FROM memories_fts_log WHERE seq <= last_insert_rowid() - 65536;
END;
CREATE TRIGGER memories_fts_update AFTER UPDATE OF text, who, what, "when", "where", why, how ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, text, who, what, "when", "where", why, how)
    VALUES ('delete', old.id, old.text, old.who, old.what, old."when", old."where", old.why, old.how);
    INSERT INTO memories_fts (rowid, text, who, what, "when", "where", why, how)
    VALUES (new.id, new.text, new.who, new.what, new."when", new."where", new.why, new.how);
    INSERT INTO memories_fts_log (doc) VALUES (new.id);
    DELETE FROM memories_fts_log WHERE seq <= last_insert_rowid() - 65536;
END;
