-- 023_fast_reading: a message longer than the server's max length is read faster (早口) instead of
-- cut, up to this many times the speed (/config fast-reading, 1.0 to 4.0, the service's fastest);
-- only past this many times the max length is it cut. 1.0 turns it off: cut at the max length.
ALTER TABLE guild_settings ADD COLUMN fast_reading_ceiling REAL NOT NULL DEFAULT 2.0 CHECK (fast_reading_ceiling BETWEEN 1.0 AND 4.0);
