-- The first schema: users and tokens, bots, games and seats, every move, bot logs.
-- Timestamps are ISO 8601 UTC text with milliseconds (merknera.store.db.now).

CREATE TABLE users (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    created_at  TEXT NOT NULL
);

-- API tokens are stored as SHA-256 hashes only; the token itself is shown once.
CREATE TABLE tokens (
    id           INTEGER PRIMARY KEY,
    user_id      INTEGER NOT NULL REFERENCES users (id),
    token_hash   TEXT NOT NULL UNIQUE,
    description  TEXT NOT NULL DEFAULT '',
    status       TEXT NOT NULL DEFAULT 'CURRENT' CHECK (status IN ('CURRENT', 'REVOKED')),
    created_at   TEXT NOT NULL
);
CREATE INDEX tokens_user ON tokens (user_id);

CREATE TABLE bots (
    id            INTEGER PRIMARY KEY,
    name          TEXT NOT NULL,
    version       TEXT NOT NULL,
    game          TEXT NOT NULL,
    user_id       INTEGER NOT NULL REFERENCES users (id),
    endpoint      TEXT NOT NULL,
    language      TEXT NOT NULL DEFAULT '',
    website       TEXT NOT NULL DEFAULT '',
    description   TEXT NOT NULL DEFAULT '',
    status        TEXT NOT NULL
                  CHECK (status IN ('ONLINE', 'OFFLINE', 'SUPERSEDED', 'DISABLED')),
    secret        TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    last_seen_at  TEXT,
    UNIQUE (name, version)
);
CREATE INDEX bots_name ON bots (name);
CREATE INDEX bots_game_status ON bots (game, status);

CREATE TABLE games (
    id           INTEGER PRIMARY KEY,
    game         TEXT NOT NULL,
    status       TEXT NOT NULL DEFAULT 'PENDING'
                 CHECK (status IN ('PENDING', 'RUNNING', 'FINISHED')),
    seed         INTEGER NOT NULL,
    settings     TEXT NOT NULL DEFAULT '{}',
    outcome      TEXT CHECK (outcome IN ('WIN', 'DRAW', 'NO_RESULT')),
    reason       TEXT CHECK (reason IN ('NORMAL', 'TIMEOUT', 'UNREACHABLE', 'STRIKES',
                                        'NOT_READY', 'SUPERSEDED', 'ABORTED')),
    detail       TEXT,
    final_state  TEXT,
    created_at   TEXT NOT NULL,
    started_at   TEXT,
    finished_at  TEXT,
    CHECK ((status = 'FINISHED') = (outcome IS NOT NULL AND reason IS NOT NULL))
);
CREATE INDEX games_status ON games (status, id);
CREATE INDEX games_game ON games (game, id);

CREATE TABLE seats (
    game_id  INTEGER NOT NULL REFERENCES games (id),
    seat     INTEGER NOT NULL CHECK (seat >= 0),
    bot_id   INTEGER NOT NULL REFERENCES bots (id),
    result   TEXT CHECK (result IN ('WIN', 'DRAW', 'LOSS', 'NONE')),
    rank     INTEGER,
    score    REAL,
    ready    INTEGER NOT NULL DEFAULT 0 CHECK (ready IN (0, 1)),
    PRIMARY KEY (game_id, seat)
);
CREATE INDEX seats_bot ON seats (bot_id, game_id);

-- Every call for a move, in order: accepted moves (move IS NOT NULL) and faults.
-- Replaying the accepted moves from the game's seed rebuilds its state.
CREATE TABLE moves (
    id            INTEGER PRIMARY KEY,
    game_id       INTEGER NOT NULL REFERENCES games (id),
    seq           INTEGER NOT NULL CHECK (seq >= 1),
    seat          INTEGER NOT NULL,
    move          TEXT,
    request       TEXT,
    reply         TEXT,
    latency_ms    REAL,
    fault         TEXT,
    fault_detail  TEXT,
    created_at    TEXT NOT NULL,
    UNIQUE (game_id, seq),
    CHECK ((move IS NULL) <> (fault IS NULL))
);

CREATE TABLE bot_log (
    id          INTEGER PRIMARY KEY,
    bot_id      INTEGER NOT NULL REFERENCES bots (id),
    game_id     INTEGER REFERENCES games (id),
    message     TEXT NOT NULL,
    created_at  TEXT NOT NULL
);
CREATE INDEX bot_log_bot ON bot_log (bot_id, id);
