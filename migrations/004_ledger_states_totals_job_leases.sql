-- 005: the ledger follows what the service charges (issue 10 §2), stays O(1) at any size (§3),
-- and advanced jobs are claimed with a lease (§5). See README "Characters are money".

-- The ledger, rebuilt with explicit states (SQLite cannot change a CHECK in place):
--   reserved  held before sending; counts against every limit
--   charged   the service charged it (certain)
--   uncertain the service may have charged it (aborted in flight, 5xx); counts like charged
--   released  nothing was charged (not sent, refused, a free history repeat, a refunded job)
-- One reservation_id is one possible charge by the service, split into one row per member.
CREATE TABLE character_ledger_v5 (
  id INTEGER PRIMARY KEY,
  reservation_id TEXT NOT NULL,
  guild_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  period_start INTEGER NOT NULL,
  endpoint TEXT NOT NULL CHECK (endpoint IN ('standard', 'advanced')),
  chars INTEGER NOT NULL CHECK (chars >= 0),
  state TEXT NOT NULL DEFAULT 'reserved' CHECK (state IN ('reserved', 'charged', 'uncertain', 'released')),
  -- Standard: the audio's cache key (a sha256, never the text), to recognise repeats the
  -- account's history serves free and to settle an uncertain charge later.
  audio_key TEXT CHECK (audio_key IS NULL OR length(audio_key) = 64),
  -- Advanced: the job the charge paid for, so its refund finds it (also after a restart).
  job_id TEXT,
  pk INTEGER,
  -- When the first attempt left for the service: a reservation a crashed process left behind
  -- was possibly charged if this is set (uncertain), certainly not if it is not (released).
  sent_at INTEGER,
  created_at INTEGER NOT NULL,
  settled_at INTEGER
) STRICT;
INSERT INTO character_ledger_v5 (id, reservation_id, guild_id, user_id, period_start, endpoint, chars, state, created_at, settled_at)
  SELECT id, reservation_id, guild_id, user_id, period_start, endpoint, chars,
         CASE state WHEN 'committed' THEN 'charged' ELSE 'reserved' END, created_at, settled_at
  FROM character_ledger;
DROP TABLE character_ledger;
ALTER TABLE character_ledger_v5 RENAME TO character_ledger;
CREATE INDEX character_ledger_reservation ON character_ledger (reservation_id);
CREATE INDEX character_ledger_held ON character_ledger (created_at) WHERE state = 'reserved';
CREATE INDEX character_ledger_audio ON character_ledger (audio_key) WHERE audio_key IS NOT NULL AND state = 'uncertain';
CREATE INDEX character_ledger_job ON character_ledger (job_id) WHERE job_id IS NOT NULL;

-- Running totals per period and scope, kept in step with every state change of the ledger in the
-- same transaction, so a reservation reads three rows whatever the ledger's size. Scopes: a member
-- in a guild (guild_id, user_id), a guild (guild_id, ''), the account ('', ''). Each counter only
-- ever moves by a delta, which a network database can apply atomically as well.
CREATE TABLE ledger_totals (
  guild_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  period_start INTEGER NOT NULL,
  endpoint TEXT NOT NULL CHECK (endpoint IN ('standard', 'advanced')),
  reserved INTEGER NOT NULL DEFAULT 0 CHECK (reserved >= 0),
  charged INTEGER NOT NULL DEFAULT 0 CHECK (charged >= 0),
  uncertain INTEGER NOT NULL DEFAULT 0 CHECK (uncertain >= 0),
  PRIMARY KEY (guild_id, user_id, period_start, endpoint)
) STRICT, WITHOUT ROWID;
INSERT INTO ledger_totals (guild_id, user_id, period_start, endpoint, reserved, charged, uncertain)
  SELECT guild_id, user_id, period_start, endpoint,
         SUM(CASE state WHEN 'reserved' THEN chars ELSE 0 END), SUM(CASE state WHEN 'charged' THEN chars ELSE 0 END), 0
  FROM character_ledger GROUP BY guild_id, user_id, period_start, endpoint;
INSERT INTO ledger_totals (guild_id, user_id, period_start, endpoint, reserved, charged, uncertain)
  SELECT guild_id, '', period_start, endpoint,
         SUM(CASE state WHEN 'reserved' THEN chars ELSE 0 END), SUM(CASE state WHEN 'charged' THEN chars ELSE 0 END), 0
  FROM character_ledger GROUP BY guild_id, period_start, endpoint;
INSERT INTO ledger_totals (guild_id, user_id, period_start, endpoint, reserved, charged, uncertain)
  SELECT '', '', period_start, endpoint,
         SUM(CASE state WHEN 'reserved' THEN chars ELSE 0 END), SUM(CASE state WHEN 'charged' THEN chars ELSE 0 END), 0
  FROM character_ledger GROUP BY period_start, endpoint;

-- Standard audio this account has certainly paid for: the service serves a repeat from the
-- account's history free (service-facts.md), so a repeat is not held nor charged again.
CREATE TABLE paid_audio (
  audio_key TEXT PRIMARY KEY NOT NULL CHECK (length(audio_key) = 64),
  pk INTEGER,
  paid_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX paid_audio_pk ON paid_audio (pk) WHERE pk IS NOT NULL;

-- Advanced jobs: the process following a job holds a lease on it (owner, expiry), renewed while
-- it polls; another process resumes a job only once its lease is free or expired.
ALTER TABLE advanced_jobs ADD COLUMN lease_owner TEXT;
ALTER TABLE advanced_jobs ADD COLUMN lease_expires_at INTEGER;
-- A job whose result nobody wants any more (/skip, /clear): still followed to its end so a
-- refund of a failed job is recorded, but never delivered.
ALTER TABLE advanced_jobs ADD COLUMN discard INTEGER NOT NULL DEFAULT 0 CHECK (discard IN (0, 1));
-- What the job cost at creation (code points of its text), kept after the text is cleared so a
-- resumed job's charge can still be recorded.
ALTER TABLE advanced_jobs ADD COLUMN chars INTEGER CHECK (chars IS NULL OR chars >= 0);
CREATE INDEX advanced_jobs_ended ON advanced_jobs (updated_at) WHERE state IN ('failed', 'delivered');

-- Each guild's dictionary version, bumped with every change in the same transaction, so the
-- compiled dictionary is rebuilt once per change instead of once per message (§3).
CREATE TABLE dictionary_versions (
  guild_id TEXT PRIMARY KEY NOT NULL,
  version INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
