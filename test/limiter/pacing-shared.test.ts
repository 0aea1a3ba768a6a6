import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../../src/db/database.ts';
import { FairRateLimiter } from '../../src/tts/limiter/fair.ts';
import { SqliteWindowStore } from '../../src/tts/limiter/window.ts';
import { FakeClock } from '../support/clock.ts';
import { tempDb } from '../support/temp-db.ts';

// Processes sharing the SQLite rate window take turns together. Two limiters on two
// connections to one file stand for two shard processes on one host (same wall clock).

const LIMITS = { standard: { limit: 2, windowMs: 10_000 }, advanced: { limit: 2, windowMs: 10_000 } };

describe('FairRateLimiter over a shared SQLite window (two processes)', () => {
  const cleanups: Array<() => void> = [];
  afterEach(() => {
    for (const c of cleanups.splice(0)) c();
  });

  function twoProcesses(pacing: false | undefined) {
    const fixture = tempDb();
    const second: Db = openDatabase(fixture.file);
    cleanups.push(() => second.close(), fixture.close);
    const clock = new FakeClock({ start: 0 });
    const grants: string[] = [];
    const make = (db: Db, name: string) =>
      new FairRateLimiter({
        store: new SqliteWindowStore({ db }),
        clock,
        limits: LIMITS,
        safety: { marginMs: 0 },
        ...(pacing === false ? { pacing } : {}),
        onGrant: (_k, key) => grants.push(`${name}:${key}`),
      });
    return { clock, grants, a: make(fixture.db, 'A'), b: make(second, 'B') };
  }

  it("GIVEN process A's busy guild and a guild arriving later in process B THEN B's guild gets the next slot, though A looks first", async () => {
    const { clock, grants, a, b } = twoProcesses(false);
    const busy = Array.from({ length: 4 }, () => a.acquire('standard', { key: 'busy' }));
    await clock.advance(1_500);
    // B's guild arrives once A has spent the window; A polls on the second, B on the half second,
    // so A looks at the freed slot (t = 10 000) before B does (t = 10 500).
    const late = b.acquire('standard', { key: 'late' });
    await clock.advance(9_200);
    // Two slots free at 10 000: A holds back for B's guild, whose turn it is, and takes the other after.
    expect(grants.slice(0, 3)).toEqual(['A:busy', 'A:busy', 'B:late']);
    await late;
    await clock.advance(20_000);
    await Promise.all(busy);
    expect(grants).toEqual(['A:busy', 'A:busy', 'B:late', 'A:busy', 'A:busy']);
  });

  it('GIVEN both processes granting under pressure THEN the pacing counts both: past the burst, the slots are spread over the window', async () => {
    const { clock, grants, a, b } = twoProcesses(undefined);
    // limit 2: burst 1. A takes the first slot at once; the second is paced, whoever asks.
    void a.acquire('standard', { key: 'g1' });
    await clock.advance(0);
    void b.acquire('standard', { key: 'g2' });
    await clock.advance(1_000);
    expect(grants).toEqual(['A:g1']);
    // The free slot goes half-way to the moment the first frees (10 000 / 2).
    await clock.advance(4_100);
    expect(grants).toEqual(['A:g1', 'B:g2']);
  });
});
