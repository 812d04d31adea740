-- Hardening: bot names compared as they look, users an admin suspended, the bots taken
-- out of play with their owner (so that lifting the suspension brings back those and no
-- others), and fault messages cleared of endpoints.

-- merknera.names.name_key and name_shape: two names with an equal key or an equal shape
-- are the same name.  The functions are registered on every connection (store/db.py).
ALTER TABLE bots ADD COLUMN name_key TEXT;
ALTER TABLE bots ADD COLUMN name_shape TEXT;
UPDATE bots SET name_key = merknera_name_key(name), name_shape = merknera_name_shape(name);
CREATE INDEX bots_name_key ON bots (name_key);
CREATE INDEX bots_name_shape ON bots (name_shape);

ALTER TABLE bots ADD COLUMN disabled_with_owner INTEGER NOT NULL DEFAULT 0
    CHECK (disabled_with_owner IN (0, 1));

ALTER TABLE users ADD COLUMN suspended_at TEXT;
ALTER TABLE users ADD COLUMN suspended_reason TEXT;

-- Fault messages stored before quoted the endpoint (its URL, host and address) and whole
-- error replies of bots, and everybody may read them once a game is over:
-- merknera.protocol.excerpt.without_addresses clears them as messages are written now.
UPDATE moves SET fault_detail = merknera_without_addresses(fault_detail)
    WHERE fault_detail IS NOT NULL;
UPDATE games SET detail = merknera_without_addresses(detail) WHERE detail IS NOT NULL;
