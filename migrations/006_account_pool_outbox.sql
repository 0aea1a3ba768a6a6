-- 006 (issue 14 §3): with ACCOUNT_LEDGER_URL set, the account's characters are one pool across
-- hosts (PostgreSQL). This host's ledger stays the truth of its own reservations; every change of
-- one is written here in the same transaction, and copied to the pool from here (a crash between
-- the two never loses a change: it is copied after the restart). Unused without a pool.
CREATE TABLE pool_outbox (
  reservation_id TEXT PRIMARY KEY NOT NULL,
  -- Bumped by every change, so a copy only clears the entry when nothing changed meanwhile.
  version INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

-- The billing periods whose rows were already handed to the pool: when a host first uses a pool,
-- what it spent earlier in the current period is copied to it once (the pool must count it too).
CREATE TABLE pool_seeded (
  period_start INTEGER PRIMARY KEY NOT NULL
) STRICT;
