import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { storeFactories, type StoreFixture } from './window-stores.ts';
import { FakeClock, settle } from '../support/clock.ts';
import { RateLimiterError } from '../../src/tts/errors.ts';
import { FairRateLimiter } from '../../src/tts/limiter/fair.ts';
import type { RateKind } from '../../src/tts/limiter/limiter.ts';
import type { WindowStore } from '../../src/tts/limiter/window.ts';

const LIMITS = { standard: { limit: 5, windowMs: 10_000 }, advanced: { limit: 2, windowMs: 10_000 } };

describe.each(storeFactories)('FairRateLimiter over $name', ({ make }) => {
  let fixture: StoreFixture;
  let clock: FakeClock;
  let grants: { kind: RateKind; key: string; at: number }[];
  let limiter: FairRateLimiter;

  beforeEach(() => {
    fixture = make();
    clock = new FakeClock();
    grants = [];
    limiter = new FairRateLimiter({
      store: fixture.store,
      clock,
      limits: LIMITS,
      safety: { marginMs: 0 },
      // These cases are about the window and the order; pacing has its own below.
      pacing: false,
      onGrant: (kind, key) => grants.push({ kind, key, at: clock.now() }),
    });
  });
  afterEach(() => fixture.close());

  /** Uses up the current standard window so later waiters must queue. */
  async function fillWindow(): Promise<void> {
    for (let i = 0; i < LIMITS.standard.limit; i++) await limiter.acquire('standard', { key: 'filler' });
    grants.length = 0;
  }

  it('grants at once while the window has room, then holds the next until the oldest slot frees', async () => {
    await fillWindow();
    let granted = false;
    const next = limiter.acquire('standard', { key: 'g1' }).then(() => (granted = true));
    await clock.advance(9_999);
    expect(granted).toBe(false);
    await clock.advance(1);
    await next;
    expect(grants).toEqual([{ kind: 'standard', key: 'g1', at: 1_010_000 }]);
  });

  it("a busy guild cannot starve a quiet one: B's 5 grants all come within the first 10", async () => {
    await fillWindow();
    const pending: Promise<void>[] = [];
    for (let i = 0; i < 100; i++) pending.push(limiter.acquire('standard', { key: 'A' }));
    for (let i = 0; i < 5; i++) pending.push(limiter.acquire('standard', { key: 'B' }));
    expect(grants).toEqual([]); // all 105 wait for the next window
    while (grants.length < 10) await clock.advance(LIMITS.standard.windowMs);
    const firstTen = grants.slice(0, 10).map((g) => g.key);
    expect(firstTen.filter((k) => k === 'B')).toHaveLength(5);
    expect(firstTen).toEqual(['A', 'B', 'A', 'B', 'A', 'B', 'A', 'B', 'A', 'B']);
    // Never more than the limit inside one window.
    for (const g of grants)
      expect(grants.filter((h) => h.at > g.at - LIMITS.standard.windowMs && h.at <= g.at).length).toBeLessThanOrEqual(5);
  });

  it('waiters that say what a grant buys them: the freshest speech is served first, asked again at each grant', async () => {
    await fillWindow();
    // Keys in the opposite alphabetical order: the turns alone would serve a-stale first.
    const worth = { 'a-stale': 0, 'b-some': 2, 'c-most': 4 };
    const pending = (['a-stale', 'b-some', 'c-most'] as const).map((key) => limiter.acquire('standard', { key, worth: () => worth[key] }));
    await clock.advance(LIMITS.standard.windowMs);
    await Promise.all(pending);
    // One whose speech went stale meanwhile would have gone last: worth is read when grants are decided.
    expect(grants.map((g) => g.key)).toEqual(['c-most', 'b-some', 'a-stale']);
  });

  it('serves one key first-in first-out', async () => {
    await fillWindow();
    const order: number[] = [];
    const all = [0, 1, 2, 3].map((i) => limiter.acquire('standard', { key: 'A' }).then(() => order.push(i)));
    await clock.advance(LIMITS.standard.windowMs);
    await Promise.all(all);
    expect(order).toEqual([0, 1, 2, 3]);
  });

  it('an aborted waiter leaves the queue and does not use a slot', async () => {
    await fillWindow();
    const controller = new AbortController();
    const first = limiter.acquire('standard', { key: 'A' });
    const aborted = limiter.acquire('standard', { key: 'B', signal: controller.signal });
    const third = limiter.acquire('standard', { key: 'C' });
    controller.abort(new Error('user left the voice channel'));
    await expect(aborted).rejects.toThrow('user left the voice channel');
    await clock.advance(LIMITS.standard.windowMs);
    await Promise.all([first, third]);
    expect(grants.map((g) => g.key)).toEqual(['A', 'C']);
    // Three slots are still free in this window: B's abort gave its turn back.
    for (let i = 0; i < 3; i++) await limiter.acquire('standard', { key: 'D' });
    expect(grants).toHaveLength(5);
  });

  it('rejects at once when the signal is already aborted', async () => {
    const controller = new AbortController();
    controller.abort(new Error('gone'));
    await expect(limiter.acquire('standard', { signal: controller.signal })).rejects.toThrow('gone');
    expect(grants).toHaveLength(0);
  });

  it('block() delays the next grant by the given time, for that kind only', async () => {
    const start = clock.now();
    limiter.block('advanced', 7_000);
    let granted = false;
    const waiting = limiter.acquire('advanced', { key: 'A' }).then(() => (granted = true));
    await limiter.acquire('standard', { key: 'A' });
    await clock.advance(6_999);
    expect(granted).toBe(false);
    await clock.advance(1);
    await waiting;
    expect(grants.map((g) => [g.kind, g.at - start])).toEqual([
      ['standard', 0],
      ['advanced', 7_000],
    ]);
  });

  it('counts a safety margin so a grant holds its slot a little longer than the window', async () => {
    const margined = new FairRateLimiter({
      store: fixture.store,
      clock,
      limits: LIMITS,
      safety: { marginMs: 500 },
      pacing: false,
      onGrant: (kind, key) => grants.push({ kind, key, at: clock.now() }),
    });
    await margined.acquire('advanced');
    await margined.acquire('advanced');
    let granted = false;
    const third = margined.acquire('advanced').then(() => (granted = true));
    await clock.advance(10_000);
    expect(granted).toBe(false);
    await clock.advance(500);
    await third;
    expect(grants.at(-1)!.at - grants[0]!.at).toBe(10_500);
  });
});

describe('FairRateLimiter store failure', () => {
  it('rejects waiters with a coded error instead of sending without a budget', async () => {
    const fail = () => {
      throw new Error('SQLITE_BUSY: database is locked');
    };
    const broken: WindowStore = { take: fail, tryTake: fail, release: () => {}, withdraw: () => {}, block: () => {} };
    const limiter = new FairRateLimiter({ store: broken, clock: new FakeClock() });
    // Every waiter is told, none is left hanging: the one behind in another guild too.
    const errors = await Promise.all(['A', 'B'].map((key) => limiter.acquire('standard', { key }).catch((e: unknown) => e)));
    for (const error of errors) {
      expect(error).toBeInstanceOf(RateLimiterError);
      expect(error).toMatchObject({ code: 'limiter_store_failed', kind: 'standard' });
    }
    await settle(1);
  });
});
