-- 008 (issue 13): reading controls other read-aloud bots have. One row per guild that changed one
-- (a missing row means every default), and the guild's lists (allowed bots and webhooks, roles
-- never read). Kept apart from guild_settings so the switches can grow without touching it.
CREATE TABLE reading_settings (
  guild_id TEXT PRIMARY KEY NOT NULL,
  -- Messages from bots and webhooks: 'off' (default), 'listed' (only the allow-list), 'all'.
  bots TEXT NOT NULL DEFAULT 'off' CHECK (bots IN ('off', 'listed', 'all')),
  -- Forwarded messages: their snapshot is read after a short lead-in.
  forwards INTEGER NOT NULL DEFAULT 1 CHECK (forwards IN (0, 1)),
  -- Unicode emoji read by their names (else dropped, as before).
  emoji INTEGER NOT NULL DEFAULT 0 CHECK (emoji IN (0, 1)),
  -- Only members with this role are read; NULL = everyone.
  required_role_id TEXT,
  -- Only members in the bot's voice channel are read (while the bot is in voice).
  require_in_voice INTEGER NOT NULL DEFAULT 0 CHECK (require_in_voice IN (0, 1)),
  -- "3件省略しました" spoken when stale auto-read messages were dropped.
  stale_notice INTEGER NOT NULL DEFAULT 1 CHECK (stale_notice IN (0, 1)),
  updated_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

-- kind 'bot': a bot user id or webhook id whose messages are read (bots = 'listed').
-- kind 'never_role': members with this role are never read.
CREATE TABLE reading_lists (
  guild_id TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('bot', 'never_role')),
  target_id TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (guild_id, kind, target_id)
) STRICT, WITHOUT ROWID;
