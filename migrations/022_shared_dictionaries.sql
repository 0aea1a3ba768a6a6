-- 019_shared_dictionaries: dictionaries a server shares and follows (src/db/dictionary-sharing.ts).
-- A server's admins let others follow its dictionary (followable); a follower reads, under its own
-- entries, another server's dictionary ('guild', its id) or one of the operator's curated lists
-- ('curated', its name), live: nothing is copied.
CREATE TABLE dictionary_sharing (
  guild_id TEXT PRIMARY KEY NOT NULL,
  followable INTEGER NOT NULL CHECK (followable IN (0, 1)),
  updated_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

CREATE TABLE dictionary_follows (
  guild_id TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('guild', 'curated')),
  source TEXT NOT NULL,
  created_by TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (guild_id, kind, source)
) STRICT, WITHOUT ROWID;
