import type { Db } from '../../db/database.ts';
import { RateWindowTable } from '../../db/rate-window.ts';
import { isBusy } from '../../db/write.ts';
import type { RateKind } from './limiter.ts';
import type { DemandReport, GrantDecision, WindowGrant, WindowSnapshot } from './types.ts';

export type TakeResult = { ok: true } | { ok: false; retryInMs: number };

/** A grant recorded by `take`; `id` lets it be given back unused. */
export type TakeDecision = GrantDecision & { id?: number };

/**
 * Where granted requests are counted: a sliding window per kind (each grant with the key it went
 * to) plus a "blocked until" time per kind, and, for stores shared by several processes, which
 * keys each process has waiting. `take` is atomic: it reads the window, lets `decide` choose, and
 * records the grant it names. Implementations: in memory (one process) and SQLite (every process
 * on the host).
 */
export interface WindowStore {
  /**
   * Reads the window of `kind` at `now` (grants in (now - windowMs, ...], the block, and other
   * processes' live demand after recording `demand`), and records a grant at `now` to the key
   * `decide` returns. A store across the network (PostgreSQL, several hosts) answers asynchronously.
   */
  take(
    kind: RateKind,
    now: number,
    windowMs: number,
    demand: DemandReport | undefined,
    decide: (s: WindowSnapshot) => GrantDecision,
  ): TakeDecision | Promise<TakeDecision>;
  /** Records a grant at `now` if fewer than `limit` grants lie in (now - windowMs, ...] and no block is active (unpaced, keyless). */
  tryTake(kind: RateKind, now: number, limit: number, windowMs: number): TakeResult | Promise<TakeResult>;
  /** Gives back grant `id` (taken, never used): its slot frees at once. */
  release(kind: RateKind, id: number): void | Promise<void>;
  /** The process `owner` has nothing of `kind` waiting any more. */
  withdraw(kind: RateKind, owner: string): void | Promise<void>;
  /** Grants nothing of `kind` before `untilMs` (an earlier block never shortens a later one); a network store resolves once written. */
  block(kind: RateKind, untilMs: number): void | Promise<void>;
}

/**
 * The plain decision (no pacing, no keys). Grants stamped later than `now` (another process whose
 * clock read came first but committed later) count too, which keeps every window at or below
 * `limit` whatever the commit order.
 */
export function plain(s: WindowSnapshot, now: number, limit: number, windowMs: number): GrantDecision {
  if (s.blockedUntil > now) return { ok: false, retryInMs: s.blockedUntil - now };
  if (s.grants.length < limit) return { ok: true, key: '' };
  // The slot frees when the grant at index (length - limit) leaves the window.
  const freeing = s.grants[s.grants.length - limit]!.at;
  return { ok: false, retryInMs: Math.max(1, freeing + windowMs - now) };
}

export const asTakeResult = (d: GrantDecision): TakeResult => (d.ok ? { ok: true } : d);

/** Grants counted in this process only (the "simple in-process implementation"). */
export class MemoryWindowStore implements WindowStore {
  readonly #grants: Record<RateKind, Array<WindowGrant & { id: number }>> = { standard: [], advanced: [] };
  readonly #blockedUntil: Record<RateKind, number> = { standard: 0, advanced: 0 };
  /** Per kind and key, the id of its latest grant (one entry per guild ever served). */
  readonly #lastGrant: Record<RateKind, Map<string, number>> = { standard: new Map(), advanced: new Map() };
  #nextId = 1;

  take(
    kind: RateKind,
    now: number,
    windowMs: number,
    _demand: DemandReport | undefined,
    decide: (s: WindowSnapshot) => GrantDecision,
  ): TakeDecision {
    const grants = this.#grants[kind];
    const horizon = now - windowMs;
    while (grants.length > 0 && grants[0]!.at <= horizon) grants.shift();
    const result = decide({ grants, blockedUntil: this.#blockedUntil[kind], others: [], lastGrant: this.#lastGrant[kind] });
    if (!result.ok) return result;
    // Keep ascending order even if a caller's clock steps back.
    let i = grants.length;
    while (i > 0 && grants[i - 1]!.at > now) i--;
    const id = this.#nextId++;
    grants.splice(i, 0, { at: now, key: result.key, id });
    this.#lastGrant[kind].set(result.key, id);
    return { ...result, id };
  }

  tryTake(kind: RateKind, now: number, limit: number, windowMs: number): TakeResult {
    return asTakeResult(this.take(kind, now, windowMs, undefined, (s) => plain(s, now, limit, windowMs)));
  }

  release(kind: RateKind, id: number): void {
    const grants = this.#grants[kind];
    const i = grants.findIndex((g) => g.id === id);
    if (i >= 0) grants.splice(i, 1);
  }

  withdraw(): void {}

  block(kind: RateKind, untilMs: number): void {
    this.#blockedUntil[kind] = Math.max(this.#blockedUntil[kind], untilMs);
  }
}

/** How soon to look again when another process holds the database's write lock. */
const BUSY_RETRY_MS = 3;

interface SqliteWindowStoreOptions {
  /** A database migrated to at least 009 (tables rate_grants, rate_blocks, rate_demand). */
  db: Db;
}

/**
 * Grants counted in SQLite (src/db/rate-window.ts), shared by every process that opens the same
 * file: the count, the demand and the grant are one transaction. Never waits for a lock another
 * process holds (src/db/write.ts): a taken lock answers "look again in a few ms", which the
 * limiter's loop does asynchronously.
 */
export class SqliteWindowStore implements WindowStore {
  readonly #table: RateWindowTable;

  constructor(options: SqliteWindowStoreOptions) {
    this.#table = new RateWindowTable(options.db);
  }

  take(...args: Parameters<WindowStore['take']>): TakeDecision {
    try {
      return this.#table.take(...args);
    } catch (err) {
      if (isBusy(err)) return { ok: false, retryInMs: BUSY_RETRY_MS };
      throw err;
    }
  }

  tryTake(kind: RateKind, now: number, limit: number, windowMs: number): TakeResult {
    return asTakeResult(this.take(kind, now, windowMs, undefined, (s) => plain(s, now, limit, windowMs)));
  }

  release(kind: RateKind, id: number): void {
    void this.#table.release(kind, id).catch(() => {});
  }

  withdraw(kind: RateKind, owner: string): void {
    void this.#table.withdraw(kind, owner).catch(() => {});
  }

  block(kind: RateKind, untilMs: number): void {
    void this.#table.block(kind, untilMs).catch(() => {});
  }
}
