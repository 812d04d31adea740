-- Hardening: bot names compared as they look, users an admin suspended, the bots taken
-- out of play with their owner (so that lifting the suspension brings back those and no
-- others), and fault messages cleared of endpoints.

-- merknera.names.name_key and name_shape: two names with an equal key or an equal shape
-- are the same name.  SQLite's migration fills the two columns of the bots already there
-- with Python functions registered on its connection (store/db.py); PostgreSQL has no such
-- functions, and needs none: a PostgreSQL store is always created empty by this version of
-- Merknera (an existing arena moves in with `merknera db copy`, which copies rows written
-- by current code, keys and shapes included), so that UPDATE is left out here.
ALTER TABLE bots ADD COLUMN name_key TEXT;
ALTER TABLE bots ADD COLUMN name_shape TEXT;
CREATE INDEX bots_name_key ON bots (name_key);
CREATE INDEX bots_name_shape ON bots (name_shape);

ALTER TABLE bots ADD COLUMN disabled_with_owner INTEGER NOT NULL DEFAULT 0
    CHECK (disabled_with_owner IN (0, 1));

ALTER TABLE users ADD COLUMN suspended_at TEXT;
ALTER TABLE users ADD COLUMN suspended_reason TEXT;

-- Fault messages stored before quoted the endpoint (its URL, host and address) and whole
-- error replies of bots, and everybody may read them once a game is over:
-- merknera.protocol.excerpt.without_addresses clears them as messages are written now.
-- SQLite's migration scrubs the old messages with that function registered on its
-- connection; a PostgreSQL store starts empty (see above) and `merknera db copy` copies
-- messages already scrubbed by SQLite's migration, so there is nothing to clear here.
