-- 013_voice_sessions_per_channel: a listening session is one bot account in one voice channel, and a
-- server may have several (extra bot accounts, EXTRA_DISCORD_TOKENS), so the sessions a restart
-- rejoins are keyed by voice channel and say which account was there. An account is in at most one
-- voice channel per server (as on Discord). Rows written before were the main account's: their
-- account_id is '' (the main account, whatever its user id).
CREATE TABLE voice_sessions_by_channel (
  voice_channel_id TEXT PRIMARY KEY NOT NULL,
  guild_id TEXT NOT NULL,
  account_id TEXT NOT NULL DEFAULT '',
  text_channel_id TEXT,
  updated_at INTEGER NOT NULL,
  UNIQUE (guild_id, account_id)
) STRICT;
INSERT INTO voice_sessions_by_channel (voice_channel_id, guild_id, account_id, text_channel_id, updated_at)
  SELECT voice_channel_id, guild_id, '', text_channel_id, updated_at FROM voice_sessions;
DROP TABLE voice_sessions;
ALTER TABLE voice_sessions_by_channel RENAME TO voice_sessions;
