import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../../src/db/database.ts';
import { createRepositories } from '../../src/db/repositories.ts';
import type { Reservation } from '../../src/billing/ledger.ts';
import type { ReserveResult } from '../../src/billing/policy.ts';
import { CharacterBudget, type BudgetOptions } from '../../src/billing/budget.ts';
import { BudgetError } from '../../src/billing/errors.ts';
import { countChars } from '../../src/tts/chars.ts';
import { FakeClock } from '../support/clock.ts';

const DAY = 86_400_000;
const ANCHOR = Date.UTC(2025, 0, 10); // any period start
const clock = new FakeClock();
let db: Db;
let dir: string;

beforeEach(() => {
  clock.set(ANCHOR + 3 * DAY);
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

/** The reservation of an accepted result (fails the test otherwise). */
function held(r: ReserveResult): Reservation {
  if (!r.ok) throw new Error(`expected a reservation, got a refusal: ${JSON.stringify(r.refusal)}`);
  return r.reservation;
}

const ok = async (p: Promise<ReserveResult>) => (await p).ok;
const KEY = (n: number) => n.toString(16).padStart(64, '0');

describe('CharacterBudget', () => {
  it('GIVEN the period anchor THEN periods are 30-day windows and resetsAt is the next start', () => {
    const b = budget();
    expect(b.currentPeriod()).toEqual({ start: ANCHOR, end: ANCHOR + 30 * DAY });
    clock.set(ANCHOR + 65 * DAY);
    expect(b.currentPeriod()).toEqual({ start: ANCHOR + 60 * DAY, end: ANCHOR + 90 * DAY });
    clock.set(ANCHOR - 1);
    expect(b.currentPeriod()).toEqual({ start: ANCHOR - 30 * DAY, end: ANCHOR });
  });

  it('GIVEN a user near their limit THEN the refusal carries used, limit, requested and when it resets', async () => {
    const b = budget();
    expect(await ok(b.reserve([std('u1', countChars('こんにちは🌸'.repeat(10)))]))).toBe(true); // 60 code points
    expect(await b.reserve([std('u1', 50)])).toEqual({
      ok: false,
      refusal: {
        scope: 'user',
        guildId: 'g1',
        userId: 'u1',
        used: 60,
        limit: 100,
        requested: 50,
        remaining: 40,
        resetsAt: ANCHOR + 30 * DAY,
      },
    });
    expect(await b.check([std('u1', 50)])).toMatchObject({ ok: false, refusal: { scope: 'user', used: 60 } });
    // Exactly up to the limit is fine.
    expect(await b.check([std('u1', 40)])).toEqual({ ok: true });
    expect(await ok(b.reserve([std('u1', 40)]))).toBe(true);
    expect(await b.usage({ guildId: 'g1', userId: 'u1' })).toMatchObject({ used: 100, remaining: 0, limit: 100 });
  });

  it('check holds nothing', async () => {
    const b = budget();
    for (let i = 0; i < 5; i++) expect(await b.check([std('u1', 100)])).toEqual({ ok: true });
    expect((await b.usage({ guildId: 'g1', userId: 'u1' })).used).toBe(0);
  });

  it('a reservation over one user’s limit does not affect other users', async () => {
    const b = budget();
    expect(await ok(b.reserve([std('u1', 100)]))).toBe(true);
    expect(await ok(b.reserve([std('u1', 1)]))).toBe(false);
    expect(await ok(b.reserve([std('u2', 100)]))).toBe(true);
    expect((await b.usage({ guildId: 'g1', userId: 'u2' })).used).toBe(100);
    expect((await b.usage({ guildId: 'g1' })).used).toBe(200);
  });

  it('release frees characters; charge keeps them; both are idempotent and a charged hold stays charged', async () => {
    const b = budget();
    const r1 = held(await b.reserve([std('u1', 80)]));
    expect(await ok(b.reserve([std('u1', 30)]))).toBe(false);
    await b.release(r1);
    await b.release(r1);
    expect((await b.usage({ guildId: 'g1', userId: 'u1' })).used).toBe(0);
    const r2 = held(await b.reserve([std('u1', 80)]));
    expect(await b.charge(r2)).toBe('charged');
    expect(await b.charge(r2)).toBe('charged');
    await b.release(r2); // a charged hold stays spent
    await b.uncertain(r2);
    expect(await b.usage({ guildId: 'g1', userId: 'u1' })).toMatchObject({ used: 80, reserved: 0, charged: 80, uncertain: 0 });
    expect(await ok(b.reserve([std('u1', 30)]))).toBe(false);
  });

  it('uncertain characters count against every limit like charged ones', async () => {
    const b = budget();
    const r = held(await b.reserve([std('u1', 90)]));
    await b.uncertain(r);
    expect(await b.usage({ guildId: 'g1', userId: 'u1' })).toMatchObject({ used: 90, reserved: 0, charged: 0, uncertain: 90 });
    expect(await b.accountUsage()).toMatchObject({ used: 90, uncertain: 90 });
    expect(await b.reserve([std('u1', 11)])).toMatchObject({ ok: false, refusal: { scope: 'user', used: 90 } });
  });

  it('GIVEN standard audio already paid for THEN a repeat holds nothing and is free; a repeat answered with a known pk is free too', async () => {
    const b = budget();
    const first = held(await b.reserve([std('u1', 40)], { audioKey: KEY(1) }));
    expect(await b.charge(first, { pk: 7 })).toBe('charged');
    const repeat = held(await b.reserve([std('u1', 40)], { audioKey: KEY(1) }));
    expect(repeat).toMatchObject({ free: true, total: 0 });
    expect(await b.charge(repeat, { pk: 7 })).toBe('free');
    // Another key (e.g. an out-of-range speed the service replaced) answered with the same history pk.
    const sameAudio = held(await b.reserve([std('u1', 40)], { audioKey: KEY(2) }));
    expect(await b.charge(sameAudio, { pk: 7 })).toBe('free');
    expect(await b.usage({ guildId: 'g1', userId: 'u1' })).toMatchObject({ used: 40, charged: 40 });
  });

  it('GIVEN an uncertain standard request THEN a later success for the same audio settles it: charged once, the rest released', async () => {
    const b = budget();
    const lost = held(await b.reserve([std('u1', 30)], { audioKey: KEY(3) }));
    await b.uncertain(lost);
    const later = held(await b.reserve([std('u2', 30)], { audioKey: KEY(3) }));
    expect(await b.charge(later, { pk: 9 })).toBe('charged');
    expect(await b.accountUsage()).toMatchObject({ used: 30, charged: 30, uncertain: 0 });
    // Once paid, an uncertain repeat is known free.
    const again = held(await b.reserve([std('u3', 30)], { audioKey: KEY(3) }));
    await b.uncertain(again);
    expect(await b.accountUsage()).toMatchObject({ used: 30, uncertain: 0 });
  });

  it('a refunded job releases its charge; recordJobCharge records a job once', async () => {
    const b = budget();
    const adv = { guildId: 'g1', userId: 'u1', endpoint: 'advanced' as const, chars: 50 };
    const r = held(await b.reserve([adv]));
    await b.charge(r, { jobId: 'job-1' });
    expect((await b.usage({ guildId: 'g1', userId: 'u1' })).charged).toBe(50);
    expect(await b.refundJob('job-1')).toBe(true);
    expect(await b.refundJob('job-1')).toBe(false);
    expect((await b.usage({ guildId: 'g1', userId: 'u1' })).used).toBe(0);
    expect(await b.recordJobCharge('job-2', [adv])).toBe(true);
    expect(await b.recordJobCharge('job-2', [adv])).toBe(false);
    expect(await b.recordJobCharge('job-1', [adv])).toBe(false); // already known (refunded)
    expect((await b.usage({ guildId: 'g1', userId: 'u1' })).charged).toBe(50);
  });

  it('a coalesced request charges every author atomically: one author over the limit refuses all', async () => {
    const b = budget();
    expect(await ok(b.reserve([std('u2', 95)]))).toBe(true);
    expect(await b.reserve([std('u1', 10), std('u2', 10), std('u3', 10)])).toMatchObject({
      ok: false,
      refusal: { scope: 'user', userId: 'u2', used: 95, requested: 10 },
    });
    expect((await b.usage({ guildId: 'g1', userId: 'u1' })).used).toBe(0);
    expect((await b.usage({ guildId: 'g1', userId: 'u3' })).used).toBe(0);
    expect(await ok(b.reserve([std('u1', 10), std('u3', 10), std('u1', 5)]))).toBe(true);
    expect((await b.usage({ guildId: 'g1', userId: 'u1' })).used).toBe(15);
  });

  it('guild and account limits apply across users and guilds', async () => {
    const b = budget();
    expect(await ok(b.reserve([std('u1', 100), std('u2', 100)]))).toBe(true);
    expect(await b.reserve([std('u3', 60)])).toMatchObject({
      ok: false,
      refusal: { scope: 'guild', guildId: 'g1', used: 200, limit: 250, requested: 60 },
    });
    expect(await ok(b.reserve([std('u1', 100, 'g2'), std('u2', 100, 'g2')]))).toBe(true);
    const r = await b.reserve([std('u9', 50, 'g3')]);
    expect(r).toMatchObject({
      ok: false,
      refusal: { scope: 'account', used: 400, limit: 400, requested: 50, resetsAt: ANCHOR + 30 * DAY },
    });
    expect(r.ok || r.refusal.userId).toBeUndefined();
    expect(await b.accountUsage()).toMatchObject({ used: 400, remaining: 0 });
  });

  it('a guild’s own limits (guild settings) override the bot defaults', async () => {
    const repos = createRepositories(db, { clock });
    await repos.guildSettings.update('g1', { userMonthlyLimit: 20, guildMonthlyLimit: 30 });
    const b = budget();
    expect(await b.reserve([std('u1', 21)])).toMatchObject({ ok: false, refusal: { scope: 'user', limit: 20 } });
    expect(await ok(b.reserve([std('u1', 20)]))).toBe(true);
    expect(await b.reserve([std('u2', 11)])).toMatchObject({ ok: false, refusal: { scope: 'guild', limit: 30 } });
    expect(await ok(b.reserve([std('u2', 50, 'g2')]))).toBe(true);
  });

  it('usage is split by endpoint; topSpenders ranks the guild’s users', async () => {
    const b = budget();
    const r = held(
      await b.reserve([std('u1', 30), { guildId: 'g1', userId: 'u1', endpoint: 'advanced', chars: 40 }, std('u2', 50), std('u3', 5)]),
    );
    await b.charge(r);
    await b.reserve([std('u2', 1)]);
    expect(await b.usage({ guildId: 'g1', userId: 'u1' })).toMatchObject({ used: 70, byEndpoint: { standard: 30, advanced: 40 } });
    expect(await b.usage({ guildId: 'g1' })).toMatchObject({ used: 126, reserved: 1, limit: 250 });
    expect(await b.topSpenders('g1', 2)).toEqual([
      { userId: 'u1', used: 70 },
      { userId: 'u2', used: 51 },
    ]);
  });

  it('GIVEN a new period THEN usage starts again from zero', async () => {
    const b = budget();
    await b.charge(held(await b.reserve([std('u1', 100)])));
    expect(await ok(b.reserve([std('u1', 1)]))).toBe(false);
    clock.set(ANCHOR + 30 * DAY);
    expect((await b.usage({ guildId: 'g1', userId: 'u1' })).used).toBe(0);
    expect(await ok(b.reserve([std('u1', 100)]))).toBe(true);
  });

  it('GIVEN a crashed process left holds THEN after 10 minutes an unsent one is released and a sent one stays uncertain', async () => {
    const crashed = budget();
    await crashed.reserve([std('u1', 100)]); // never sent
    const sent = held(await crashed.reserve([std('u2', 100)]));
    expect(await crashed.markSent(sent)).toEqual({ ok: true, reservation: sent });
    await clock.advance(5 * 60_000);
    expect(await ok(budget().reserve([std('u1', 1)]))).toBe(false); // still held: may be in flight
    await clock.advance(6 * 60_000);
    const restarted = budget();
    expect(await restarted.releaseStale()).toBe(2);
    expect(await restarted.usage({ guildId: 'g1', userId: 'u1' })).toMatchObject({ used: 0 });
    expect(await restarted.usage({ guildId: 'g1', userId: 'u2' })).toMatchObject({ used: 100, uncertain: 100 });

    // A slow process whose hold was judged stale before it sent: the hold is taken again (or refused).
    const slow = held(await crashed.reserve([std('u3', 60)]));
    await clock.advance(11 * 60_000);
    await restarted.releaseStale();
    const again = await crashed.markSent(slow);
    expect(again.ok && again.reservation.id !== slow.id).toBe(true);
    expect((await restarted.usage({ guildId: 'g1', userId: 'u3' })).reserved).toBe(60);
    // The request did reach the service after all: charging it records its spend once.
    await crashed.charge(again.ok ? again.reservation : slow);
    expect(await restarted.usage({ guildId: 'g1', userId: 'u3' })).toMatchObject({ used: 60, charged: 60 });
  });

  it('refuses malformed charges as a programming error', async () => {
    const b = budget();
    await expect(b.reserve([std('u1', -1)])).rejects.toThrow(BudgetError);
    await expect(b.reserve([std('u1', 1.5)])).rejects.toThrow(/non-negative integer/);
    expect(await ok(b.reserve([]))).toBe(true);
  });

  it('the running totals always equal the ledger summed by state', async () => {
    const b = budget({ defaults: { userMonthlyLimit: 10_000, guildMonthlyLimit: 10_000, accountMonthlyLimit: 10_000 } });
    for (let i = 0; i < 60; i++) {
      const c = [
        std(`u${i % 4}`, 1 + (i % 7), `g${i % 3}`),
        { guildId: `g${i % 2}`, userId: `v${i % 5}`, endpoint: 'advanced' as const, chars: 2 + (i % 3) },
      ];
      const r = held(await b.reserve(c, i % 3 === 0 ? { audioKey: KEY(100 + (i % 9)) } : {}));
      if (i % 11 === 0) await clock.advance(11 * 60_000); // some holds go stale
      if (i % 4 === 0) await b.charge(r, { jobId: `j${i}` });
      else if (i % 4 === 1) await b.uncertain(r);
      else if (i % 4 === 2) await b.release(r);
      if (i % 8 === 0) await b.refundJob(`j${i}`);
    }
    await b.releaseStale();
    const fromLedger = db
      .prepare(`SELECT state, SUM(chars) AS n FROM character_ledger WHERE state != 'released' GROUP BY state ORDER BY state`)
      .all() as { state: string; n: number }[];
    const totals = db
      .prepare(
        `SELECT SUM(reserved) AS reserved, SUM(charged) AS charged, SUM(uncertain) AS uncertain FROM ledger_totals WHERE guild_id = '' AND user_id = ''`,
      )
      .get() as Record<string, number>;
    const want = Object.fromEntries(['charged', 'reserved', 'uncertain'].map((s) => [s, fromLedger.find((r) => r.state === s)?.n ?? 0]));
    expect(totals).toEqual(want);
    for (const scope of ["user_id != ''", "user_id = '' AND guild_id != ''"]) {
      const sum = db.prepare(`SELECT SUM(reserved + charged + uncertain) FROM ledger_totals WHERE ${scope}`).pluck().get();
      expect(sum).toBe(want.charged! + want.reserved! + want.uncertain!);
    }
  });
});
