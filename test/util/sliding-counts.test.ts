import { describe, expect, it } from 'vitest';
import { SlidingCounts } from '../../src/util/sliding-counts.ts';
import { FakeClock } from '../support/clock.ts';

describe('SlidingCounts', () => {
  it('GIVEN max events in the window THEN the next is refused with the wait until the oldest leaves, and nothing is recorded', async () => {
    const clock = new FakeClock();
    const counts = new SlidingCounts({ max: 3, windowMs: 60_000, now: clock.now });
    expect([counts.take('a'), counts.take('a')]).toEqual([0, 0]);
    await clock.advance(10_000);
    expect(counts.take('a')).toBe(0);
    expect(counts.take('a')).toBe(50_000);
    await clock.advance(20_000);
    expect(counts.take('a')).toBe(30_000);
    expect(counts.count('a')).toBe(3);
    // Another key has a window of its own.
    expect(counts.take('b')).toBe(0);
  });

  it('GIVEN the oldest event leaves the window THEN one more is allowed (a sliding window, not a fixed period)', async () => {
    const clock = new FakeClock();
    const counts = new SlidingCounts({ max: 2, windowMs: 60_000, now: clock.now });
    counts.take('a');
    await clock.advance(30_000);
    counts.take('a');
    await clock.advance(30_000);
    expect(counts.take('a')).toBe(0);
    expect(counts.take('a')).toBe(30_000);
  });

  it('GIVEN more keys than maxKeys THEN the least recently counted are forgotten, and keys with an empty window go first', async () => {
    const clock = new FakeClock();
    const counts = new SlidingCounts({ max: 1, windowMs: 60_000, now: clock.now, maxKeys: 3 });
    counts.take('old');
    await clock.advance(60_000);
    for (const key of ['a', 'b', 'c']) counts.take(key);
    expect(counts.size).toBe(3);
    expect(counts.count('old')).toBe(0);
    counts.take('d');
    expect(counts.size).toBe(3);
    expect(counts.take('a')).toBe(0); // the least recent of the live keys was forgotten
    expect(counts.take('d')).toBeGreaterThan(0);
  });
});
