-- 009: reading controls of issue 13 (dictionary, playback moderation, spend shown before spent).
-- A table of its own instead of more guild_settings columns: one row per guild that changed one
-- of these; a missing row means the defaults (src/db/guild-controls.ts).
CREATE TABLE guild_controls (
  guild_id TEXT PRIMARY KEY NOT NULL,
  -- Members with this role may edit the dictionary besides Manage Server; NULL = Manage Server only.
  dictionary_role_id TEXT,
  -- /narrate texts longer than this ask the member to confirm the cost first.
  narrate_confirm_chars INTEGER NOT NULL DEFAULT 200 CHECK (narrate_confirm_chars >= 0),
  updated_at INTEGER NOT NULL
) STRICT;

-- Roles with a larger monthly character limit per member (e.g. boosters); a member with several
-- gets the largest, never less than the server's member limit.
CREATE TABLE role_allowances (
  guild_id TEXT NOT NULL,
  role_id TEXT NOT NULL,
  monthly_limit INTEGER NOT NULL CHECK (monthly_limit >= 0),
  created_at INTEGER NOT NULL,
  PRIMARY KEY (guild_id, role_id)
) STRICT, WITHOUT ROWID;
