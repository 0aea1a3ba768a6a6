import pg from 'pg';

// PostgreSQL for what several hosts share (docs/scaling.md): the account's character
// pool (ACCOUNT_LEDGER_URL) and the rate window of hosts behind one egress IP (RATE_STORE_URL).
// Everything else stays in each host's SQLite. The schema is created on first use, idempotently;
// hosts starting at the same moment take turns (an advisory lock around the DDL).

export type PgPool = pg.Pool;

/** Any number fixed for this project: the key of the advisory lock that guards the DDL. */
const SCHEMA_LOCK = 0x796f6d69; // "yomi"

/** The shared tables. Times of grants and periods are epoch ms (BIGINT); hold expiry is the server's clock. */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS yomiage_pool_holds (
  -- One possible charge of one host (its ledger's reservation id), per endpoint.
  reservation_id TEXT NOT NULL,
  endpoint TEXT NOT NULL CHECK (endpoint IN ('standard', 'advanced')),
  period_start BIGINT NOT NULL,
  -- The process that holds it; it renews expires_at while it lives.
  owner TEXT NOT NULL,
  reserved BIGINT NOT NULL DEFAULT 0 CHECK (reserved >= 0),
  charged BIGINT NOT NULL DEFAULT 0 CHECK (charged >= 0),
  uncertain BIGINT NOT NULL DEFAULT 0 CHECK (uncertain >= 0),
  -- The request left for the service: an expired hold then counts as uncertain, not freed.
  sent BOOLEAN NOT NULL DEFAULT false,
  expires_at TIMESTAMPTZ NOT NULL,
  PRIMARY KEY (reservation_id, endpoint)
);
CREATE INDEX IF NOT EXISTS yomiage_pool_holds_live ON yomiage_pool_holds (period_start, expires_at) WHERE reserved > 0;
CREATE INDEX IF NOT EXISTS yomiage_pool_holds_owner ON yomiage_pool_holds (owner) WHERE reserved > 0;
-- Running totals of the holds per period and endpoint, moved by the same transactions.
CREATE TABLE IF NOT EXISTS yomiage_pool_totals (
  period_start BIGINT NOT NULL,
  endpoint TEXT NOT NULL CHECK (endpoint IN ('standard', 'advanced')),
  reserved BIGINT NOT NULL DEFAULT 0 CHECK (reserved >= 0),
  charged BIGINT NOT NULL DEFAULT 0 CHECK (charged >= 0),
  uncertain BIGINT NOT NULL DEFAULT 0 CHECK (uncertain >= 0),
  PRIMARY KEY (period_start, endpoint)
);
-- The rate window of the hosts behind one IP (as SQLite's rate_grants / rate_blocks, migrations/002).
CREATE TABLE IF NOT EXISTS yomiage_rate_grants (
  id BIGSERIAL PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('standard', 'advanced')),
  granted_at BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS yomiage_rate_grants_kind_time ON yomiage_rate_grants (kind, granted_at);
CREATE TABLE IF NOT EXISTS yomiage_rate_blocks (
  kind TEXT PRIMARY KEY CHECK (kind IN ('standard', 'advanced')),
  until_ms BIGINT NOT NULL
);
INSERT INTO yomiage_rate_blocks (kind, until_ms) VALUES ('standard', 0), ('advanced', 0) ON CONFLICT DO NOTHING;
-- Pacing shared by hosts (as SQLite's migrations/009): the guild each grant went to, and which guilds each
-- process waits for, so hosts pace and take turns together. Guild ids only, no chat text.
ALTER TABLE yomiage_rate_grants ADD COLUMN IF NOT EXISTS grant_key TEXT NOT NULL DEFAULT '';
CREATE TABLE IF NOT EXISTS yomiage_rate_demand (
  kind TEXT NOT NULL CHECK (kind IN ('standard', 'advanced')),
  owner TEXT NOT NULL,
  demand_key TEXT NOT NULL,
  since BIGINT NOT NULL,
  seen_at BIGINT NOT NULL,
  PRIMARY KEY (kind, owner, demand_key)
);
`;

interface PostgresOptions {
  /** Connections per process (a host's processes each have their own). */
  max?: number;
  /** A connection attempt or a query that takes longer fails (the callers fail closed). */
  timeoutMs?: number;
}

const pools = new Map<string, { pool: PgPool; users: number; ready: Promise<void> }>();

/**
 * A connection pool to `url` with the shared schema in place; one per URL in this process, so
 * ACCOUNT_LEDGER_URL and RATE_STORE_URL naming the same database share it. Release with closePostgres.
 */
export async function openPostgres(url: string, options: PostgresOptions = {}): Promise<PgPool> {
  let entry = pools.get(url);
  if (!entry) {
    const timeoutMs = options.timeoutMs ?? 5_000;
    const pool = new pg.Pool({
      connectionString: url,
      max: options.max ?? 4,
      connectionTimeoutMillis: timeoutMs,
      query_timeout: timeoutMs,
      // Another host's transaction holds the lock only briefly; a stuck one must not hang us.
      statement_timeout: timeoutMs,
      idleTimeoutMillis: 30_000,
    });
    // An idle connection that the server dropped is an error event, not a crash.
    pool.on('error', () => {});
    entry = { pool, users: 0, ready: ensureSchema(pool) };
    pools.set(url, entry);
    entry.ready.catch(() => pools.delete(url));
  }
  entry.users += 1;
  try {
    await entry.ready;
  } catch (error) {
    entry.users -= 1;
    if (entry.users === 0) await entry.pool.end().catch(() => {});
    throw error;
  }
  return entry.pool;
}

/** Releases one user of `pool`; the last one closes it. */
export async function closePostgres(pool: PgPool): Promise<void> {
  for (const [url, entry] of pools) {
    if (entry.pool !== pool) continue;
    entry.users -= 1;
    if (entry.users > 0) return;
    pools.delete(url);
  }
  await pool.end().catch(() => {});
}

/** Creates the shared tables if they are missing (safe to run from every host at once). */
async function ensureSchema(pool: PgPool): Promise<void> {
  await transaction(pool, async (c) => {
    await c.query('SELECT pg_advisory_xact_lock($1)', [SCHEMA_LOCK]);
    await c.query(SCHEMA);
  });
}

/** Runs `fn` in one transaction on one connection; rolled back when it throws. */
export async function transaction<T>(pool: PgPool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let failed = false;
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    failed = true;
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    // A connection that failed (the server restarted, a timeout) is not handed out again.
    client.release(failed);
  }
}
