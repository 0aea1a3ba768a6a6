-- 016_reading_freshness: how fresh auto-read stays when a voice channel is busier than it can be
-- read: the horizon (seconds) beyond which a backlog is dropped with the spoken summary instead of
-- read late, and whether speech may speed up (to at most 1.5x) to keep up.
-- AUTO_READ_MAX_AGE_SECONDS stays the hard limit above both.
ALTER TABLE reading_settings ADD COLUMN fresh_seconds INTEGER NOT NULL DEFAULT 20 CHECK (fresh_seconds BETWEEN 5 AND 600);
ALTER TABLE reading_settings ADD COLUMN speed_up INTEGER NOT NULL DEFAULT 1 CHECK (speed_up IN (0, 1));
