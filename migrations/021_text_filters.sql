-- 018_text_filters: a server's filters against 荒らし (src/db/text-filters.ts): words and patterns
-- (written r/…/) whose messages are not read ('skip') or whose matches are read as `reading`
-- ('replace'); and per server the flood limit and the list's version, bumped in the same
-- transaction as every change (what is read is compiled once per version).
CREATE TABLE text_filters (
  guild_id TEXT NOT NULL,
  word TEXT NOT NULL,
  action TEXT NOT NULL CHECK (action IN ('skip', 'replace')),
  reading TEXT NOT NULL DEFAULT '',
  created_by TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (guild_id, word)
) STRICT, WITHOUT ROWID;

CREATE TABLE text_filter_settings (
  guild_id TEXT PRIMARY KEY NOT NULL,
  -- Messages per member per 10 s read one by one (NULL: no limit).
  flood_max INTEGER CHECK (flood_max IS NULL OR flood_max BETWEEN 2 AND 30),
  version INTEGER NOT NULL DEFAULT 0,
  updated_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
