-- Competition: why a bot is disabled, where a game comes from, tournaments.

ALTER TABLE bots ADD COLUMN disabled_by TEXT CHECK (disabled_by IN ('ADMIN', 'FAULTS'));
ALTER TABLE bots ADD COLUMN disabled_reason TEXT;

-- REGISTRATION: Merknera's round robin; LADDER: the continuous ladder; TOURNAMENT: a round.
ALTER TABLE games ADD COLUMN origin TEXT NOT NULL DEFAULT 'REGISTRATION'
    CHECK (origin IN ('REGISTRATION', 'LADDER', 'TOURNAMENT'));
ALTER TABLE games ADD COLUMN tournament_id INTEGER REFERENCES tournaments (id);
ALTER TABLE games ADD COLUMN round INTEGER;
CREATE INDEX games_tournament ON games (tournament_id, round);

CREATE TABLE tournaments (
    id           INTEGER PRIMARY KEY,
    game         TEXT NOT NULL,
    format       TEXT NOT NULL CHECK (format IN ('ROUND_ROBIN', 'SWISS')),
    rounds       INTEGER NOT NULL CHECK (rounds >= 1),
    status       TEXT NOT NULL DEFAULT 'PENDING'
                 CHECK (status IN ('PENDING', 'RUNNING', 'FINISHED')),
    round        INTEGER NOT NULL DEFAULT 0,
    created_at   TEXT NOT NULL,
    finished_at  TEXT
);

CREATE TABLE tournament_entrants (
    tournament_id  INTEGER NOT NULL REFERENCES tournaments (id),
    bot_id         INTEGER NOT NULL REFERENCES bots (id),
    seed           INTEGER NOT NULL,
    PRIMARY KEY (tournament_id, bot_id)
);

-- A bye of a round: the entrant sat out and scores a bye.
CREATE TABLE tournament_byes (
    tournament_id  INTEGER NOT NULL REFERENCES tournaments (id),
    round          INTEGER NOT NULL,
    bot_id         INTEGER NOT NULL REFERENCES bots (id),
    PRIMARY KEY (tournament_id, round)
);
