-- 017_message_fates: what became of each message auto-read considered (read and when, merged with
-- which, dropped as too old, deleted, refused for a limit, not read and why), so "Why wasn't this
-- read?" and /diagnose can answer after a restart too. Ids and codes only, never a message's text;
-- the bot keeps a few hours and a few hundred per server (src/db/message-fates.ts prunes).
CREATE TABLE message_fates (
  guild_id TEXT NOT NULL,
  message_id TEXT NOT NULL,
  channel_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  arrived_at INTEGER NOT NULL,
  fate TEXT NOT NULL,
  decided_at INTEGER NOT NULL,
  detail TEXT NOT NULL DEFAULT '{}',
  PRIMARY KEY (guild_id, message_id)
) STRICT;
CREATE INDEX message_fates_by_member ON message_fates (guild_id, user_id, arrived_at);
CREATE INDEX message_fates_by_arrival ON message_fates (arrived_at);
