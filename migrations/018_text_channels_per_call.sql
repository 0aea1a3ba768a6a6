-- 018_text_channels_per_call: one call may read several text channels (a member in the call adds
-- the one they type /join in); how many at most is the server's to set (/config text-channels),
-- 3 unless an admin changes it. The voice channel's own chat is read with its call and not counted.
ALTER TABLE guild_settings ADD COLUMN text_channels_per_call INTEGER NOT NULL DEFAULT 3 CHECK (text_channels_per_call BETWEEN 1 AND 10);
