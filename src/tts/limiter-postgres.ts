import { SharedStoreError } from '../db/errors.ts';
import { transaction, type PgPool } from '../db/postgres.ts';
import type { RateKind } from './limiter.ts';
import { decide, type TakeResult, type WindowStore } from './limiter-window.ts';

export interface PostgresWindowStoreOptions {
  pg: PgPool;
  /** While PostgreSQL does not answer, waiters wait this long before they fail (fail closed). */
  outageGraceMs?: number;
  /** How soon to look again while it does not answer. */
  retryMs?: number;
}

/**
 * The rate window of several hosts behind one egress IP (issue 14 §3, RATE_STORE_URL): the same
 * decision as the SQLite window (limiter-window.ts), counted in PostgreSQL (yomiage_rate_grants,
 * src/db/postgres.ts). Takers of one kind take turns on the kind's row of yomiage_rate_blocks, so
 * two hosts can never both take the last slot. Grants are stamped with the hosts' clocks: keep
 * them in step (NTP); the limiter's safety margin (1 s) absorbs a smaller drift.
 *
 * PostgreSQL down: nothing is granted (the IP's window cannot be known); waiters keep waiting
 * `outageGraceMs`, then fail with SharedStoreError('rate_store_unavailable').
 */
export class PostgresWindowStore implements WindowStore {
  readonly #pg: PgPool;
  readonly #graceMs: number;
  readonly #retryMs: number;
  #downSince: number | undefined;

  constructor(options: PostgresWindowStoreOptions) {
    this.#pg = options.pg;
    this.#graceMs = options.outageGraceMs ?? 10_000;
    this.#retryMs = options.retryMs ?? 500;
  }

  async tryTake(kind: RateKind, now: number, limit: number, windowMs: number): Promise<TakeResult> {
    try {
      const result = await transaction(this.#pg, async (c) => {
        const block = await c.query<{ until_ms: string }>('SELECT until_ms FROM yomiage_rate_blocks WHERE kind = $1 FOR UPDATE', [kind]);
        // Prune with slack: another host may use a longer window (a larger safety margin).
        await c.query('DELETE FROM yomiage_rate_grants WHERE kind = $1 AND granted_at <= $2', [kind, Math.floor(now - 2 * windowMs)]);
        const { rows } = await c.query<{ granted_at: string }>('SELECT granted_at FROM yomiage_rate_grants WHERE kind = $1 AND granted_at > $2 ORDER BY granted_at', [kind, Math.floor(now - windowMs)]);
        const decided = decide(rows.map((r) => Number(r.granted_at)), Number(block.rows[0]?.until_ms ?? 0), now, limit, windowMs);
        if (decided.ok) await c.query('INSERT INTO yomiage_rate_grants (kind, granted_at) VALUES ($1, $2)', [kind, Math.ceil(now)]);
        return decided;
      });
      this.#downSince = undefined;
      return result;
    } catch (cause) {
      this.#downSince ??= Date.now();
      if (Date.now() - this.#downSince >= this.#graceMs) throw new SharedStoreError('rate_store_unavailable', { cause });
      return { ok: false, retryInMs: this.#retryMs };
    }
  }

  block(kind: RateKind, untilMs: number): Promise<void> {
    return this.#pg
      .query('UPDATE yomiage_rate_blocks SET until_ms = GREATEST(until_ms, $2) WHERE kind = $1', [kind, Math.ceil(untilMs)])
      .then(() => {}, () => {});
  }

  /** Grants of `kind` inside the window ending at `now` (metrics: every host reads the same count). */
  async used(kind: RateKind, now: number, windowMs: number): Promise<number> {
    const { rows } = await this.#pg.query<{ n: string }>('SELECT count(*) AS n FROM yomiage_rate_grants WHERE kind = $1 AND granted_at > $2', [kind, Math.floor(now - windowMs)]);
    return Number(rows[0]?.n ?? 0);
  }
}
