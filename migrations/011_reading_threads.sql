-- 011: messages in threads (and forum posts) of a read channel are read; a per-server switch, on by default.
ALTER TABLE reading_settings ADD COLUMN threads INTEGER NOT NULL DEFAULT 1 CHECK (threads IN (0, 1));
