-- MATCH: a gateway's lobby matched the game (a connected client with another, or with a
-- bot that it waited for); contest: the pool that the clients asked for, if any (a
-- Battlebot contest: pairs meet a bounded number of times; the contest table is made
-- from these games, so it survives a restart).
-- PostgreSQL changes the CHECK in place (SQLite rebuilds the table): the CHECK on origin
-- that 003_competition.sql added with the column is named games_origin_check.  The new
-- column comes last, as in SQLite's rebuilt table.
ALTER TABLE games DROP CONSTRAINT games_origin_check;
ALTER TABLE games ADD CONSTRAINT games_origin_check
    CHECK (origin IN ('REGISTRATION', 'LADDER', 'TOURNAMENT', 'MATCH'));
ALTER TABLE games ADD COLUMN contest TEXT CHECK (contest IS NULL OR origin = 'MATCH');
CREATE INDEX games_contest ON games (game, contest, id) WHERE contest IS NOT NULL;
