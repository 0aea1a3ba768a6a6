-- 005_restart_safety (issue 9): nothing accepted is lost across a restart or a crash, and the bot
-- goes back to the voice channels it was reading in.

-- pending_utterances now holds every accepted utterance from the moment it is accepted until it is
-- spoken or dropped (written on accept, deleted when finished), not only what a clean shutdown
-- saved. `restores` counts the start-ups that took it back: one that keeps coming back is given
-- up (and its author told) instead of being retried forever.
ALTER TABLE pending_utterances ADD COLUMN restores INTEGER NOT NULL DEFAULT 0;

-- The voice channel (and the bound text channel) of each guild the bot is reading in. A row
-- leaves on /leave, the automatic leave and a disconnect by someone else; a shutdown keeps it, so
-- the next start rejoins while humans are still there.
CREATE TABLE voice_sessions (
  guild_id TEXT PRIMARY KEY NOT NULL,
  voice_channel_id TEXT NOT NULL,
  text_channel_id TEXT,
  updated_at INTEGER NOT NULL
) STRICT;

-- Auto-read channels are read only while the bot is in a voice channel of the guild, unless an
-- admin lets one post MP3s when it is not (this costs characters: /autoread add mp3:true).
ALTER TABLE auto_read_channels ADD COLUMN post_audio INTEGER NOT NULL DEFAULT 0 CHECK (post_audio IN (0, 1));
