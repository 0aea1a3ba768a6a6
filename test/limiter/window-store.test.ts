import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { storeFactories, tempDb, type StoreFixture } from './support.ts';
import { SqliteWindowStore } from '../../src/tts/limiter-window.ts';

describe.each(storeFactories)('WindowStore contract: $name', ({ make }) => {
  let fixture: StoreFixture;
  beforeEach(() => {
    fixture = make();
  });
  afterEach(() => fixture.close());

  it('grants up to the limit in a window, then says when the oldest grant leaves it', () => {
    const { store } = fixture;
    expect(store.tryTake('standard', 1_000, 3, 60_000)).toEqual({ ok: true });
    expect(store.tryTake('standard', 2_000, 3, 60_000)).toEqual({ ok: true });
    expect(store.tryTake('standard', 5_000, 3, 60_000)).toEqual({ ok: true });
    expect(store.tryTake('standard', 10_000, 3, 60_000)).toEqual({ ok: false, retryInMs: 51_000 });
    // Still full one millisecond before the first grant leaves the window.
    expect(store.tryTake('standard', 60_999, 3, 60_000)).toEqual({ ok: false, retryInMs: 1 });
    expect(store.tryTake('standard', 61_000, 3, 60_000)).toEqual({ ok: true });
    // The refusals recorded nothing: the next slot frees when the 2 000 grant leaves.
    expect(store.tryTake('standard', 61_500, 3, 60_000)).toEqual({ ok: false, retryInMs: 500 });
  });

  it('keeps the two kinds apart', () => {
    const { store } = fixture;
    expect(store.tryTake('standard', 0, 1, 60_000).ok).toBe(true);
    expect(store.tryTake('standard', 1, 1, 60_000).ok).toBe(false);
    expect(store.tryTake('advanced', 1, 1, 60_000).ok).toBe(true);
    expect(store.tryTake('advanced', 2, 1, 60_000).ok).toBe(false);
  });

  it('a block closes an empty window until its time, and only for its kind', () => {
    const { store } = fixture;
    store.block('advanced', 15_000);
    expect(store.tryTake('advanced', 10_000, 10, 60_000)).toEqual({ ok: false, retryInMs: 5_000 });
    expect(store.tryTake('standard', 10_000, 10, 60_000)).toEqual({ ok: true });
    expect(store.tryTake('advanced', 15_000, 10, 60_000)).toEqual({ ok: true });
  });

  it('an earlier block never shortens a later one', () => {
    const { store } = fixture;
    store.block('standard', 30_000);
    store.block('standard', 20_000);
    expect(store.tryTake('standard', 25_000, 10, 60_000)).toEqual({ ok: false, retryInMs: 5_000 });
  });

  it('counts a grant stamped after `now` (another process committed first) against the window', () => {
    const { store } = fixture;
    expect(store.tryTake('standard', 2_000, 1, 1_000).ok).toBe(true);
    // A process whose clock read 1 500 commits after the 2 000 grant: refused, or two would share (1 500, 2 500].
    expect(store.tryTake('standard', 1_500, 1, 1_000)).toEqual({ ok: false, retryInMs: 1_500 });
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
