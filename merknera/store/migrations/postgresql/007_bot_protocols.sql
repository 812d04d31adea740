-- The protocol a bot speaks (merknera.protocol.bot_protocols.BotProtocol, which checks
-- it: no CHECK here, so that a new protocol needs no rebuild of the table): every bot
-- registered before spoke JSON-RPC.  A bot that speaks the Squelchbot REST API names
-- itself in its GET /bot/info, shown on its page.
ALTER TABLE bots ADD COLUMN protocol TEXT NOT NULL DEFAULT 'jsonrpc';
ALTER TABLE bots ADD COLUMN self_name TEXT;
