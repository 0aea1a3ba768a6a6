-- 009_rate_keys_and_demand (issue 12 §2, §5): processes sharing the SQLite rate window pace and
-- order grants together. Each grant records the guild it went to, so "served least recently" is
-- counted across processes, and each process says which guilds it has waiting, so a process holds
-- back when another's guild has the turn.
-- Guild ids only: no chat text.
ALTER TABLE rate_grants ADD COLUMN grant_key TEXT NOT NULL DEFAULT '';

-- One row per guild waiting for a grant in one process (`owner`), refreshed at every look the
-- process takes at the window (`seen_at`); rows not refreshed for a few seconds are ignored and
-- pruned (a process that stopped or crashed).
CREATE TABLE rate_demand (
  kind TEXT NOT NULL CHECK (kind IN ('standard', 'advanced')),
  owner TEXT NOT NULL,
  demand_key TEXT NOT NULL,
  since INTEGER NOT NULL,
  seen_at INTEGER NOT NULL,
  PRIMARY KEY (kind, owner, demand_key)
) STRICT, WITHOUT ROWID;
