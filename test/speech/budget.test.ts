import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../../src/db/database.ts';
import { createRepositories } from '../../src/db/repositories.ts';
import { BudgetError, CharacterBudget, type BudgetOptions } from '../../src/speech/budget.ts';
import { countChars } from '../../src/tts/chars.ts';
import type { Clock } from '../../src/util/clock.ts';

const DAY = 86_400_000;
const ANCHOR = Date.UTC(2025, 0, 10); // any period start
let now: number;
const clock: Clock = { now: () => now, sleep: async () => {} };
let db: Db;
let dir: string;

beforeEach(() => {
  now = ANCHOR + 3 * DAY;
  dir = mkdtempSync(join(tmpdir(), 'budget-'));
  db = openDatabase(join(dir, 'bot.db'));
});
afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

function budget(options: Partial<BudgetOptions> = {}): CharacterBudget {
  return new CharacterBudget({
    db,
    clock,
    defaults: { userMonthlyLimit: 100, guildMonthlyLimit: 250, accountMonthlyLimit: 400 },
    period: { anchor: ANCHOR, days: 30 },
    ...options,
  });
}

const std = (userId: string, chars: number, guildId = 'g1') => ({ guildId, userId, endpoint: 'standard' as const, chars });

describe('CharacterBudget', () => {
  it('GIVEN the period anchor THEN periods are 30-day windows and resetsAt is the next start', () => {
    const b = budget();
    expect(b.currentPeriod()).toEqual({ start: ANCHOR, end: ANCHOR + 30 * DAY });
    now = ANCHOR + 65 * DAY;
    expect(b.currentPeriod()).toEqual({ start: ANCHOR + 60 * DAY, end: ANCHOR + 90 * DAY });
    now = ANCHOR - 1;
    expect(b.currentPeriod()).toEqual({ start: ANCHOR - 30 * DAY, end: ANCHOR });
  });

  it('GIVEN a user near their limit THEN the refusal carries used, limit, requested and when it resets', () => {
    const b = budget();
    const first = b.reserve([std('u1', countChars('こんにちは🌸'.repeat(10)))]); // 60 code points
    expect(first.ok).toBe(true);
    const second = b.reserve([std('u1', 50)]);
    expect(second).toEqual({
      ok: false,
      refusal: { scope: 'user', guildId: 'g1', userId: 'u1', used: 60, limit: 100, requested: 50, remaining: 40, resetsAt: ANCHOR + 30 * DAY },
    });
    // Exactly up to the limit is fine.
    expect(b.reserve([std('u1', 40)]).ok).toBe(true);
    expect(b.usage({ guildId: 'g1', userId: 'u1' })).toMatchObject({ used: 100, remaining: 0, limit: 100 });
  });

  it('a reservation over one user’s limit does not affect other users', () => {
    const b = budget();
    expect(b.reserve([std('u1', 100)]).ok).toBe(true);
    expect(b.reserve([std('u1', 1)]).ok).toBe(false);
    expect(b.reserve([std('u2', 100)]).ok).toBe(true);
    expect(b.usage({ guildId: 'g1', userId: 'u2' }).used).toBe(100);
    expect(b.usage({ guildId: 'g1' }).used).toBe(200);
  });

  it('release frees characters; commit keeps them; both are idempotent', () => {
    const b = budget();
    const r1 = b.reserve([std('u1', 80)]);
    if (!r1.ok) throw new Error('expected ok');
    expect(b.reserve([std('u1', 30)]).ok).toBe(false);
    b.release(r1.reservation);
    b.release(r1.reservation);
    expect(b.usage({ guildId: 'g1', userId: 'u1' }).used).toBe(0);
    const r2 = b.reserve([std('u1', 80)]);
    if (!r2.ok) throw new Error('expected ok');
    b.commit(r2.reservation);
    b.commit(r2.reservation);
    b.release(r2.reservation); // a committed reservation stays spent
    expect(b.usage({ guildId: 'g1', userId: 'u1' })).toMatchObject({ used: 80, reserved: 0 });
    expect(b.reserve([std('u1', 30)]).ok).toBe(false);
  });

  it('a coalesced request charges every author atomically: one author over the limit refuses all', () => {
    const b = budget();
    expect(b.reserve([std('u2', 95)]).ok).toBe(true);
    const r = b.reserve([std('u1', 10), std('u2', 10), std('u3', 10)]);
    expect(r).toMatchObject({ ok: false, refusal: { scope: 'user', userId: 'u2', used: 95, requested: 10 } });
    expect(b.usage({ guildId: 'g1', userId: 'u1' }).used).toBe(0);
    expect(b.usage({ guildId: 'g1', userId: 'u3' }).used).toBe(0);
    const ok = b.reserve([std('u1', 10), std('u3', 10), std('u1', 5)]);
    expect(ok.ok).toBe(true);
    expect(b.usage({ guildId: 'g1', userId: 'u1' }).used).toBe(15);
  });

  it('guild and account limits apply across users and guilds', () => {
    const b = budget();
    expect(b.reserve([std('u1', 100), std('u2', 100)]).ok).toBe(true);
    expect(b.reserve([std('u3', 60)])).toMatchObject({ ok: false, refusal: { scope: 'guild', guildId: 'g1', used: 200, limit: 250, requested: 60 } });
    expect(b.reserve([std('u1', 100, 'g2'), std('u2', 100, 'g2')]).ok).toBe(true);
    const r = b.reserve([std('u9', 50, 'g3')]);
    expect(r).toMatchObject({ ok: false, refusal: { scope: 'account', used: 400, limit: 400, requested: 50, resetsAt: ANCHOR + 30 * DAY } });
    expect(r.ok || r.refusal.userId).toBeUndefined();
    expect(b.accountUsage()).toMatchObject({ used: 400, remaining: 0 });
  });

  it('a guild’s own limits (guild settings) override the bot defaults', () => {
    const repos = createRepositories(db, { clock });
    repos.guildSettings.update('g1', { userMonthlyLimit: 20, guildMonthlyLimit: 30 });
    const b = budget();
    expect(b.reserve([std('u1', 21)])).toMatchObject({ ok: false, refusal: { scope: 'user', limit: 20 } });
    expect(b.reserve([std('u1', 20)]).ok).toBe(true);
    expect(b.reserve([std('u2', 11)])).toMatchObject({ ok: false, refusal: { scope: 'guild', limit: 30 } });
    expect(b.reserve([std('u2', 50, 'g2')]).ok).toBe(true);
  });

  it('usage is split by endpoint; topSpenders ranks the guild’s users', () => {
    const b = budget();
    const r = b.reserve([std('u1', 30), { guildId: 'g1', userId: 'u1', endpoint: 'advanced', chars: 40 }, std('u2', 50), std('u3', 5)]);
    if (!r.ok) throw new Error('expected ok');
    b.commit(r.reservation);
    b.reserve([std('u2', 1)]);
    expect(b.usage({ guildId: 'g1', userId: 'u1' })).toMatchObject({ used: 70, byEndpoint: { standard: 30, advanced: 40 } });
    expect(b.usage({ guildId: 'g1' })).toMatchObject({ used: 126, reserved: 1, limit: 250 });
    expect(b.topSpenders('g1', 2)).toEqual([
      { userId: 'u1', used: 70 },
      { userId: 'u2', used: 51 },
    ]);
  });

  it('GIVEN a new period THEN usage starts again from zero', () => {
    const b = budget();
    const r = b.reserve([std('u1', 100)]);
    if (!r.ok) throw new Error('expected ok');
    b.commit(r.reservation);
    expect(b.reserve([std('u1', 1)]).ok).toBe(false);
    now = ANCHOR + 30 * DAY;
    expect(b.usage({ guildId: 'g1', userId: 'u1' }).used).toBe(0);
    expect(b.reserve([std('u1', 100)]).ok).toBe(true);
  });

  it('GIVEN a crashed process left a reservation THEN it is released after 10 minutes (on start-up and on reserve)', () => {
    const crashed = budget();
    expect(crashed.reserve([std('u1', 100)]).ok).toBe(true);
    now += 5 * 60_000;
    expect(budget().reserve([std('u1', 1)]).ok).toBe(false); // still held: may be in flight
    now += 6 * 60_000;
    const restarted = budget(); // start-up releases it
    expect(restarted.usage({ guildId: 'g1', userId: 'u1' }).used).toBe(0);

    const r = crashed.reserve([std('u2', 100)]);
    if (!r.ok) throw new Error('expected ok');
    now += 11 * 60_000;
    expect(crashed.reserve([std('u2', 100)]).ok).toBe(true); // reserve releases stale ones first
    // The slow request did reach the service after all: committing records its spend again.
    crashed.commit(r.reservation);
    expect(crashed.usage({ guildId: 'g1', userId: 'u2' }).used).toBe(200);
  });

  it('refuses malformed charges as a programming error', () => {
    const b = budget();
    expect(() => b.reserve([std('u1', -1)])).toThrow(BudgetError);
    expect(() => b.reserve([std('u1', 1.5)])).toThrow(/non-negative integer/);
    expect(b.reserve([]).ok).toBe(true);
  });
});
