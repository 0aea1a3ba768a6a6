import type pg from 'pg';
import type { Endpoint } from '../billing/ledger.ts';
import { transaction, type PgPool } from './postgres.ts';

// The account's characters as one pool across hosts, in PostgreSQL
// (yomiage_pool_holds / yomiage_pool_totals, src/db/postgres.ts). Each host keeps its own ledger
// in SQLite (src/db/sqlite-ledger.ts) and mirrors every reservation here, one row per reservation and
// endpoint with what it counts (reserved / charged / uncertain), like the account scope of
// ledger_totals but for every host together.
//
// Rules that keep the pool from ever being overspent:
// - Only `hold` adds reserved characters, and only when the period's total leaves room, decided
//   under a per-period lock. A copy from a host (`copy`) never adds reserved characters.
// - Charges are facts: a copy records charged and uncertain characters whatever the total.
// - A hold lives while its owner renews it (`renew`). Once expired, it is settled by whoever
//   holds the lock next: freed when the request never left, uncertain when it did (as a crashed
//   process's holds are settled in SQLite). `markSent` fails on an expired hold, so a request
//   whose hold expired is never sent under it.

/** What one reservation counts in the pool, per endpoint (a host's ledger rows, summed). */
export interface PoolCounts {
  endpoint: Endpoint;
  periodStart: number;
  reserved: number;
  charged: number;
  uncertain: number;
  /** The first attempt left for the service. */
  sent: boolean;
}

interface PoolTotals {
  endpoint: Endpoint;
  reserved: number;
  charged: number;
  uncertain: number;
}

const NAMESPACE = 0x706f6f6c; // "pool": the advisory locks of this module

/** The PostgreSQL side of the account pool; every method is one transaction. */
export class AccountPool {
  readonly #pool: PgPool;
  readonly #holdMs: number;

  /** `holdMs`: how long a hold lives without being renewed. */
  constructor(pool: PgPool, options: { holdMs: number }) {
    this.#pool = pool;
    this.#holdMs = options.holdMs;
  }

  /**
   * Holds `charges` (per endpoint) for reservation `id` of `owner` when the period's total plus
   * them is allowed by `refuse` (the budget's policy, given the pool's total). Expired holds of
   * the period are settled first. Returns the refusal, or undefined when held.
   */
  async hold<R>(
    request: { id: string; owner: string; periodStart: number; byEndpoint: ReadonlyMap<Endpoint, number> },
    refuse: (used: number) => R | undefined,
  ): Promise<R | undefined> {
    return transaction(this.#pool, async (c) => {
      await lockPeriod(c, request.periodStart);
      await this.#settleExpired(c, request.periodStart);
      const used = await usedIn(c, request.periodStart);
      const refusal = refuse(used);
      if (refusal !== undefined) return refusal;
      for (const [endpoint, chars] of request.byEndpoint) {
        if (chars <= 0) continue;
        await c.query(
          `INSERT INTO yomiage_pool_holds (reservation_id, endpoint, period_start, owner, reserved, expires_at)
           VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6::double precision / 1000))`,
          [request.id, endpoint, request.periodStart, request.owner, chars, this.#holdMs],
        );
        await moveTotals(c, request.periodStart, endpoint, { reserved: chars, charged: 0, uncertain: 0 });
      }
      return undefined;
    });
  }

  /** The request of reservation `id` is leaving: false when its hold is gone or expired (then it must not be sent). */
  async markSent(id: string): Promise<boolean> {
    const result = await this.#pool.query(
      'UPDATE yomiage_pool_holds SET sent = true WHERE reservation_id = $1 AND reserved > 0 AND expires_at > now()',
      [id],
    );
    return (result.rowCount ?? 0) > 0;
  }

  /**
   * Brings the pool's rows of reservation `id` to what the host's ledger says now (`counts`), moving
   * the totals by the difference. Never adds reserved characters (only `hold` may); a sent hold
   * that the pool settled as uncertain stays counted until the host settles it.
   */
  async copy(id: string, owner: string, counts: readonly PoolCounts[]): Promise<void> {
    if (counts.length === 0) return;
    await transaction(this.#pool, async (c) => {
      const periods = [...new Set(counts.map((n) => n.periodStart))].sort((a, b) => a - b);
      for (const p of periods) await lockPeriod(c, p);
      for (const n of counts) {
        const { rows } = await c.query<{ reserved: string; charged: string; uncertain: string }>(
          'SELECT reserved, charged, uncertain FROM yomiage_pool_holds WHERE reservation_id = $1 AND endpoint = $2 FOR UPDATE',
          [id, n.endpoint],
        );
        const before = rows[0]
          ? { reserved: Number(rows[0].reserved), charged: Number(rows[0].charged), uncertain: Number(rows[0].uncertain) }
          : undefined;
        const reserved = Math.min(n.reserved, before?.reserved ?? 0);
        // Held characters the pool cannot keep as held (it never admitted them, or settled them) count as uncertain once sent.
        const after = { reserved, charged: n.charged, uncertain: n.uncertain + (n.sent ? n.reserved - reserved : 0) };
        if (!before) {
          if (after.charged + after.uncertain === 0) continue;
          await c.query(
            `INSERT INTO yomiage_pool_holds (reservation_id, endpoint, period_start, owner, charged, uncertain, sent, expires_at)
             VALUES ($1, $2, $3, $4, $5, $6, true, now())`,
            [id, n.endpoint, n.periodStart, owner, after.charged, after.uncertain],
          );
          await moveTotals(c, n.periodStart, n.endpoint, { reserved: 0, charged: after.charged, uncertain: after.uncertain });
          continue;
        }
        await c.query(
          'UPDATE yomiage_pool_holds SET reserved = $3, charged = $4, uncertain = $5, sent = sent OR $6 WHERE reservation_id = $1 AND endpoint = $2',
          [id, n.endpoint, after.reserved, after.charged, after.uncertain, n.sent],
        );
        await moveTotals(c, n.periodStart, n.endpoint, {
          reserved: after.reserved - before.reserved,
          charged: after.charged - before.charged,
          uncertain: after.uncertain - before.uncertain,
        });
      }
    });
  }

  /** The owner is alive: its holds live another `holdMs`. */
  async renew(owner: string): Promise<void> {
    await this.#pool.query(
      'UPDATE yomiage_pool_holds SET expires_at = now() + make_interval(secs => $2::double precision / 1000) WHERE owner = $1 AND reserved > 0',
      [owner, this.#holdMs],
    );
  }

  /** Settles the expired holds of every period (a dead host's); returns how many. */
  async settleExpired(): Promise<number> {
    const { rows } = await this.#pool.query<{ period_start: string }>(
      'SELECT DISTINCT period_start FROM yomiage_pool_holds WHERE reserved > 0 AND expires_at <= now()',
    );
    let n = 0;
    for (const r of rows) {
      n += await transaction(this.#pool, async (c) => {
        await lockPeriod(c, Number(r.period_start));
        return this.#settleExpired(c, Number(r.period_start));
      });
    }
    return n;
  }

  /** The pool's totals in [start, end) by endpoint. */
  async totals(period: { start: number; end: number }): Promise<PoolTotals[]> {
    const { rows } = await this.#pool.query<{ endpoint: Endpoint; reserved: string; charged: string; uncertain: string }>(
      `SELECT endpoint, SUM(reserved) AS reserved, SUM(charged) AS charged, SUM(uncertain) AS uncertain
       FROM yomiage_pool_totals WHERE period_start >= $1 AND period_start < $2 GROUP BY endpoint`,
      [period.start, period.end],
    );
    return rows.map((r) => ({
      endpoint: r.endpoint,
      reserved: Number(r.reserved),
      charged: Number(r.charged),
      uncertain: Number(r.uncertain),
    }));
  }

  async #settleExpired(c: pg.PoolClient, periodStart: number): Promise<number> {
    const { rows } = await c.query<{ endpoint: Endpoint; reserved: string; sent: boolean }>(
      `WITH expired AS (
         SELECT reservation_id, endpoint, reserved FROM yomiage_pool_holds
         WHERE period_start = $1 AND reserved > 0 AND expires_at <= now() FOR UPDATE
       )
       UPDATE yomiage_pool_holds h SET reserved = 0, uncertain = h.uncertain + CASE WHEN h.sent THEN e.reserved ELSE 0 END
       FROM expired e WHERE h.reservation_id = e.reservation_id AND h.endpoint = e.endpoint
       RETURNING h.endpoint, e.reserved, h.sent`,
      [periodStart],
    );
    for (const r of rows) {
      const chars = Number(r.reserved);
      await moveTotals(c, periodStart, r.endpoint, { reserved: -chars, charged: 0, uncertain: r.sent ? chars : 0 });
    }
    return rows.length;
  }
}

/** Reservations of one period take turns (held until the transaction ends). */
async function lockPeriod(c: pg.PoolClient, periodStart: number): Promise<void> {
  // Periods start on whole seconds far below 2^31 days: the day number is a fine lock key.
  await c.query('SELECT pg_advisory_xact_lock($1, $2)', [NAMESPACE, Math.floor(periodStart / 86_400_000)]);
}

async function usedIn(c: pg.PoolClient, periodStart: number): Promise<number> {
  const { rows } = await c.query<{ used: string | null }>(
    'SELECT SUM(reserved + charged + uncertain) AS used FROM yomiage_pool_totals WHERE period_start = $1',
    [periodStart],
  );
  return Number(rows[0]?.used ?? 0);
}

async function moveTotals(
  c: pg.PoolClient,
  periodStart: number,
  endpoint: Endpoint,
  d: { reserved: number; charged: number; uncertain: number },
): Promise<void> {
  if (d.reserved === 0 && d.charged === 0 && d.uncertain === 0) return;
  await c.query(
    `INSERT INTO yomiage_pool_totals (period_start, endpoint, reserved, charged, uncertain) VALUES ($1, $2, GREATEST($3, 0), GREATEST($4, 0), GREATEST($5, 0))
     ON CONFLICT (period_start, endpoint) DO UPDATE SET reserved = yomiage_pool_totals.reserved + $3, charged = yomiage_pool_totals.charged + $4, uncertain = yomiage_pool_totals.uncertain + $5`,
    [periodStart, endpoint, d.reserved, d.charged, d.uncertain],
  );
}
