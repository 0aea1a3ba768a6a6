-- 002_rate_limit_and_audio_cache: the shared per-IP rate budget and the audio cache index.
-- Times are epoch milliseconds (INTEGER). No chat text is stored here: cache keys are sha256 hashes.

-- One row per request granted by any bot process on this host (spec: Limits, 30 standard /
-- 10 advanced per 60 s per client IP). Rows older than the window are pruned as grants are taken.
CREATE TABLE rate_grants (
  id INTEGER PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('standard', 'advanced')),
  granted_at INTEGER NOT NULL
) STRICT;
CREATE INDEX rate_grants_kind_time ON rate_grants (kind, granted_at);

-- The service said to wait (reset_in / retry_after): nothing of `kind` is granted before until_ms.
CREATE TABLE rate_blocks (
  kind TEXT PRIMARY KEY NOT NULL CHECK (kind IN ('standard', 'advanced')),
  until_ms INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

-- Content-addressed audio: the MP3 as the service sent it and the Ogg Opus made from it once.
-- Paths are relative to the cache directory.
CREATE TABLE audio_cache (
  key TEXT PRIMARY KEY NOT NULL CHECK (length(key) = 64),
  endpoint TEXT NOT NULL CHECK (endpoint IN ('standard', 'advanced')),
  mp3_path TEXT NOT NULL,
  ogg_path TEXT NOT NULL,
  mp3_bytes INTEGER NOT NULL CHECK (mp3_bytes >= 0),
  ogg_bytes INTEGER NOT NULL CHECK (ogg_bytes >= 0),
  duration_ms INTEGER NOT NULL CHECK (duration_ms >= 0),
  created_at INTEGER NOT NULL,
  last_used_at INTEGER NOT NULL,
  hits INTEGER NOT NULL DEFAULT 0 CHECK (hits >= 0)
) STRICT, WITHOUT ROWID;
CREATE INDEX audio_cache_lru ON audio_cache (last_used_at);
