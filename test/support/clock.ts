/**
 * The suite's one fake clock, and how the suite waits. Waiting for something that happens later is
 * `vi.waitFor` (until an assertion passes) or `vi.waitUntil` (until a value is truthy), never a
 * fixed sleep: with `SOON` for work inside the test process, with an explicit `timeout` for real
 * I/O (loopback servers, ffmpeg, child processes). A check that something did NOT happen waits for
 * a later event that proves it (a later message handled, the queue idle), not for time to pass.
 *
 * ```ts
 * const clock = new FakeClock();                      // time moves only when the test moves it
 * const scheduler = new SpeechScheduler({ clock, ... });
 * await clock.advance(1_000);                         // due sleeps fire in time order, callers run
 *
 * const clock = new FakeClock({ autoAdvance: true }); // every sleep moves time on by itself
 * await client.speak(req, { clock });
 * expect(clock.sleeps).toEqual([1_000, 2_000]);       // the waits asked for, exactly
 * ```
 * A loopback server that must keep real time (the emulator under a whole bot) takes a
 * `StoppableClock` instead: real time, stopped while the test arranges a race it must not lose.
 */
import type { Clock } from '../../src/util/clock.ts';

/** `vi.waitUntil(cond, SOON)`: for in-process work, checked every millisecond, for up to 5 s. */
export const SOON = { timeout: 5_000, interval: 1 } as const;

/** Lets pending promise callbacks and zero-length timers run: `rounds` turns of the event loop. */
export async function settle(rounds = 5): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise((resolve) => setImmediate(resolve));
}

interface Sleeper {
  at: number;
  resolve: () => void;
}

export interface FakeClockOptions {
  /** What `now()` reads first (milliseconds since the epoch). */
  start?: number;
  /**
   * Each `sleep(ms)` moves time on by `ms` itself and resolves on the next turn of the event loop:
   * retry and poll loops run through at once while `sleeps` records every wait they asked for.
   */
  autoAdvance?: boolean;
}

/** A Clock (src/util/clock.ts) whose time moves only when a test (or, with `autoAdvance`, a sleep) moves it. */
export class FakeClock implements Clock {
  /** Every `ms` passed to `sleep()`, in order. */
  readonly sleeps: number[] = [];
  readonly #auto: boolean;
  #now: number;
  #sleepers: Sleeper[] = [];

  constructor(options: FakeClockOptions = {}) {
    this.#now = options.start ?? 1_000_000;
    this.#auto = options.autoAdvance ?? false;
  }

  // Arrow fields, so `clock.now` and `clock.sleep` can be handed over on their own.
  now = (): number => this.#now;

  sleep = (ms: number, signal?: AbortSignal): Promise<void> => {
    if (signal?.aborted) return Promise.reject(signal.reason);
    this.sleeps.push(ms);
    return new Promise((resolve, reject) => {
      let sleeper: Sleeper | undefined;
      const onAbort = () => {
        this.#sleepers = this.#sleepers.filter((s) => s !== sleeper);
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const done = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      if (this.#auto) {
        this.#now += Math.max(0, ms);
        setImmediate(done);
      } else {
        sleeper = { at: this.#now + Math.max(0, ms), resolve: done };
        this.#sleepers.push(sleeper);
      }
    });
  };

  /**
   * Moves time forward by `ms`. Due sleeps fire one at a time in time order, `now()` reading each
   * one's due time, and the code they wake runs before the next fires (a sleep it starts that falls
   * due within `ms` fires too). Await it: time has moved once it resolves.
   */
  async advance(ms: number): Promise<void> {
    const target = this.#now + ms;
    await settle(1);
    for (;;) {
      const due = this.#sleepers.filter((s) => s.at <= target).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      this.#sleepers = this.#sleepers.filter((s) => s !== due);
      this.#now = Math.max(this.#now, due.at);
      due.resolve();
      await settle(1);
    }
    this.#now = target;
    await settle(1);
  }

  /** Sets the time outright, backwards too (for date arithmetic; nothing may be sleeping). */
  set(time: number): void {
    if (this.#sleepers.length > 0) throw new Error('FakeClock.set with sleeps pending: use advance()');
    this.#now = time;
  }
}

/**
 * Real time that a test can stop and start again: the `now` of a loopback server (the emulator)
 * whose own timings must not run out while the test arranges something that takes an unknown time
 * on a loaded machine (a job that must still be running when a /clear or a restart lands).
 * Stopped, `now()` stands still (`stop(at)` moves it there first, forwards only); started again,
 * it runs on from where it stood.
 */
export class StoppableClock {
  #offset = 0;
  #stoppedAt: number | undefined;

  now = (): number => this.#stoppedAt ?? Date.now() + this.#offset;

  stop(at = this.now()): void {
    if (at < this.now()) throw new Error('StoppableClock.stop: time only moves forwards');
    this.#stoppedAt = at;
  }

  start(): void {
    if (this.#stoppedAt === undefined) return;
    this.#offset = this.#stoppedAt - Date.now();
    this.#stoppedAt = undefined;
  }
}
