import { afterEach, describe, expect, it } from 'vitest';
import { storeFactories, type StoreFixture } from './window-stores.ts';
import { FakeClock } from '../support/clock.ts';
import { FairRateLimiter } from '../../src/tts/limiter/fair.ts';

// One look at the shared window for /diagnose: requests granted, the limit, and when the next is
// free, read as a grant decision reads the window, and granting nothing itself.
const LIMITS = { standard: { limit: 3, windowMs: 10_000 }, advanced: { limit: 2, windowMs: 10_000 } };

describe.each(storeFactories)('FairRateLimiter.look over $name', ({ make }) => {
  let fixture: StoreFixture | undefined;
  afterEach(() => fixture?.close());

  it("GIVEN grants in the window THEN how many, and the next free when a slot frees or the service's wait ends; a look takes no slot", async () => {
    fixture = make();
    const clock = new FakeClock();
    const limiter = new FairRateLimiter({ store: fixture.store, clock, limits: LIMITS, safety: { marginMs: 500 }, pacing: false });
    const start = clock.now();
    expect(await limiter.look('standard')).toEqual({ used: 0, limit: 3, nextFreeAt: start });
    await limiter.acquire('standard');
    await clock.advance(1_000);
    await limiter.acquire('standard');
    expect(await limiter.look('standard')).toEqual({ used: 2, limit: 3, nextFreeAt: start + 1_000 });
    await limiter.acquire('standard');
    // Full: the oldest grant's slot frees after the window and the margin.
    expect(await limiter.look('standard')).toEqual({ used: 3, limit: 3, nextFreeAt: start + 10_500 });
    expect(await limiter.look('standard')).toEqual({ used: 3, limit: 3, nextFreeAt: start + 10_500 });
    expect(await limiter.look('advanced')).toEqual({ used: 0, limit: 2, nextFreeAt: start + 1_000 });
    limiter.block('advanced', 30_000);
    await Promise.resolve();
    expect((await limiter.look('advanced'))!.nextFreeAt).toBe(start + 31_000);
  });
});
