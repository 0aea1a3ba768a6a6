import type { Db } from '../db/database.ts';
import { systemClock, type Clock } from '../util/clock.ts';
import { RateLimiterError } from './errors.ts';
import { RATE_LIMITS, type AcquireOptions, type RateKind, type RateLimiter } from './limiter.ts';
import { MemoryWindowStore, SqliteWindowStore, type WindowStore } from './limiter-window.ts';

export type RateLimits = Record<RateKind, { limit: number; windowMs: number }>;

export interface FairRateLimiterOptions {
  /** Where grants are counted: MemoryWindowStore (one process) or SqliteWindowStore (the host). */
  store: WindowStore;
  clock?: Clock;
  limits?: RateLimits;
  /**
   * A grant occupies its slot for windowMs + marginMs, so the time between our grant and the
   * request reaching the service cannot push N+1 requests into one of its windows.
   * Default: min(1000 ms, 5% of the window).
   */
  safety?: { marginMs?: number };
  /**
   * Longest sleep between looks at the store while waiters wait. Other processes change a shared
   * store, and a look is cheap.
   */
  recheckMs?: number;
  /** Called synchronously for every grant, in grant order (tests, benchmarks, metrics). */
  onGrant?: (kind: RateKind, key: string) => void;
}

const DEFAULTS = {
  clock: systemClock,
  limits: RATE_LIMITS,
  recheckMs: 1_000,
  onGrant: () => {},
} as const satisfies Omit<Required<FairRateLimiterOptions>, 'store' | 'safety'>;

/** The key of waiters that give none. */
const DEFAULT_KEY = '';

interface Waiter {
  key: string;
  resolve: () => void;
  reject: (reason: unknown) => void;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
}

interface Lane {
  /** Waiters by key. Map order is the round-robin order: a served key moves to the back. */
  queues: Map<string, Waiter[]>;
  pumping: boolean;
}

/**
 * The per-IP request budget shared by every guild (ARCHITECTURE: the budget is the scarcest
 * resource). Waiters are grouped by `key` (a guild id) and served round-robin across keys, FIFO
 * within a key, so a busy guild cannot starve a quiet one.
 */
export class FairRateLimiter implements RateLimiter {
  readonly #store: WindowStore;
  readonly #clock: Clock;
  readonly #limits: RateLimits;
  readonly #marginMs: Record<RateKind, number>;
  readonly #recheckMs: number;
  readonly #onGrant: (kind: RateKind, key: string) => void;
  readonly #lanes: Record<RateKind, Lane> = {
    standard: { queues: new Map(), pumping: false },
    advanced: { queues: new Map(), pumping: false },
  };

  constructor(options: FairRateLimiterOptions) {
    this.#store = options.store;
    this.#clock = options.clock ?? DEFAULTS.clock;
    this.#limits = options.limits ?? DEFAULTS.limits;
    this.#recheckMs = options.recheckMs ?? DEFAULTS.recheckMs;
    this.#onGrant = options.onGrant ?? DEFAULTS.onGrant;
    const margin = (kind: RateKind) => options.safety?.marginMs ?? Math.min(1_000, this.#limits[kind].windowMs * 0.05);
    this.#marginMs = { standard: margin('standard'), advanced: margin('advanced') };
  }

  /** Resolves when one request of `kind` may be sent for `options.key`; rejects with the signal's reason on abort. */
  acquire(kind: RateKind, options: AcquireOptions = {}): Promise<void> {
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(signal.reason);
    const key = options.key ?? DEFAULT_KEY;
    const lane = this.#lanes[kind];
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { key, resolve, reject, signal, onAbort: undefined };
      if (signal) {
        waiter.onAbort = () => {
          this.#remove(lane, waiter);
          reject(signal.reason);
        };
        signal.addEventListener('abort', waiter.onAbort, { once: true });
      }
      const queue = lane.queues.get(key);
      if (queue) queue.push(waiter);
      else lane.queues.set(key, [waiter]);
      void this.#pump(kind);
    });
  }

  /** The service said to wait (`reset_in`, `retry_after`): grant nothing of `kind` for `ms`. */
  block(kind: RateKind, ms: number): void {
    if (!Number.isFinite(ms)) throw new RateLimiterError('limiter_bad_argument', { kind, message: `block needs a finite duration, got ${ms}` });
    if (ms <= 0) return;
    this.#store.block(kind, this.#clock.now() + ms);
  }

  /** One loop per kind hands out grants while anyone waits; it sleeps while the window is full. */
  async #pump(kind: RateKind): Promise<void> {
    const lane = this.#lanes[kind];
    if (lane.pumping) return;
    lane.pumping = true;
    const { limit, windowMs } = this.#limits[kind];
    const occupiedMs = windowMs + this.#marginMs[kind];
    try {
      while (lane.queues.size > 0) {
        let result;
        try {
          result = await this.#store.tryTake(kind, this.#clock.now(), limit, occupiedMs);
        } catch (cause) {
          // Without the store we cannot know the budget; sending anyway could cost the whole IP a 429.
          this.#failAll(lane, new RateLimiterError('limiter_store_failed', { kind, message: `the rate-limit store failed for ${kind} requests`, cause }));
          return;
        }
        if (result.ok) {
          // An asynchronous store answered after the last waiter gave up: the slot goes unused
          // (never more requests than the window, at worst one fewer).
          if (lane.queues.size > 0) this.#grantNext(kind, lane);
          continue;
        }
        await this.#clock.sleep(Math.min(result.retryInMs, this.#recheckMs));
      }
    } finally {
      lane.pumping = false;
    }
  }

  #grantNext(kind: RateKind, lane: Lane): void {
    // Only called when a queue is non-empty (synchronously after checking), so first() exists.
    const [key, queue] = lane.queues.entries().next().value as [string, Waiter[]];
    const waiter = queue.shift()!;
    lane.queues.delete(key);
    if (queue.length > 0) lane.queues.set(key, queue); // to the back of the rotation
    if (waiter.signal && waiter.onAbort) waiter.signal.removeEventListener('abort', waiter.onAbort);
    waiter.resolve();
    try {
      this.#onGrant(kind, key);
    } catch {
      // An observer's bug must not stop the grants.
    }
  }

  #remove(lane: Lane, waiter: Waiter): void {
    const queue = lane.queues.get(waiter.key);
    if (!queue) return;
    const i = queue.indexOf(waiter);
    if (i >= 0) queue.splice(i, 1);
    if (queue.length === 0) lane.queues.delete(waiter.key);
  }

  #failAll(lane: Lane, error: RateLimiterError): void {
    for (const queue of lane.queues.values()) {
      for (const waiter of queue) {
        if (waiter.signal && waiter.onAbort) waiter.signal.removeEventListener('abort', waiter.onAbort);
        waiter.reject(error);
      }
    }
    lane.queues.clear();
  }
}

/** The simple in-process limiter: fair, counting this process's requests only. */
export function createMemoryLimiter(options: Omit<FairRateLimiterOptions, 'store'> = {}): FairRateLimiter {
  return new FairRateLimiter({ ...options, store: new MemoryWindowStore() });
}

/** The host-wide limiter: fair within this process, counted in SQLite across every process using `db`. */
export function createSqliteLimiter(db: Db, options: Omit<FairRateLimiterOptions, 'store'> = {}): FairRateLimiter {
  return new FairRateLimiter({ ...options, store: new SqliteWindowStore({ db }) });
}
