import { randomBytes } from 'node:crypto';
import type { Db } from '../../db/database.ts';
import { systemClock, type Clock } from '../../util/clock.ts';
import { RateLimiterError } from '../errors.ts';
import { RATE_LIMITS, type AcquireOptions, type GrantingLimiter, type RateGrant, type RateKind } from './limiter.ts';
import { MemoryWindowStore, plain, SqliteWindowStore, type WindowStore } from './window.ts';
import { decideGrant, defaultBurst, defaultSpare, hasSpare, type PaceRules } from './pacing.ts';
import type { Demand, WindowSnapshot } from './types.ts';

export type RateLimits = Record<RateKind, { limit: number; windowMs: number }>;

/** One look at a rate window (`FairRateLimiter.look`). */
export interface WindowLook {
  /** Requests granted within the window. */
  used: number;
  limit: number;
  /** When the next request may be granted (clock time; now when one is free). */
  nextFreeAt: number;
}

interface FairRateLimiterOptions {
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
   * Pacing under pressure (src/tts/limiter/pacing.ts): below `burst` grants in the window
   * (default half the limit) grants go out at once, beyond it the free slots are spread out; below
   * `spare` (default a sixth) `tryReserve` hands out a grant more than needed. `false` grants as
   * fast as the window allows.
   */
  pacing?: { burst?: number; spare?: number } | false;
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
} as const satisfies Omit<Required<FairRateLimiterOptions>, 'store' | 'safety' | 'pacing'>;

/** The key of waiters that give none. */
const DEFAULT_KEY = '';

interface Waiter {
  key: string;
  since: number;
  worth: (() => number) | undefined;
  resolve: (grant: RateGrant) => void;
  reject: (reason: unknown) => void;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
}

interface Lane {
  /** Waiters by key, FIFO within a key. */
  queues: Map<string, Waiter[]>;
  pumping: boolean;
}

/**
 * The per-IP request budget shared by every guild (ARCHITECTURE: the budget is the scarcest
 * resource). Waiters are grouped by `key` (the scheduler's audience: a voice session or a text
 * channel; a guild id for requests made outside it): where a grant buys the most (when the waiters
 * say, `worth`: fresh speech weighed against what the key had read lately), else the key served
 * least recently, then the one waiting longest, FIFO within a key, so a busy audience cannot starve
 * a quiet one (two voice channels of one server as much as two servers) and one arriving late is
 * served before those already served. Under
 * pressure grants are paced so late arrivals still find a slot. With a shared store the order and
 * the pacing are decided across every process on the host (src/tts/limiter/pacing.ts).
 */
export class FairRateLimiter implements GrantingLimiter {
  readonly #store: WindowStore;
  readonly #clock: Clock;
  readonly #limits: RateLimits;
  readonly #rules: Record<RateKind, PaceRules>;
  readonly #recheckMs: number;
  readonly #onGrant: (kind: RateKind, key: string) => void;
  /** This limiter's name in a shared store's demand table. */
  readonly #owner = `${process.pid}-${randomBytes(6).toString('hex')}`;
  /** What the last look at the window saw: how many grants were in it, and when. */
  readonly #seen: Record<RateKind, { used: number; at: number }> = { standard: { used: 0, at: 0 }, advanced: { used: 0, at: 0 } };
  /** This process's own grants inside the window (a lower bound when nobody waits and the store is not read). */
  readonly #recent: Record<RateKind, number[]> = { standard: [], advanced: [] };
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
    const rules = (kind: RateKind): PaceRules => {
      const { limit, windowMs } = this.#limits[kind];
      const marginMs = options.safety?.marginMs ?? Math.min(1_000, windowMs * 0.05);
      const burst = options.pacing === false ? limit : Math.min(limit, options.pacing?.burst ?? defaultBurst(limit));
      const spare = Math.min(burst, options.pacing === false ? limit : (options.pacing?.spare ?? defaultSpare(limit)));
      return { limit, occupiedMs: windowMs + marginMs, burst, spare };
    };
    this.#rules = { standard: rules('standard'), advanced: rules('advanced') };
  }

  /** Resolves when one request of `kind` may be sent for `options.key` (at once with an unspent `grant`); rejects with the signal's reason on abort. */
  async acquire(kind: RateKind, options: AcquireOptions = {}): Promise<void> {
    if (options.signal?.aborted) throw options.signal.reason;
    if (options.grant?.kind === kind && options.grant.use()) return;
    const grant = await this.reserve(kind, options);
    grant.use();
  }

  reserve(kind: RateKind, options: Omit<AcquireOptions, 'grant'> = {}): Promise<RateGrant> {
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(signal.reason);
    const key = options.key ?? DEFAULT_KEY;
    const lane = this.#lanes[kind];
    return new Promise<RateGrant>((resolve, reject) => {
      const waiter: Waiter = { key, since: this.#clock.now(), worth: options.worth, resolve, reject, signal, onAbort: undefined };
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

  async tryReserve(kind: RateKind, options: Pick<AcquireOptions, 'key'> = {}): Promise<RateGrant | null> {
    // Whoever waits goes first; an extra grant is only for a moment nobody else wants one.
    if (this.#lanes[kind].queues.size > 0) return null;
    const key = options.key ?? DEFAULT_KEY;
    try {
      const result = await this.#take(kind, [{ key, since: this.#clock.now() }], false, true);
      if (!result.ok) return null;
      return this.#granted(kind, key, result.id);
    } catch {
      return null;
    }
  }

  pressured(kind: RateKind): boolean {
    if (this.#lanes[kind].queues.size > 0) return true;
    const now = this.#clock.now();
    const recent = this.#inWindow(kind, now);
    const seen = this.#seen[kind];
    const used = Math.max(recent.length, now - seen.at < this.#recheckMs ? seen.used : 0);
    // Scarce means a grant would wait for a slot to free, not merely that pacing has begun: while
    // grants are only paced, the wait for the paced grant is itself the time a run gathers company
    // (the batch forms at the grant), and holding a lone line longer only makes it late.
    return used >= this.#rules[kind].limit;
  }

  /**
   * The window of `kind` now, as a grant decision reads it (one look that grants nothing): requests
   * granted within it (every process sharing the store), the limit, and when the next is free
   * (now, once a slot frees, or once the service's wait ends). Undefined when the store is busy.
   */
  async look(kind: RateKind): Promise<WindowLook | undefined> {
    const now = this.#clock.now();
    const rules = this.#rules[kind];
    let seen = undefined as WindowSnapshot | undefined;
    await this.#store.take(kind, now, rules.occupiedMs, undefined, (s) => {
      seen = s;
      return { ok: false, retryInMs: 0 };
    });
    if (!seen) return undefined;
    const next = plain(seen, now, rules.limit, rules.occupiedMs);
    return { used: seen.grants.length, limit: rules.limit, nextFreeAt: next.ok ? now : now + next.retryInMs };
  }

  /** The service said to wait (`reset_in`, `retry_after`): grant nothing of `kind` for `ms`. */
  block(kind: RateKind, ms: number): void {
    if (!Number.isFinite(ms))
      throw new RateLimiterError('limiter_bad_argument', { kind, message: `block needs a finite duration, got ${ms}` });
    if (ms <= 0) return;
    // The shared store's write never rejects (a lost block only means a later 429 says it again).
    void this.#store.block(kind, this.#clock.now() + ms);
  }

  /** One look at the window: pacing and whose turn it is, across every process sharing the store. */
  #take(kind: RateKind, mine: Demand[], record = true, spareOnly = false) {
    const now = this.#clock.now();
    const rules = this.#rules[kind];
    // Another process's guild has the turn: look again soon, so a slot is not left idle for long.
    const turnMs = Math.max(1, Math.round(this.#recheckMs / 4));
    const demand = { owner: this.#owner, waiting: mine, liveSince: now - 3 * this.#recheckMs, record };
    return this.#store.take(kind, now, rules.occupiedMs, demand, (s) => {
      this.#seen[kind] = { used: s.grants.length, at: now };
      if (spareOnly && (!hasSpare(s, now, rules) || s.others.length > 0)) return { ok: false, retryInMs: turnMs };
      return decideGrant(s, mine, now, rules, turnMs);
    });
  }

  /** One loop per kind hands out grants while anyone waits; it sleeps while the window is full or paced. */
  async #pump(kind: RateKind): Promise<void> {
    const lane = this.#lanes[kind];
    if (lane.pumping) return;
    lane.pumping = true;
    try {
      while (lane.queues.size > 0) {
        const mine: Demand[] = [...lane.queues].map(([key, queue]) => demandOf(key, queue));
        let result;
        try {
          result = await this.#take(kind, mine);
        } catch (cause) {
          // Without the store we cannot know the budget; sending anyway could cost the whole IP a 429.
          this.#failAll(
            lane,
            new RateLimiterError('limiter_store_failed', { kind, message: `the rate-limit store failed for ${kind} requests`, cause }),
          );
          return;
        }
        if (result.ok) {
          this.#grantTo(kind, lane, result.key, result.id);
          continue;
        }
        await this.#clock.sleep(Math.min(result.retryInMs, this.#recheckMs));
      }
      quietly(this.#store.withdraw(kind, this.#owner));
    } finally {
      lane.pumping = false;
    }
  }

  #grantTo(kind: RateKind, lane: Lane, key: string, id: number | undefined): void {
    const queue = lane.queues.get(key);
    if (!queue) {
      // An asynchronous store answered after that key's last waiter gave up: the slot goes back.
      if (id !== undefined) quietly(this.#store.release(kind, id));
      return;
    }
    const waiter = queue.shift()!;
    if (queue.length === 0) lane.queues.delete(key);
    if (waiter.signal && waiter.onAbort) waiter.signal.removeEventListener('abort', waiter.onAbort);
    waiter.resolve(this.#granted(kind, key, id));
  }

  #granted(kind: RateKind, key: string, id: number | undefined): RateGrant {
    let state: 'held' | 'used' | 'released' = 'held';
    const store = this.#store;
    const at = this.#clock.now();
    // Kept to the window here too: the advanced lane's is never asked whether it is pressured.
    const recent = this.#inWindow(kind, at);
    recent.push(at);
    try {
      this.#onGrant(kind, key);
    } catch {
      // An observer's bug must not stop the grants.
    }
    return {
      kind,
      use: () => {
        if (state !== 'held') return false;
        state = 'used';
        return true;
      },
      release: () => {
        if (state !== 'held') return;
        state = 'released';
        if (id !== undefined) quietly(store.release(kind, id));
        const i = recent.indexOf(at);
        if (i >= 0) recent.splice(i, 1);
      },
    };
  }

  /** This process's grants of `kind` still inside the window at `now` (older ones forgotten). */
  #inWindow(kind: RateKind, now: number): number[] {
    const recent = this.#recent[kind];
    const since = now - this.#rules[kind].occupiedMs;
    while (recent.length > 0 && recent[0]! <= since) recent.shift();
    return recent;
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

/** A key's demand: since when its oldest waiter waits, and what a grant buys it now (when its first waiter says). */
function demandOf(key: string, queue: readonly Waiter[]): Demand {
  const first = queue[0]!;
  const worth = first.worth?.();
  return worth === undefined || !Number.isFinite(worth)
    ? { key, since: first.since }
    : { key, since: first.since, worth: Math.max(0, worth) };
}

/** The simple in-process limiter: fair, counting this process's requests only. */
export function createMemoryLimiter(options: Omit<FairRateLimiterOptions, 'store'> = {}): FairRateLimiter {
  return new FairRateLimiter({ ...options, store: new MemoryWindowStore() });
}

/** The host-wide limiter: fair and paced across every process using `db`, counted in SQLite. */
export function createSqliteLimiter(db: Db, options: Omit<FairRateLimiterOptions, 'store'> = {}): FairRateLimiter {
  return new FairRateLimiter({ ...options, store: new SqliteWindowStore({ db }) });
}

/** A store's fire-and-forget write (a give-back, a withdrawal): its failure only delays a slot. */
function quietly(result: void | Promise<void>): void {
  if (result) result.catch(() => {});
}
