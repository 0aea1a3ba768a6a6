import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { tempDb } from '../support/temp-db.ts';
import { storeFactories, type StoreFixture } from './window-stores.ts';
import { closePostgres, openPostgres, type PgPool } from '../../src/db/postgres.ts';
import { PostgresWindowStore } from '../../src/tts/limiter/postgres.ts';
import { FairRateLimiter } from '../../src/tts/limiter/fair.ts';
import pgLib from 'pg';
const PgPoolCtor = pgLib.Pool;
import { startPostgres, type TestPostgres } from '../support/postgres.ts';
import { SqliteWindowStore } from '../../src/tts/limiter/window.ts';
import type { GrantDecision, WindowSnapshot } from '../../src/tts/limiter/types.ts';

// The PostgreSQL store (several hosts behind one IP) keeps the same contract.
let postgres: TestPostgres | undefined;
let pg: PgPool | undefined;
beforeAll(async () => {
  postgres = await startPostgres();
  pg = await openPostgres(postgres.url);
}, 60_000);
afterAll(async () => {
  if (pg) await closePostgres(pg);
  await postgres?.stop();
});
const postgresFactory = {
  name: 'PostgresWindowStore',
  make: async (): Promise<StoreFixture> => {
    await pg!.query('DELETE FROM yomiage_rate_grants; UPDATE yomiage_rate_blocks SET until_ms = 0');
    return { store: new PostgresWindowStore({ pg: pg! }), close: () => {} };
  },
};

describe.each([...storeFactories, postgresFactory])('WindowStore contract: $name', ({ make }) => {
  let fixture: StoreFixture;
  beforeEach(async () => {
    fixture = await make();
  });
  afterEach(() => fixture.close());

  it('grants up to the limit in a window, then says when the oldest grant leaves it', async () => {
    const { store } = fixture;
    expect(await store.tryTake('standard', 1_000, 3, 60_000)).toEqual({ ok: true });
    expect(await store.tryTake('standard', 2_000, 3, 60_000)).toEqual({ ok: true });
    expect(await store.tryTake('standard', 5_000, 3, 60_000)).toEqual({ ok: true });
    expect(await store.tryTake('standard', 10_000, 3, 60_000)).toEqual({ ok: false, retryInMs: 51_000 });
    // Still full one millisecond before the first grant leaves the window.
    expect(await store.tryTake('standard', 60_999, 3, 60_000)).toEqual({ ok: false, retryInMs: 1 });
    expect(await store.tryTake('standard', 61_000, 3, 60_000)).toEqual({ ok: true });
    // The refusals recorded nothing: the next slot frees when the 2 000 grant leaves.
    expect(await store.tryTake('standard', 61_500, 3, 60_000)).toEqual({ ok: false, retryInMs: 500 });
  });

  it('keeps the two kinds apart', async () => {
    const { store } = fixture;
    expect((await store.tryTake('standard', 0, 1, 60_000)).ok).toBe(true);
    expect((await store.tryTake('standard', 1, 1, 60_000)).ok).toBe(false);
    expect((await store.tryTake('advanced', 1, 1, 60_000)).ok).toBe(true);
    expect((await store.tryTake('advanced', 2, 1, 60_000)).ok).toBe(false);
  });

  it('a block closes an empty window until its time, and only for its kind', async () => {
    const { store } = fixture;
    await store.block('advanced', 15_000);
    expect(await store.tryTake('advanced', 10_000, 10, 60_000)).toEqual({ ok: false, retryInMs: 5_000 });
    expect(await store.tryTake('standard', 10_000, 10, 60_000)).toEqual({ ok: true });
    expect(await store.tryTake('advanced', 15_000, 10, 60_000)).toEqual({ ok: true });
  });

  it('an earlier block never shortens a later one', async () => {
    const { store } = fixture;
    await store.block('standard', 30_000);
    await store.block('standard', 20_000);
    expect(await store.tryTake('standard', 25_000, 10, 60_000)).toEqual({ ok: false, retryInMs: 5_000 });
  });

  it('counts a grant stamped after `now` (another process committed first) against the window', async () => {
    const { store } = fixture;
    expect((await store.tryTake('standard', 2_000, 1, 1_000)).ok).toBe(true);
    // A process whose clock read 1 500 commits after the 2 000 grant: refused, or two would share (1 500, 2 500].
    expect(await store.tryTake('standard', 1_500, 1, 1_000)).toEqual({ ok: false, retryInMs: 1_500 });
  });

  it('take records which guild each grant went to, and a grant given back unused frees its slot at once', async () => {
    const { store } = fixture;
    const to =
      (key: string) =>
      (s: WindowSnapshot): GrantDecision =>
        s.grants.length < 2 ? { ok: true, key } : { ok: false, retryInMs: 1 };
    const first = await store.take('standard', 1_000, 60_000, undefined, to('g1'));
    const second = await store.take('standard', 2_000, 60_000, undefined, to('g2'));
    expect([first.ok, second.ok]).toEqual([true, true]);
    let seen: WindowSnapshot | undefined;
    const full = await store.take('standard', 3_000, 60_000, undefined, (s) => ((seen = s), to('g3')(s)));
    expect(full.ok).toBe(false);
    expect(seen!.grants.map((g) => g.key)).toEqual(['g1', 'g2']);
    // Served least recently: g1's latest grant is older than g2's.
    expect(seen!.lastGrant.get('g1')!).toBeLessThan(seen!.lastGrant.get('g2')!);
    await store.release('standard', second.id!);
    expect((await store.take('standard', 3_000, 60_000, undefined, to('g3'))).ok).toBe(true);
  });
});

describe('SqliteWindowStore', () => {
  it('shares one window between two connections to the same file (two shards)', () => {
    const a = tempDb();
    const second = new Database(a.file);
    second.pragma('busy_timeout = 5000');
    try {
      const storeA = new SqliteWindowStore({ db: a.db });
      const storeB = new SqliteWindowStore({ db: second });
      expect(storeA.tryTake('standard', 0, 2, 60_000).ok).toBe(true);
      expect(storeB.tryTake('standard', 1, 2, 60_000).ok).toBe(true);
      expect(storeA.tryTake('standard', 2, 2, 60_000)).toEqual({ ok: false, retryInMs: 59_998 });
      storeB.block('advanced', 5_000);
      expect(storeA.tryTake('advanced', 3, 2, 60_000)).toEqual({ ok: false, retryInMs: 4_997 });
    } finally {
      second.close();
      a.close();
    }
  });

  it('prunes grants that are long out of the window', () => {
    const { db, close } = tempDb();
    try {
      const store = new SqliteWindowStore({ db });
      for (let t = 0; t < 50; t++) store.tryTake('standard', t * 1_000, 30, 1_000);
      const rows = db.prepare('SELECT COUNT(*) FROM rate_grants').pluck().get() as number;
      expect(rows).toBeLessThanOrEqual(3);
    } finally {
      close();
    }
  });
});

describe('PostgresWindowStore (hosts behind one IP)', () => {
  it('two hosts, each with its own connections, taking at once: exactly `limit` grants in one window', async () => {
    const hosts = [
      new PgPoolCtor({ connectionString: postgres!.url, max: 4 }),
      new PgPoolCtor({ connectionString: postgres!.url, max: 4 }),
    ];
    try {
      await pg!.query('DELETE FROM yomiage_rate_grants');
      const stores = hosts.map((p) => new PostgresWindowStore({ pg: p }));
      const results = await Promise.all(
        Array.from({ length: 40 }, (_, i) => stores[i % 2]!.tryTake('standard', 500_000 + (i % 5), 7, 60_000)),
      );
      expect(results.filter((r) => r.ok)).toHaveLength(7);
    } finally {
      await Promise.all(hosts.map((p) => p.end()));
    }
  });

  it('PostgreSQL down: nothing is granted; after the grace period the limiter fails its waiters, naming the store', async () => {
    const down = new PgPoolCtor({ connectionString: 'postgres://u:secret-pw@127.0.0.1:1/none', connectionTimeoutMillis: 200 });
    down.on('error', () => {});
    try {
      const store = new PostgresWindowStore({ pg: down, outageGraceMs: 300, retryMs: 50 });
      expect(await store.tryTake('standard', 1, 30, 60_000)).toEqual({ ok: false, retryInMs: 50 });
      const limiter = new FairRateLimiter({ store });
      const error = await limiter.acquire('standard').catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'limiter_store_failed', cause: { code: 'rate_store_unavailable' } });
      expect(String((error as Error).message) + String(((error as Error).cause as Error).message)).not.toContain('secret-pw');
    } finally {
      await down.end().catch(() => {});
    }
  });
});

describe.each([storeFactories[1]!, postgresFactory])('Shared WindowStore demand: $name', ({ make }) => {
  let fixture: StoreFixture;
  beforeEach(async () => {
    fixture = await make();
  });
  afterEach(() => fixture.close());

  it('one process sees the guilds another has waiting while they are live, not after it withdraws or stops refreshing', async () => {
    const { store } = fixture;
    const look = async (owner: string, now: number, waiting: { key: string; since: number }[], liveSince = 0) => {
      let others: readonly { key: string; since: number }[] = [];
      await store.take('standard', now, 60_000, { owner, waiting, liveSince }, (s) => ((others = s.others), { ok: false, retryInMs: 1 }));
      return others;
    };
    await look('A', 1_000, [{ key: 'a1', since: 900 }]);
    expect(await look('B', 1_100, [{ key: 'b1', since: 1_050 }])).toEqual([{ key: 'a1', since: 900 }]);
    expect(await look('A', 1_200, [{ key: 'a1', since: 900 }])).toEqual([{ key: 'b1', since: 1_050 }]);
    await store.withdraw('standard', 'B');
    expect(await look('A', 1_300, [])).toEqual([]);
    // A process that stopped refreshing (crashed) is ignored once older than liveSince.
    await look('C', 1_400, [{ key: 'c1', since: 1_400 }]);
    expect(await look('A', 9_000, [], 5_000)).toEqual([]);
  });
});
