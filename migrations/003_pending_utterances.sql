-- 003_pending_utterances: utterances queued but not yet spoken when the bot shut down cleanly, so
-- they can be spoken after the restart. Chat text is stored only until it is spoken: rows are
-- deleted as they are restored (PendingUtteranceStore.take), never kept as history.
CREATE TABLE pending_utterances (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  guild_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  channel_id TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('auto', 'say', 'narrate')),
  text TEXT NOT NULL,
  lang TEXT,
  voice TEXT NOT NULL,
  speed REAL NOT NULL,
  pitch REAL NOT NULL,
  -- JSON of the advanced (Beta) parameters, or NULL for the standard endpoint.
  advanced TEXT,
  -- JSON of the bot's own delivery data (message/channel ids), or NULL.
  meta TEXT,
  enqueued_at INTEGER NOT NULL,
  saved_at INTEGER NOT NULL
) STRICT;
CREATE INDEX pending_utterances_guild ON pending_utterances (guild_id, seq);
