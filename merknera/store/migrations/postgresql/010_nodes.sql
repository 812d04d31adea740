-- Nodes and leases (merknera.scheduler.leases): several `merknera serve` processes on one
-- PostgreSQL database, or one on a SQLite file.  Each node keeps a row here while it runs
-- (seen_at: its last heartbeat, epoch seconds); a game is played by the node that holds
-- its lease (games.node) until games.lease_until (epoch seconds), which that node renews
-- while it plays.  A game with no node may be taken by any node; a game whose lease ran
-- out (its node died) is taken over and finishes from its stored moves.
CREATE TABLE nodes (
    id           TEXT PRIMARY KEY NOT NULL,
    address      TEXT NOT NULL,
    pid          INTEGER NOT NULL,
    started_at   TEXT NOT NULL,
    seen_at      DOUBLE PRECISION NOT NULL,
    coordinator  INTEGER NOT NULL DEFAULT 0 CHECK (coordinator IN (0, 1)),
    games        INTEGER NOT NULL DEFAULT 0,
    stopped_at   TEXT
);
ALTER TABLE games ADD COLUMN node TEXT;
ALTER TABLE games ADD COLUMN lease_until DOUBLE PRECISION;
