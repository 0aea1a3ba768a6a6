import type { Db } from './database.ts';
import { DbBusyError } from './errors.ts';
import { sleep } from '../util/clock.ts';

/**
 * The database policy for the thread that also drives the 20 ms audio loop.
 *
 * better-sqlite3 is synchronous: a statement that waits for another process's write lock waits
 * on this thread, and with a busy timeout every voice connection of the process stops sending
 * packets meanwhile. So the connection has `busy_timeout = 0`: a write that finds the lock taken
 * fails at once with SQLITE_BUSY, and this module retries it after an asynchronous backoff. The
 * event loop (and the audio) keeps running while a write waits; only the writer waits.
 *
 * Reads need no retry: in WAL mode a reader never waits for a writer.
 */

interface WritePolicy {
  /** Give up (DbBusyError) when the lock is still taken after this long. */
  deadlineMs: number;
  /** First backoff; doubled after each busy answer up to `maxDelayMs`, with jitter. */
  firstDelayMs: number;
  maxDelayMs: number;
}

const WRITE_POLICY = {
  // The old synchronous busy_timeout was 5 s; a write may still wait that long, but asynchronously.
  deadlineMs: 5_000,
  firstDelayMs: 1,
  maxDelayMs: 25,
} as const satisfies WritePolicy;

/** SQLITE_BUSY and its extended codes (BUSY_SNAPSHOT, BUSY_RECOVERY, BUSY_TIMEOUT). */
export function isBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

/**
 * Runs `fn` in one BEGIN IMMEDIATE transaction (the write lock is taken before anything is read,
 * so a read inside can decide a write safely across processes), retrying asynchronously while
 * another connection holds the lock. `fn` must only touch the database: it may run more than once.
 */
export async function writeTx<T>(db: Db, fn: () => T, policy: WritePolicy = WRITE_POLICY): Promise<T> {
  const tx = db.transaction(fn);
  const deadline = Date.now() + policy.deadlineMs;
  let delay = policy.firstDelayMs;
  for (let attempts = 1; ; attempts++) {
    try {
      return tx.immediate();
    } catch (err) {
      // Inside an outer transaction the lock is already ours: a busy answer there is not ours to retry.
      if (!isBusy(err) || db.inTransaction) throw err;
      if (Date.now() >= deadline) throw new DbBusyError({ attempts, cause: err });
      await sleep(delay * (0.5 + Math.random()));
      delay = Math.min(policy.maxDelayMs, delay * 2);
    }
  }
}
