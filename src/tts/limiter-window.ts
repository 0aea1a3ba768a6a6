import type { Db } from '../db/database.ts';
import { isBusy, writeTx } from '../db/write.ts';
import type { RateKind } from './limiter.ts';

export type TakeResult = { ok: true } | { ok: false; retryInMs: number };

/**
 * Where granted requests are counted: a sliding window per kind plus a "blocked until" time per
 * kind. `tryTake` is atomic: it either records one grant at `now` or says how long until a slot
 * frees. Implementations: in memory (one process) and SQLite (every process on the host).
 */
export interface WindowStore {
  /** Records a grant at `now` if fewer than `limit` grants lie in (now - windowMs, ...] and no block is active. */
  tryTake(kind: RateKind, now: number, limit: number, windowMs: number): TakeResult;
  /** Grants nothing of `kind` before `untilMs` (an earlier block never shortens a later one). */
  block(kind: RateKind, untilMs: number): void;
}

/**
 * The decision shared by both stores. `times` are the grants still inside the window, ascending;
 * grants stamped later than `now` (another process whose clock read came first but committed
 * later) count too, which keeps every window at or below `limit` whatever the commit order.
 */
function decide(times: readonly number[], blockedUntil: number, now: number, limit: number, windowMs: number): TakeResult {
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
 * Grants counted in SQLite, shared by every process that opens the same file. The count and the
 * insert happen inside one BEGIN IMMEDIATE transaction, so two shards can never both take the
 * last slot of a window. Never waits for a lock another process holds (src/db/write.ts): a taken
 * lock answers "look again in a few ms", which the limiter's loop does asynchronously.
 */
export class SqliteWindowStore implements WindowStore {
  readonly #take: (kind: RateKind, now: number, limit: number, windowMs: number) => TakeResult;
  readonly #block: (kind: RateKind, untilMs: number) => void;

  constructor(options: SqliteWindowStoreOptions) {
    const { db } = options;
    const prune = db.prepare('DELETE FROM rate_grants WHERE kind = ? AND granted_at <= ?');
    const inWindow = db.prepare('SELECT granted_at FROM rate_grants WHERE kind = ? AND granted_at > ? ORDER BY granted_at').pluck();
    const blockedUntil = db.prepare('SELECT until_ms FROM rate_blocks WHERE kind = ?').pluck();
    const insert = db.prepare('INSERT INTO rate_grants (kind, granted_at) VALUES (?, ?)');
    const upsertBlock = db.prepare(
      'INSERT INTO rate_blocks (kind, until_ms) VALUES (?, ?) ON CONFLICT (kind) DO UPDATE SET until_ms = max(until_ms, excluded.until_ms)',
    );

    const take = db.transaction((kind: RateKind, now: number, limit: number, windowMs: number): TakeResult => {
      // Prune with slack: another process may use a longer window (a larger safety margin).
      prune.run(kind, now - 2 * windowMs);
      const times = inWindow.all(kind, now - windowMs) as number[];
      const until = (blockedUntil.get(kind) as number | undefined) ?? 0;
      const result = decide(times, until, now, limit, windowMs);
      // STRICT INTEGER column; rounding up keeps the grant in its window a little longer, never less.
      if (result.ok) insert.run(kind, Math.ceil(now));
      return result;
    });
    this.#take = (kind, now, limit, windowMs) => {
      try {
        return take.immediate(kind, now, limit, windowMs);
      } catch (err) {
        if (isBusy(err)) return { ok: false, retryInMs: BUSY_RETRY_MS };
        throw err;
      }
    };
    this.#block = (kind, untilMs) => {
      // The first attempt runs synchronously; only a taken lock makes it retry later.
      void writeTx(db, () => upsertBlock.run(kind, Math.ceil(untilMs))).catch(() => {});
    };
  }

  tryTake(kind: RateKind, now: number, limit: number, windowMs: number): TakeResult {
    return this.#take(kind, now, limit, windowMs);
  }

  block(kind: RateKind, untilMs: number): void {
    this.#block(kind, untilMs);
  }
}
