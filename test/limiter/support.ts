import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, type Db } from '../../src/db/database.ts';
import type { Clock } from '../../src/util/clock.ts';
import { MemoryWindowStore, SqliteWindowStore, type WindowStore } from '../../src/tts/limiter-window.ts';

/** Lets pending promise callbacks and timers of zero length run. */
export const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

interface Timer {
  at: number;
  resolve: () => void;
}

/** A clock that moves only when the test says so, so waits are asserted without real time. */
export class ManualClock implements Clock {
  #now: number;
  #timers: Timer[] = [];

  constructor(start = 1_000_000) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const timer: Timer = { at: this.#now + Math.max(0, ms), resolve };
      this.#timers.push(timer);
      signal?.addEventListener(
        'abort',
        () => {
          this.#timers = this.#timers.filter((t) => t !== timer);
          reject(signal.reason);
        },
        { once: true },
      );
    });
  }

  /** Moves time forward by `ms`, firing due sleeps in time order and letting their callers run. */
  async advance(ms: number): Promise<void> {
    const target = this.#now + ms;
    await flush();
    for (;;) {
      const due = this.#timers.filter((t) => t.at <= target).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      this.#timers = this.#timers.filter((t) => t !== due);
      this.#now = Math.max(this.#now, due.at);
      due.resolve();
      await flush();
    }
    this.#now = target;
    await flush();
  }
}

export interface StoreFixture {
  store: WindowStore;
  close(): void;
}

/** Every WindowStore implementation, for contract suites (STYLE.md #12). */
export const storeFactories: { name: string; make: () => StoreFixture }[] = [
  { name: 'MemoryWindowStore', make: () => ({ store: new MemoryWindowStore(), close: () => {} }) },
  {
    name: 'SqliteWindowStore',
    make: () => {
      const { db, close } = tempDb();
      return { store: new SqliteWindowStore({ db }), close };
    },
  },
];

/** A migrated SQLite file in a fresh temp dir. */
export function tempDb(): { db: Db; dir: string; file: string; close(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'limiter-'));
  const file = join(dir, 'bot.sqlite');
  const db = openDatabase(file);
  return {
    db,
    dir,
    file,
    close: () => {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
