-- 019_voice_session_text_channels: a call may read several text channels, and a restart reads them
-- all again. text_channel_id stays the first of them (where /join was typed, or the oldest one
-- still read); also_read holds the others as a JSON array of channel ids, in the order they were added.
ALTER TABLE voice_sessions ADD COLUMN also_read TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(also_read) AND json_type(also_read) = 'array');
