-- rebuilds tables: games, for a new origin (SQLite cannot change a CHECK in place).
-- MATCH: a gateway's lobby matched the game (a connected client with another, or with a
-- bot that it waited for); contest: the pool that the clients asked for, if any (a
-- Battlebot contest: pairs meet a bounded number of times; the contest table is made
-- from these games, so it survives a restart).
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
                   CHECK (origin IN ('REGISTRATION', 'LADDER', 'TOURNAMENT', 'MATCH')),
    tournament_id  INTEGER REFERENCES tournaments (id),
    round          INTEGER,
    contest        TEXT CHECK (contest IS NULL OR origin = 'MATCH'),
    CHECK ((status = 'FINISHED') = (outcome IS NOT NULL AND reason IS NOT NULL))
);
INSERT INTO games_rebuilt (id, game, status, seed, settings, outcome, reason, detail,
                           final_state, created_at, started_at, finished_at, origin,
                           tournament_id, round)
    SELECT id, game, status, seed, settings, outcome, reason, detail, final_state,
           created_at, started_at, finished_at, origin, tournament_id, round FROM games;
DROP TABLE games;
ALTER TABLE games_rebuilt RENAME TO games;
CREATE INDEX games_status ON games (status, id);
CREATE INDEX games_game ON games (game, id);
CREATE INDEX games_finished ON games (game, finished_at, id);
CREATE INDEX games_tournament ON games (tournament_id, round);
CREATE INDEX games_contest ON games (game, contest, id) WHERE contest IS NOT NULL;
