-- 018_voice_pool_and_volume: voices told apart and evened out. A server's voice pool (the
-- standard voices members without a voice of their own are given, one each, at most 20), each
-- member's volume (their own, and one an admin set, which wins; NULL = none), and the volume a
-- queued utterance was accepted with, so a restart plays it as loud as it would have been.
CREATE TABLE voice_pool (
  guild_id TEXT NOT NULL,
  voice TEXT NOT NULL CHECK (length(voice) BETWEEN 1 AND 100),
  added_at INTEGER NOT NULL,
  PRIMARY KEY (guild_id, voice)
) STRICT, WITHOUT ROWID;
ALTER TABLE user_settings ADD COLUMN volume REAL CHECK (volume BETWEEN 0 AND 2);
ALTER TABLE user_settings ADD COLUMN admin_volume REAL CHECK (admin_volume BETWEEN 0 AND 2);
ALTER TABLE pending_utterances ADD COLUMN volume REAL;
