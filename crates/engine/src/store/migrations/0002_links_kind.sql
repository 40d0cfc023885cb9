-- Lets searches ask cheaply whether causal or derived links exist.
CREATE INDEX links_kind ON links (kind);
