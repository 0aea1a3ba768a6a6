-- 010_utterance_audience: who may hear or read each queued utterance (a voice session, or one text
-- channel where its MP3 is posted), so that after a restart the restored queue is still merged
-- only within one audience and one channel's text is never posted in another. NULL (rows written
-- before this column) means the utterance's own text channel: merged with nothing else.
ALTER TABLE pending_utterances ADD COLUMN audience TEXT;
