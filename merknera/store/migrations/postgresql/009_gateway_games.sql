-- Games of the MebiPenny hexagons and Kalaha board gateways: their clients know a game by
-- an id of the gateway's own (an 8-digit hex id, a board's UUID), kept as the game's
-- handle; and a game with an anonymous seat (a Kalaha board that anyone may move on, a
-- person who gave no name) is played and kept but rates nobody.
ALTER TABLE games ADD COLUMN handle TEXT;
ALTER TABLE games ADD COLUMN rated INTEGER NOT NULL DEFAULT 1 CHECK (rated IN (0, 1));
CREATE UNIQUE INDEX games_handle ON games (handle, game) WHERE handle IS NOT NULL;
