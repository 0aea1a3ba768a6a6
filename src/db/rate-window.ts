import type { Db } from './database.ts';
import { Repo } from './table.ts';
import type { Endpoint } from '../billing/ledger.ts';
import type { Demand, DemandReport, GrantDecision, WindowSnapshot } from '../tts/limiter/types.ts';

// What a grant decision (src/tts/limiter/pacing.ts) reads from this table and answers: the shapes are
// the limiter's (src/tts/limiter/types.ts); this module keeps them in SQL.

const statements = (db: Db) => ({
  prune: db.prepare<[Endpoint, number]>('DELETE FROM rate_grants WHERE kind = ? AND granted_at <= ?'),
  inWindow: db.prepare<[Endpoint, number], { at: number; key: string }>(
    'SELECT granted_at AS at, grant_key AS key FROM rate_grants WHERE kind = ? AND granted_at > ? ORDER BY granted_at, id',
  ),
  blockedUntil: db.prepare<[Endpoint], number>('SELECT until_ms FROM rate_blocks WHERE kind = ?').pluck(),
  insert: db.prepare<[Endpoint, number, string]>('INSERT INTO rate_grants (kind, granted_at, grant_key) VALUES (?, ?, ?)'),
  remove: db.prepare<[Endpoint, number]>('DELETE FROM rate_grants WHERE kind = ? AND id = ?'),
  count: db.prepare<[Endpoint, number], number>('SELECT count(*) FROM rate_grants WHERE kind = ? AND granted_at > ?').pluck(),
  upsertBlock: db.prepare<[Endpoint, number]>(
    'INSERT INTO rate_blocks (kind, until_ms) VALUES (?, ?) ON CONFLICT (kind) DO UPDATE SET until_ms = max(until_ms, excluded.until_ms)',
  ),
  dropDemand: db.prepare<[Endpoint, string]>('DELETE FROM rate_demand WHERE kind = ? AND owner = ?'),
  pruneDemand: db.prepare<[Endpoint, number]>('DELETE FROM rate_demand WHERE kind = ? AND seen_at < ?'),
  addDemand: db.prepare<[Endpoint, string, string, number, number]>(
    'INSERT INTO rate_demand (kind, owner, demand_key, since, seen_at) VALUES (?, ?, ?, ?, ?)',
  ),
  lastGrant: db.prepare<[Endpoint], [string, number]>('SELECT grant_key, max(id) FROM rate_grants WHERE kind = ? GROUP BY grant_key').raw(),
  otherDemand: db.prepare<[Endpoint, string], Demand>(
    'SELECT demand_key AS key, min(since) AS since FROM rate_demand WHERE kind = ? AND owner <> ? GROUP BY demand_key',
  ),
});

/**
 * The rate_grants, rate_blocks and rate_demand tables (migrations/002, 009): every request granted
 * by any bot process on this host and the guild it went to, the service's "wait until" per kind,
 * and which guilds each process has waiting. The limiter decides (src/tts/limiter/pacing.ts); this module
 * reads and records inside one transaction, so two shards can never both take the last slot of a
 * window, and both see the same turn.
 */
export class RateWindowTable extends Repo<ReturnType<typeof statements>> {
  readonly #take;

  constructor(db: Db) {
    super(db, undefined, statements);
    this.#take = db.transaction(
      (kind: Endpoint, now: number, windowMs: number, demand: DemandReport | undefined, decide: (s: WindowSnapshot) => GrantDecision) => {
        // Prune with slack: another process may use a longer window (a larger safety margin).
        this.sql.prune.run(kind, now - 2 * windowMs);
        let others: Demand[] = [];
        if (demand) {
          this.sql.pruneDemand.run(kind, demand.liveSince);
          if (demand.record !== false) {
            this.sql.dropDemand.run(kind, demand.owner);
            for (const d of demand.waiting) this.sql.addDemand.run(kind, demand.owner, d.key, Math.round(d.since), Math.round(now));
          }
          others = this.sql.otherDemand.all(kind, demand.owner);
        }
        const result = decide({
          grants: this.sql.inWindow.all(kind, now - windowMs),
          blockedUntil: this.sql.blockedUntil.get(kind) ?? 0,
          others,
          // Rows are kept for two windows: "served least recently" looks that far back.
          lastGrant: new Map(this.sql.lastGrant.all(kind)),
        });
        // STRICT INTEGER column; rounding up keeps the grant in its window a little longer, never less.
        if (result.ok) return { ...result, id: Number(this.sql.insert.run(kind, Math.ceil(now), result.key).lastInsertRowid) };
        return result;
      },
    );
  }

  /**
   * Reads the window of `kind` at `now` (with the other processes' demand, after recording this
   * one's) and records a grant at `now` to the key `decide` names, in one BEGIN IMMEDIATE
   * transaction. Synchronous and never waits for a lock (src/db/write.ts): throws SQLITE_BUSY at
   * once while another process holds it, and the caller decides when to look again.
   */
  take(
    kind: Endpoint,
    now: number,
    windowMs: number,
    demand: DemandReport | undefined,
    decide: (s: WindowSnapshot) => GrantDecision,
  ): GrantDecision & { id?: number } {
    return this.#take.immediate(kind, now, windowMs, demand, decide) as GrantDecision & { id?: number };
  }

  /** Gives a grant back (it was never used): its slot is free again. */
  release(kind: Endpoint, id: number): Promise<void> {
    return this.write(() => void this.sql.remove.run(kind, id));
  }

  /** This process has nothing waiting of `kind` any more. */
  withdraw(kind: Endpoint, owner: string): Promise<void> {
    return this.write(() => void this.sql.dropDemand.run(kind, owner));
  }

  /** Nothing of `kind` before `untilMs` (a later block stays). The first attempt runs at once; a taken lock retries later. */
  block(kind: Endpoint, untilMs: number): Promise<void> {
    return this.write(() => void this.sql.upsertBlock.run(kind, Math.ceil(untilMs)));
  }

  /** Grants of `kind` inside the window ending at `now`: what every process of the host shares (a read: never waits). */
  used(kind: Endpoint, now: number, windowMs: number): number {
    return this.sql.count.get(kind, now - windowMs) ?? 0;
  }
}
