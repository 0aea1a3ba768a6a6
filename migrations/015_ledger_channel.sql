-- 015_ledger_channel: the text channel a ledger row's characters were spent for (the message read
-- aloud was posted there), for usage per channel on the dashboard. A request merging several
-- channels' messages has one row per member and channel. Rows written before this have none
-- (NULL), shown as "other/unknown"; so do charges no channel asked for (the voice preview).
ALTER TABLE character_ledger ADD COLUMN channel_id TEXT;
