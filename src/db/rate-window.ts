import type { Db } from './database.ts';
import { Repo } from './repo.ts';
import type { Endpoint } from './rows.ts';

/** What a grant decision reads: the grants still inside the window (ascending) and the block. */
export interface WindowSnapshot {
  times: number[];
  /** Nothing may be granted before this time (0 when never blocked). */
  blockedUntil: number;
}

const statements = (db: Db) => ({
  prune: db.prepare<[Endpoint, number]>('DELETE FROM rate_grants WHERE kind = ? AND granted_at <= ?'),
  inWindow: db.prepare<[Endpoint, number], number>('SELECT granted_at FROM rate_grants WHERE kind = ? AND granted_at > ? ORDER BY granted_at').pluck(),
  blockedUntil: db.prepare<[Endpoint], number>('SELECT until_ms FROM rate_blocks WHERE kind = ?').pluck(),
  count: db.prepare<[Endpoint, number], number>('SELECT count(*) FROM rate_grants WHERE kind = ? AND granted_at > ?').pluck(),
  insert: db.prepare<[Endpoint, number]>('INSERT INTO rate_grants (kind, granted_at) VALUES (?, ?)'),
  upsertBlock: db.prepare<[Endpoint, number]>(
    'INSERT INTO rate_blocks (kind, until_ms) VALUES (?, ?) ON CONFLICT (kind) DO UPDATE SET until_ms = max(until_ms, excluded.until_ms)',
  ),
});

/**
 * The rate_grants and rate_blocks tables (migrations/002): every request granted by any bot
 * process on this host, and the service's "wait until" per kind. The limiter decides
 * (src/tts/limiter-window.ts); this module reads and records inside one transaction, so two
 * shards can never both take the last slot of a window.
 */
export class RateWindowTable extends Repo<ReturnType<typeof statements>> {
  readonly #take;

  constructor(db: Db) {
    super(db, undefined, statements);
    this.#take = db.transaction(<T extends { ok: boolean }>(kind: Endpoint, now: number, windowMs: number, decide: (s: WindowSnapshot) => T): T => {
      // Prune with slack: another process may use a longer window (a larger safety margin).
      this.sql.prune.run(kind, now - 2 * windowMs);
      const result = decide({ times: this.sql.inWindow.all(kind, now - windowMs), blockedUntil: this.sql.blockedUntil.get(kind) ?? 0 });
      // STRICT INTEGER column; rounding up keeps the grant in its window a little longer, never less.
      if (result.ok) this.sql.insert.run(kind, Math.ceil(now));
      return result;
    });
  }

  /**
   * Reads the window of `kind` at `now` and records a grant at `now` when `decide` says ok, in one
   * BEGIN IMMEDIATE transaction. Synchronous and never waits for a lock (src/db/write.ts): throws
   * SQLITE_BUSY at once while another process holds it, and the caller decides when to look again.
   */
  take<T extends { ok: boolean }>(kind: Endpoint, now: number, windowMs: number, decide: (s: WindowSnapshot) => T): T {
    return this.#take.immediate(kind, now, windowMs, decide) as T;
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
