-- rebuilds tables: games, for two new origins (SQLite cannot change a CHECK in place).
-- CHALLENGE: an owner asked for unrated games between a bot of theirs and another
-- (challenges); DUEL: game pairs between two versions of one bot until a sequential test
-- decides (duels).  Paired games (same seed, seats swapped) share a pair number.  A
-- candidate version (bots.candidate) supersedes no version and plays only challenges and
-- duels.
CREATE TABLE challenges (
    id           INTEGER PRIMARY KEY,
    user_id      INTEGER NOT NULL REFERENCES users (id),
    bot_id       INTEGER NOT NULL REFERENCES bots (id),
    opponent_id  INTEGER NOT NULL REFERENCES bots (id),
    games        INTEGER NOT NULL CHECK (games BETWEEN 1 AND 100),
    created_at   TEXT NOT NULL
);
CREATE INDEX challenges_user ON challenges (user_id, created_at);
CREATE TABLE duels (
    id            INTEGER PRIMARY KEY,
    user_id       INTEGER NOT NULL REFERENCES users (id),
    candidate_id  INTEGER NOT NULL REFERENCES bots (id),
    baseline_id   INTEGER NOT NULL REFERENCES bots (id),
    elo0          REAL NOT NULL,
    elo1          REAL NOT NULL,
    alpha         REAL NOT NULL,
    beta          REAL NOT NULL,
    max_pairs     INTEGER NOT NULL CHECK (max_pairs >= 1),
    status        TEXT NOT NULL DEFAULT 'RUNNING'
                  CHECK (status IN ('RUNNING', 'FINISHED', 'STOPPED')),
    result        TEXT CHECK (result IN ('H0', 'H1')),
    decided       TEXT,
    created_at    TEXT NOT NULL,
    finished_at   TEXT
);
CREATE INDEX duels_status ON duels (status, id);
ALTER TABLE bots ADD COLUMN candidate INTEGER NOT NULL DEFAULT 0 CHECK (candidate IN (0, 1));
CREATE TABLE games_rebuilt (
    id             INTEGER PRIMARY KEY,
    game           TEXT NOT NULL,
    status         TEXT NOT NULL DEFAULT 'PENDING'
                   CHECK (status IN ('PENDING', 'RUNNING', 'FINISHED')),
    seed           INTEGER NOT NULL,
    settings       TEXT NOT NULL DEFAULT '{}',
    outcome        TEXT CHECK (outcome IN ('WIN', 'DRAW', 'NO_RESULT')),
    reason         TEXT CHECK (reason IN ('NORMAL', 'TIMEOUT', 'UNREACHABLE', 'STRIKES',
                                          'NOT_READY', 'SUPERSEDED', 'ABORTED')),
    detail         TEXT,
    final_state    TEXT,
    created_at     TEXT NOT NULL,
    started_at     TEXT,
    finished_at    TEXT,
    origin         TEXT NOT NULL DEFAULT 'REGISTRATION'
                   CHECK (origin IN ('REGISTRATION', 'LADDER', 'TOURNAMENT', 'MATCH',
                                     'CHALLENGE', 'DUEL')),
    tournament_id  INTEGER REFERENCES tournaments (id),
    round          INTEGER,
    contest        TEXT CHECK (contest IS NULL OR origin = 'MATCH'),
    handle         TEXT,
    rated          INTEGER NOT NULL DEFAULT 1 CHECK (rated IN (0, 1)),
    node           TEXT,
    lease_until    REAL,
    challenge_id   INTEGER REFERENCES challenges (id),
    duel_id        INTEGER REFERENCES duels (id),
    pair           INTEGER,
    CHECK ((status = 'FINISHED') = (outcome IS NOT NULL AND reason IS NOT NULL))
);
INSERT INTO games_rebuilt (id, game, status, seed, settings, outcome, reason, detail,
                           final_state, created_at, started_at, finished_at, origin,
                           tournament_id, round, contest, handle, rated, node, lease_until)
    SELECT id, game, status, seed, settings, outcome, reason, detail, final_state,
           created_at, started_at, finished_at, origin, tournament_id, round, contest,
           handle, rated, node, lease_until FROM games;
DROP TABLE games;
ALTER TABLE games_rebuilt RENAME TO games;
CREATE INDEX games_status ON games (status, id);
CREATE INDEX games_game ON games (game, id);
CREATE INDEX games_finished ON games (game, finished_at, id);
CREATE INDEX games_tournament ON games (tournament_id, round);
CREATE INDEX games_contest ON games (game, contest, id) WHERE contest IS NOT NULL;
CREATE UNIQUE INDEX games_handle ON games (handle, game) WHERE handle IS NOT NULL;
CREATE INDEX games_challenge ON games (challenge_id, id) WHERE challenge_id IS NOT NULL;
CREATE INDEX games_duel ON games (duel_id, pair) WHERE duel_id IS NOT NULL;
