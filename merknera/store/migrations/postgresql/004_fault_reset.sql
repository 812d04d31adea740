-- The fault rule counts only games finished after a bot was last enabled or registered
-- again, so that a bot that comes back with a fix is not judged by its old games.
ALTER TABLE bots ADD COLUMN fault_reset_at TEXT;
