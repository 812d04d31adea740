-- Ratings (merknera.ratings, merknera.store.ratings): each bot version's current rating, and
-- its rating after every rated game.  Both are derived from the stored results and can be
-- recomputed from them: `merknera ratings rebuild`.  A bot without a row here has played no
-- rated game and stands at the default rating.

-- bot_id is the id of a bot, not a generated one (in SQLite an INTEGER PRIMARY KEY is the
-- rowid, but every row is inserted with its bot's id): a plain BIGINT key here.
CREATE TABLE ratings (
    bot_id       BIGINT PRIMARY KEY REFERENCES bots (id),
    game         TEXT NOT NULL,
    mu           DOUBLE PRECISION NOT NULL,
    sigma        DOUBLE PRECISION NOT NULL CHECK (sigma > 0),
    rated_games  INTEGER NOT NULL CHECK (rated_games >= 1),
    -- finished_at of the game that last changed the rating (so a rebuild gives the same row)
    updated_at   TEXT NOT NULL
);
CREATE INDEX ratings_game ON ratings (game);

-- A bot's rating right after each rated game; ordinal = mu - 3 * sigma.
CREATE TABLE rating_history (
    game_id  BIGINT NOT NULL REFERENCES games (id),
    bot_id   BIGINT NOT NULL REFERENCES bots (id),
    mu       DOUBLE PRECISION NOT NULL,
    sigma    DOUBLE PRECISION NOT NULL,
    ordinal  DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (game_id, bot_id)
);
CREATE INDEX rating_history_bot ON rating_history (bot_id, game_id);

-- Games are rated in the order they finished: finished_at, then id.  Rating a game looks for
-- games of the same kind that finished after it (merknera.store.ratings.rate_in).
CREATE INDEX games_finished ON games (game, finished_at, id);
