-- 001_init: the bot's initial schema. Forward-only: later changes go in 002_*, 003_*, ...
-- Ids from Discord are snowflake strings (TEXT). Times are epoch milliseconds (INTEGER).

-- Per-guild settings; a missing row means "all defaults" (the repository fills them in).
CREATE TABLE guild_settings (
  guild_id TEXT PRIMARY KEY NOT NULL,
  voice TEXT NOT NULL DEFAULT 'ja-JP-Wavenet-B',
  speed REAL NOT NULL DEFAULT 1.0,
  pitch REAL NOT NULL DEFAULT 0,
  read_author_names INTEGER NOT NULL DEFAULT 1 CHECK (read_author_names IN (0, 1)),
  announce_join_leave INTEGER NOT NULL DEFAULT 0 CHECK (announce_join_leave IN (0, 1)),
  max_length INTEGER NOT NULL DEFAULT 100 CHECK (max_length > 0),
  ignore_prefix TEXT NOT NULL DEFAULT ';',
  -- NULL = the bot's default limit.
  user_monthly_limit INTEGER CHECK (user_monthly_limit IS NULL OR user_monthly_limit >= 0),
  guild_monthly_limit INTEGER CHECK (guild_monthly_limit IS NULL OR guild_monthly_limit >= 0),
  auto_join_channel_id TEXT,
  locale TEXT NOT NULL DEFAULT 'ja',
  updated_at INTEGER NOT NULL
) STRICT;

-- Text channels whose messages are read aloud automatically.
CREATE TABLE auto_read_channels (
  guild_id TEXT NOT NULL,
  channel_id TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (guild_id, channel_id)
) STRICT, WITHOUT ROWID;

-- Per-user overrides within one guild; NULL voice/speed/pitch = the guild's default.
CREATE TABLE user_settings (
  guild_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  voice TEXT,
  speed REAL,
  pitch REAL,
  nickname TEXT,
  muted INTEGER NOT NULL DEFAULT 0 CHECK (muted IN (0, 1)),
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (guild_id, user_id)
) STRICT, WITHOUT ROWID;

-- Per-guild reading dictionary: word -> how to read it.
CREATE TABLE dictionary_entries (
  guild_id TEXT NOT NULL,
  word TEXT NOT NULL CHECK (length(word) > 0),
  reading TEXT NOT NULL,
  created_by TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (guild_id, word)
) STRICT, WITHOUT ROWID;

-- Character ledger: one row per reservation. Characters are the account's money (spec: quotas);
-- both reserved and committed rows count toward every limit.
CREATE TABLE character_ledger (
  id INTEGER PRIMARY KEY,
  reservation_id TEXT NOT NULL,
  guild_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  period_start INTEGER NOT NULL,
  endpoint TEXT NOT NULL CHECK (endpoint IN ('standard', 'advanced')),
  chars INTEGER NOT NULL CHECK (chars >= 0),
  state TEXT NOT NULL DEFAULT 'reserved' CHECK (state IN ('reserved', 'committed')),
  created_at INTEGER NOT NULL,
  settled_at INTEGER
) STRICT;
CREATE INDEX character_ledger_period_guild_user ON character_ledger (period_start, guild_id, user_id);
CREATE INDEX character_ledger_period_guild ON character_ledger (period_start, guild_id);
CREATE INDEX character_ledger_reservation ON character_ledger (reservation_id);
CREATE INDEX character_ledger_reserved ON character_ledger (state, created_at) WHERE state = 'reserved';

-- Advanced (asynchronous) jobs, persisted from creation so a restart can resume polling.
-- job_token is a secret (never logged). request.text is cleared once the job ends (privacy).
CREATE TABLE advanced_jobs (
  job_id TEXT PRIMARY KEY NOT NULL,
  job_token TEXT NOT NULL,
  guild_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  channel_id TEXT NOT NULL,
  delivery TEXT NOT NULL CHECK (json_valid(delivery)),
  request TEXT NOT NULL CHECK (json_valid(request)),
  state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'running', 'succeeded', 'failed', 'delivered')),
  attempt INTEGER NOT NULL DEFAULT 1 CHECK (attempt >= 1),
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  url TEXT,
  pk INTEGER,
  seed INTEGER,
  error_code TEXT
) STRICT;
CREATE INDEX advanced_jobs_unfinished ON advanced_jobs (state) WHERE state IN ('pending', 'running', 'succeeded');

-- What was generated (service pk), for audit and /usage; never the text itself, only its sha256.
CREATE TABLE generation_history (
  id INTEGER PRIMARY KEY,
  pk INTEGER,
  endpoint TEXT NOT NULL CHECK (endpoint IN ('standard', 'advanced')),
  url TEXT,
  voice TEXT NOT NULL,
  characters INTEGER NOT NULL CHECK (characters >= 0),
  text_hash TEXT NOT NULL CHECK (length(text_hash) = 64),
  guild_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX generation_history_guild_created ON generation_history (guild_id, created_at);
