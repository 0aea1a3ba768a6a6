import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { closePostgres, openPostgres, type PgPool } from '../../src/db/postgres.ts';
import { PooledLedger } from '../../src/db/pooled-ledger.ts';
import type { Charge } from '../../src/billing/ledger.ts';
import { CharacterBudget } from '../../src/billing/budget.ts';
import { tempDb } from '../support/temp-db.ts';
import { startPostgres, type TestPostgres } from '../support/postgres.ts';

// The account's characters are one pool across hosts (ACCOUNT_LEDGER_URL). Each
// "host" here is its own SQLite file with a CharacterBudget over a PooledLedger; the pool is a
// real PostgreSQL started for this file.
const ACCOUNT = 50;
let postgres: TestPostgres;
let pg: PgPool;

interface Host {
  budget: CharacterBudget;
  ledger: PooledLedger;
  close(): Promise<void>;
}
const open: Host[] = [];

function host(options: { holdMs?: number; renewEveryMs?: number } = {}, db = tempDb()): Host {
  const ledger = new PooledLedger({ db: db.db, pg, ...options });
  const budget = new CharacterBudget({
    db: db.db,
    ledger,
    defaults: { accountMonthlyLimit: ACCOUNT, guildMonthlyLimit: 10_000, userMonthlyLimit: 10_000 },
  });
  const h = {
    budget,
    ledger,
    close: async () => {
      await ledger.close();
      db.close();
    },
  };
  open.push(h);
  return h;
}
const say = (guildId: string, chars: number): Charge[] => [{ guildId, userId: 'u1', endpoint: 'standard', chars }];

beforeAll(async () => {
  postgres = await startPostgres();
  pg = await openPostgres(postgres.url);
}, 60_000);
afterAll(async () => {
  await closePostgres(pg);
  await postgres.stop();
});
beforeEach(async () => {
  await pg.query('DELETE FROM yomiage_pool_holds; DELETE FROM yomiage_pool_totals');
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((h) => h.close()));
});

describe('the account pool across hosts', () => {
  it('GIVEN two hosts reserving 80 one-character holds at once THEN exactly the 50 of the allowance are held', async () => {
    const [a, b] = [host(), host()];
    const results = await Promise.all(Array.from({ length: 80 }, (_, i) => (i % 2 ? a : b).budget.reserve(say(i % 2 ? 'ga' : 'gb', 1))));
    expect(results.filter((r) => r.ok)).toHaveLength(ACCOUNT);
    const refusal = results.find((r) => !r.ok);
    expect(refusal).toMatchObject({ ok: false, refusal: { scope: 'account', limit: ACCOUNT, used: ACCOUNT } });
    expect((await a.budget.accountUsage()).used).toBe(ACCOUNT);
    // A refused host holds nothing locally for what the pool refused.
    const local = (await a.budget.usage({ guildId: 'ga' })).used + (await b.budget.usage({ guildId: 'gb' })).used;
    expect(local).toBe(ACCOUNT);
  });

  it('GIVEN a host that dies holding characters THEN what it never sent expires back into the pool; what it sent stays counted', async () => {
    const dead = host({ holdMs: 400, renewEveryMs: 100 });
    const live = host({ holdMs: 400, renewEveryMs: 100 });
    const unsent = await dead.budget.reserve(say('ga', 30));
    const sent = await dead.budget.reserve(say('ga', 10));
    expect(unsent.ok && sent.ok).toBe(true);
    if (sent.ok) expect((await dead.budget.markSent(sent.reservation)).ok).toBe(true);
    await dead.ledger.close(); // it stops renewing, as a crashed host would
    expect(await live.budget.reserve(say('gb', 20))).toMatchObject({ ok: false, refusal: { scope: 'account', used: 40 } });
    // The live host's own hold meanwhile is renewed and never expires.
    const mine = await live.budget.reserve(say('gb', 5));
    expect(mine.ok).toBe(true);
    await vi.waitFor(async () => expect((await live.budget.reserve(say('gb', 30))).ok).toBe(true), { timeout: 5_000, interval: 150 });
    // 10 sent + 5 + 30 of the live host. An expired hold is settled by the next reservation (under the
    // period's lock); the sent one was made a moment after the unsent one, so on a slow machine it may
    // expire after the reservation above: counted all along, and uncertain once the next one settles it.
    expect((await live.budget.accountUsage()).used).toBe(45);
    await vi.waitFor(
      async () => {
        const next = await live.budget.reserve(say('gb', 1));
        if (next.ok) await live.budget.release(next.reservation);
        expect(await live.budget.accountUsage()).toMatchObject({ used: 45, uncertain: 10 });
      },
      { timeout: 5_000, interval: 150 },
    );
  });

  it('GIVEN PostgreSQL down THEN reservations fail closed (nothing held), and a charge made meanwhile reaches the pool once it is back', async () => {
    const h = host({ renewEveryMs: 100 });
    const before = await h.budget.reserve(say('ga', 7));
    if (!before.ok) throw new Error('reserve failed');
    expect((await h.budget.markSent(before.reservation)).ok).toBe(true);
    const resume = await postgres.pause();
    try {
      await expect(h.budget.reserve(say('ga', 3))).rejects.toMatchObject({ name: 'SharedStoreError', code: 'account_pool_unavailable' });
      expect((await h.budget.usage({ guildId: 'ga' })).used).toBe(7);
      // The service charged the request that left before the outage: recorded here, copied later.
      expect(await h.budget.charge(before.reservation)).toBe('charged');
    } finally {
      await resume();
    }
    await vi.waitFor(async () => expect(await h.budget.accountUsage()).toMatchObject({ charged: 7, reserved: 0 }), {
      timeout: 10_000,
      interval: 200,
    });
  });

  it('GIVEN a host that spent characters before it joined the pool THEN the pool counts them from its first start', async () => {
    const db = tempDb();
    const alone = new CharacterBudget({ db: db.db, defaults: { accountMonthlyLimit: ACCOUNT } });
    const before = await alone.reserve(say('ga', 40));
    if (!before.ok) throw new Error('reserve');
    await alone.markSent(before.reservation);
    await alone.charge(before.reservation);
    const joined = host({}, db);
    await joined.ledger.start(joined.budget.currentPeriod());
    const other = host();
    expect(await other.budget.reserve(say('gb', 11))).toMatchObject({ ok: false, refusal: { scope: 'account', used: 40 } });
    expect((await other.budget.reserve(say('gb', 10))).ok).toBe(true);
    // Once only: a restart does not count it twice.
    await joined.ledger.start(joined.budget.currentPeriod());
    expect((await other.budget.accountUsage()).used).toBe(50);
  });
});
