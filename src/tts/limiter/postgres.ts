import { SharedStoreError } from '../../db/errors.ts';
import { transaction, type PgPool } from '../../db/postgres.ts';
import type { RateKind } from './limiter.ts';
import type { Demand, DemandReport, GrantDecision, WindowSnapshot } from './types.ts';
import { asTakeResult, plain, type TakeDecision, type TakeResult, type WindowStore } from './window.ts';

interface PostgresWindowStoreOptions {
  pg: PgPool;
  /** While PostgreSQL does not answer, waiters wait this long before they fail (fail closed). */
  outageGraceMs?: number;
  /** How soon to look again while it does not answer. */
  retryMs?: number;
}

/**
 * The rate window of several hosts behind one egress IP (RATE_STORE_URL): the same
 * window as SQLite's (window.ts), with each grant's guild and each process's waiting guilds,
 * so hosts pace and take turns together (src/tts/limiter/pacing.ts), counted in PostgreSQL
 * (yomiage_rate_grants, yomiage_rate_demand, src/db/postgres.ts). Takers of one kind take turns on
 * the kind's row of yomiage_rate_blocks, so two hosts can never both take the last slot. Grants are
 * stamped with the hosts' clocks: keep them in step (NTP); the limiter's safety margin (1 s)
 * absorbs a smaller drift.
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

  async take(
    kind: RateKind,
    now: number,
    windowMs: number,
    demand: DemandReport | undefined,
    decide: (s: WindowSnapshot) => GrantDecision,
  ): Promise<TakeDecision> {
    try {
      const result = await transaction(this.#pg, async (c): Promise<TakeDecision> => {
        const block = await c.query<{ until_ms: string }>('SELECT until_ms FROM yomiage_rate_blocks WHERE kind = $1 FOR UPDATE', [kind]);
        // Prune with slack: another host may use a longer window (a larger safety margin).
        await c.query('DELETE FROM yomiage_rate_grants WHERE kind = $1 AND granted_at <= $2', [kind, Math.floor(now - 2 * windowMs)]);
        let others: Demand[] = [];
        if (demand) {
          await c.query('DELETE FROM yomiage_rate_demand WHERE kind = $1 AND seen_at < $2', [kind, Math.floor(demand.liveSince)]);
          if (demand.record !== false) {
            await c.query('DELETE FROM yomiage_rate_demand WHERE kind = $1 AND owner = $2', [kind, demand.owner]);
            for (const d of demand.waiting) {
              await c.query('INSERT INTO yomiage_rate_demand (kind, owner, demand_key, since, seen_at) VALUES ($1, $2, $3, $4, $5)', [
                kind,
                demand.owner,
                d.key,
                Math.round(d.since),
                Math.round(now),
              ]);
            }
          }
          const { rows } = await c.query<{ key: string; since: string }>(
            'SELECT demand_key AS key, min(since) AS since FROM yomiage_rate_demand WHERE kind = $1 AND owner <> $2 GROUP BY demand_key',
            [kind, demand.owner],
          );
          others = rows.map((r) => ({ key: r.key, since: Number(r.since) }));
        }
        const grants = await c.query<{ at: string; key: string }>(
          'SELECT granted_at AS at, grant_key AS key FROM yomiage_rate_grants WHERE kind = $1 AND granted_at > $2 ORDER BY granted_at, id',
          [kind, Math.floor(now - windowMs)],
        );
        // Rows are kept for two windows: "served least recently" looks that far back.
        const last = await c.query<{ key: string; id: string }>(
          'SELECT grant_key AS key, max(id) AS id FROM yomiage_rate_grants WHERE kind = $1 GROUP BY grant_key',
          [kind],
        );
        const decided = decide({
          grants: grants.rows.map((r) => ({ at: Number(r.at), key: r.key })),
          blockedUntil: Number(block.rows[0]?.until_ms ?? 0),
          others,
          lastGrant: new Map(last.rows.map((r) => [r.key, Number(r.id)])),
        });
        if (!decided.ok) return decided;
        const inserted = await c.query<{ id: string }>(
          'INSERT INTO yomiage_rate_grants (kind, granted_at, grant_key) VALUES ($1, $2, $3) RETURNING id',
          [kind, Math.ceil(now), decided.key],
        );
        return { ...decided, id: Number(inserted.rows[0]!.id) };
      });
      this.#downSince = undefined;
      return result;
    } catch (cause) {
      this.#downSince ??= Date.now();
      if (Date.now() - this.#downSince >= this.#graceMs) throw new SharedStoreError('rate_store_unavailable', { cause });
      return { ok: false, retryInMs: this.#retryMs };
    }
  }

  async tryTake(kind: RateKind, now: number, limit: number, windowMs: number): Promise<TakeResult> {
    return asTakeResult(await this.take(kind, now, windowMs, undefined, (s) => plain(s, now, limit, windowMs)));
  }

  release(kind: RateKind, id: number): Promise<void> {
    return this.#pg.query('DELETE FROM yomiage_rate_grants WHERE kind = $1 AND id = $2', [kind, id]).then(
      () => {},
      () => {},
    );
  }

  withdraw(kind: RateKind, owner: string): Promise<void> {
    return this.#pg.query('DELETE FROM yomiage_rate_demand WHERE kind = $1 AND owner = $2', [kind, owner]).then(
      () => {},
      () => {},
    );
  }

  block(kind: RateKind, untilMs: number): Promise<void> {
    return this.#pg
      .query('UPDATE yomiage_rate_blocks SET until_ms = GREATEST(until_ms, $2) WHERE kind = $1', [kind, Math.ceil(untilMs)])
      .then(
        () => {},
        () => {},
      );
  }

  /** Grants of `kind` inside the window ending at `now` (metrics: every host reads the same count). */
  async used(kind: RateKind, now: number, windowMs: number): Promise<number> {
    const { rows } = await this.#pg.query<{ n: string }>(
      'SELECT count(*) AS n FROM yomiage_rate_grants WHERE kind = $1 AND granted_at > $2',
      [kind, Math.floor(now - windowMs)],
    );
    return Number(rows[0]?.n ?? 0);
  }
}
