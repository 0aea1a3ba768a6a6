import type { Db } from '../db/database.ts';
import { RateWindowTable } from '../db/rate-window.ts';
import { isBusy } from '../db/write.ts';
import type { RateKind } from './limiter.ts';

export type TakeResult = { ok: true } | { ok: false; retryInMs: number };

/**
 * Where granted requests are counted: a sliding window per kind plus a "blocked until" time per
 * kind. `tryTake` is atomic: it either records one grant at `now` or says how long until a slot
 * frees. Implementations: in memory (one process) and SQLite (every process on the host).
 */
export interface WindowStore {
  /**
   * Records a grant at `now` if fewer than `limit` grants lie in (now - windowMs, ...] and no block
   * is active. A store across the network (PostgreSQL, several hosts) answers asynchronously.
   */
  tryTake(kind: RateKind, now: number, limit: number, windowMs: number): TakeResult | Promise<TakeResult>;
  /** Grants nothing of `kind` before `untilMs` (an earlier block never shortens a later one); a network store resolves once written. */
  block(kind: RateKind, untilMs: number): void | Promise<void>;
}

/**
 * The decision shared by both stores. `times` are the grants still inside the window, ascending;
 * grants stamped later than `now` (another process whose clock read came first but committed
 * later) count too, which keeps every window at or below `limit` whatever the commit order.
 */
export function decide(times: readonly number[], blockedUntil: number, now: number, limit: number, windowMs: number): TakeResult {
  if (blockedUntil > now) return { ok: false, retryInMs: blockedUntil - now };
  if (times.length < limit) return { ok: true };
  // The slot frees when the grant at index (length - limit) leaves the window.
  const freeing = times[times.length - limit]!;
  return { ok: false, retryInMs: Math.max(1, freeing + windowMs - now) };
}

/** Grants counted in this process only (the "simple in-process implementation"). */
export class MemoryWindowStore implements WindowStore {
  readonly #grants: Record<RateKind, number[]> = { standard: [], advanced: [] };
  readonly #blockedUntil: Record<RateKind, number> = { standard: 0, advanced: 0 };

  tryTake(kind: RateKind, now: number, limit: number, windowMs: number): TakeResult {
    const grants = this.#grants[kind];
    const horizon = now - windowMs;
    while (grants.length > 0 && grants[0]! <= horizon) grants.shift();
    const result = decide(grants, this.#blockedUntil[kind], now, limit, windowMs);
    if (result.ok) {
      // Keep ascending order even if a caller's clock steps back.
      let i = grants.length;
      while (i > 0 && grants[i - 1]! > now) i--;
      grants.splice(i, 0, now);
    }
    return result;
  }

  block(kind: RateKind, untilMs: number): void {
    this.#blockedUntil[kind] = Math.max(this.#blockedUntil[kind], untilMs);
  }
}

/** How soon to look again when another process holds the database's write lock. */
const BUSY_RETRY_MS = 3;

export interface SqliteWindowStoreOptions {
  /** A database migrated to at least 002 (tables rate_grants, rate_blocks). */
  db: Db;
}

/**
 * Grants counted in SQLite (src/db/rate-window.ts), shared by every process that opens the same
 * file: the count and the grant are one transaction. Never waits for a lock another process holds
 * (src/db/write.ts): a taken lock answers "look again in a few ms", which the limiter's loop does
 * asynchronously.
 */
export class SqliteWindowStore implements WindowStore {
  readonly #table: RateWindowTable;

  constructor(options: SqliteWindowStoreOptions) {
    this.#table = new RateWindowTable(options.db);
  }

  tryTake(kind: RateKind, now: number, limit: number, windowMs: number): TakeResult {
    try {
      return this.#table.take(kind, now, windowMs, (w) => decide(w.times, w.blockedUntil, now, limit, windowMs));
    } catch (err) {
      if (isBusy(err)) return { ok: false, retryInMs: BUSY_RETRY_MS };
      throw err;
    }
  }

  block(kind: RateKind, untilMs: number): void {
    void this.#table.block(kind, untilMs).catch(() => {});
  }
}
