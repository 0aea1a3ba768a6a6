/**
 * A sliding-window log per key: "N per window" as the spec's Limits table states it. Used both
 * for the enforced per-IP rate limits and for the planned limits that are only observed.
 */
export class SlidingWindow {
  readonly limit: number;
  readonly windowMs: number;
  readonly #events = new Map<string, number[]>();
  #max = 0;

  constructor(limit: number, windowMs: number) {
    this.limit = limit;
    this.windowMs = windowMs;
  }

  #live(key: string, now: number): number[] {
    const events = this.#events.get(key);
    if (!events) return [];
    const cutoff = now - this.windowMs;
    let drop = 0;
    while (drop < events.length && events[drop]! <= cutoff) drop++;
    if (drop > 0) events.splice(0, drop);
    if (events.length === 0) this.#events.delete(key);
    return events;
  }

  /**
   * Counts one event for `key` if fewer than `limit` are in the window. Refused events are not
   * counted, so `retryInMs` is exactly when the oldest event leaves the window.
   */
  take(key: string, now: number): { ok: true } | { ok: false; retryInMs: number } {
    const events = this.#live(key, now);
    if (events.length >= this.limit) {
      return { ok: false, retryInMs: Math.max(0, events[0]! + this.windowMs - now) };
    }
    this.record(key, now);
    return { ok: true };
  }

  /** Counts one event for `key` without enforcing the limit; returns the count in the window. */
  record(key: string, now: number): number {
    const events = this.#live(key, now);
    if (events.length === 0) this.#events.set(key, events);
    events.push(now);
    this.#max = Math.max(this.#max, events.length);
    return events.length;
  }

  /** The largest count any key has in the window now. */
  current(now: number): number {
    let most = 0;
    for (const key of [...this.#events.keys()]) most = Math.max(most, this.#live(key, now).length);
    return most;
  }

  /** The busiest key's count in the window now, and how long until it may take another event. */
  state(now: number): { limit: number; windowMs: number; current: number; retryInMs: number } {
    let current = 0;
    let retryInMs = 0;
    for (const key of [...this.#events.keys()]) {
      const events = this.#live(key, now);
      if (events.length < current) continue;
      current = events.length;
      retryInMs = events.length >= this.limit ? Math.max(0, events[0]! + this.windowMs - now) : 0;
    }
    return { limit: this.limit, windowMs: this.windowMs, current, retryInMs };
  }

  /** The largest count any key ever had in one window. */
  get max(): number {
    return this.#max;
  }

  clear(): void {
    this.#events.clear();
    this.#max = 0;
  }
}
