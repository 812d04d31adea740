-- A bot's latest seats with the seat itself in the index, so that each ladder pass reads
-- a bot's last games and whether it moved first from the index alone, not from one table
-- row per game (merknera.store.competition.contenders).  It replaces seats_bot, whose
-- columns it starts with: every query that used seats_bot can use it, and a new seat still
-- updates two indexes.
DROP INDEX seats_bot;
CREATE INDEX seats_bot_seat ON seats (bot_id, game_id, seat);
