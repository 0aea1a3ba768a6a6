/** How many events one key may have, in any window of `windowMs`. */
export interface SlidingLimit {
  max: number;
  windowMs: number;
}

/**
 * Events counted per key (a member) in a sliding window: at most `max` in any `windowMs`, for what
 * one member may cause that costs others (previews, announcements). In memory: a key whose events
 * all left the window is forgotten, and past `maxKeys` the least recently counted keys go first,
 * so a server of any size holds at most `maxKeys` x `max` timestamps.
 */
export class SlidingCounts {
  readonly #limit: SlidingLimit;
  readonly #now: () => number;
  readonly #maxKeys: number;
  /** key -> its events' times, oldest first; re-inserted on each event, so the map's order is least recent first. */
  readonly #times = new Map<string, number[]>();

  constructor(options: SlidingLimit & { now: () => number; maxKeys?: number }) {
    this.#limit = { max: options.max, windowMs: options.windowMs };
    this.#now = options.now;
    this.#maxKeys = options.maxKeys ?? 100_000;
  }

  get limit(): SlidingLimit {
    return this.#limit;
  }

  /** Records one event of `key` if the window has room: 0. Otherwise records nothing and answers the ms until it has. */
  take(key: string): number {
    const now = this.#now();
    const times = this.#live(key, now);
    if (times.length >= this.#limit.max) return Math.max(1, times[times.length - this.#limit.max]! + this.#limit.windowMs - now);
    times.push(now);
    this.#times.delete(key);
    this.#times.set(key, times);
    if (this.#times.size > this.#maxKeys) this.#sweep(now);
    return 0;
  }

  /** Events of `key` in the window now. */
  count(key: string): number {
    return this.#live(key, this.#now()).length;
  }

  /** Keys counted (for tests and metrics). */
  get size(): number {
    return this.#times.size;
  }

  #live(key: string, now: number): number[] {
    const times = this.#times.get(key) ?? [];
    let first = 0;
    while (first < times.length && times[first]! <= now - this.#limit.windowMs) first++;
    if (first > 0) times.splice(0, first);
    if (times.length === 0) this.#times.delete(key);
    return times;
  }

  /** Forgets, least recently counted first, keys whose window is empty, and any beyond `maxKeys`. */
  #sweep(now: number): void {
    for (const [key, times] of this.#times) {
      const stale = times[times.length - 1]! <= now - this.#limit.windowMs;
      if (!stale && this.#times.size <= this.#maxKeys) break;
      this.#times.delete(key);
    }
  }
}
