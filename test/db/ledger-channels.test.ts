import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Charge, Period } from '../../src/billing/ledger.ts';
import { loadMigrations, openDatabase, type Db } from '../../src/db/database.ts';
import { DailySpendReport } from '../../src/db/ledger-daily.ts';
import { SqliteLedger } from '../../src/db/sqlite-ledger.ts';
import { batchRequest } from '../../src/speech/queue/batching/merging.ts';
import { clipParts, clipRequest } from '../../src/speech/queue/batching/reuse.ts';
import { voiceAudience } from '../../src/speech/queue/utterance.ts';
import { RULES, u } from '../support/batching.ts';

// Usage per text channel: the characters of a request are recorded with the channel each was
// spent for, so a voice session reading several channels' messages in one request shows each
// channel its share, and the shares add up to what each member and the server were charged.

const DAY = 86_400_000;
const period: Period = { start: Date.UTC(2025, 0, 10), end: Date.UTC(2025, 0, 10) + 30 * DAY };
const now = period.start + 2 * DAY;
const inVoice = (channelId: string, userId: string) => ({ channelId, userId, audience: voiceAudience('vc1') });

let dir: string;
let db: Db;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ledger-channels-'));
});
afterEach(() => {
  db?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function chargeAll(ledger: SqliteLedger, charges: readonly Charge[]): Promise<void> {
  const held = await ledger.reserve({ charges, period, now, staleBefore: 0 }, () => undefined);
  if (!held.ok) throw new Error('refused');
  await ledger.charge(held.reservation, {}, now);
}

const sum = (xs: readonly { chars: number }[]) => xs.reduce((n, x) => n + x.chars, 0);
const used = async (ledger: SqliteLedger, scope: { guildId: string; userId?: string }) =>
  (await ledger.totals(scope, period)).reduce((n, t) => n + t.reserved + t.charged + t.uncertain, 0);

describe('usage per channel', () => {
  it('GIVEN a request merging two channels of a voice session THEN the per-channel sums equal each member and the total', async () => {
    db = openDatabase(join(dir, 'bot.db'));
    const ledger = new SqliteLedger(db);
    const report = new DailySpendReport(db);
    const run = [
      u('おはようございます', inVoice('general', 'alice')),
      u('スタッフ会議は三時から', inVoice('staff', 'alice')),
      u('了解', inVoice('staff', 'bob')),
      u('またね', inVoice('general', 'bob')),
    ];
    const whole = batchRequest('g1', run, RULES);
    // A plan splitting a name from its body charges through clipRequest: the same rule.
    const named = [
      u('アリスさん、こんにちは', { ...inVoice('general', 'alice'), prefix: 'アリスさん、' }),
      u('はい', inVoice('staff', 'bob')),
    ];
    const parts = named.flatMap((x, i) => clipParts(x, i));
    const clipped = clipRequest('g1', named, parts, RULES);
    await chargeAll(ledger, whole.charges);
    await chargeAll(ledger, clipped.charges);

    const total = RULES.countChars(whole.text) + RULES.countChars(clipped.text);
    expect(await used(ledger, { guildId: 'g1' })).toBe(total);
    const channels = report.channels(period, { guildId: 'g1' });
    expect(channels.map((c) => c.channelId).sort()).toEqual(['general', 'staff']);
    expect(sum(channels)).toBe(total);
    // Each message's own characters (and the pause before it) went to its channel.
    const staff = RULES.countChars('スタッフ会議は三時から。') + RULES.countChars('了解。') + RULES.countChars('。はい');
    expect(channels.find((c) => c.channelId === 'staff')?.chars).toBe(staff);
    for (const userId of ['alice', 'bob']) {
      const mine = report.channels(period, { guildId: 'g1', userId });
      expect(sum(mine), userId).toBe(await used(ledger, { guildId: 'g1', userId }));
    }
    expect(sum(report.days(period, { guildId: 'g1' }))).toBe(total);
  });

  it('GIVEN ledger rows written before channels were recorded THEN the migration keeps them, shown with no channel', async () => {
    const before = loadMigrations().filter((m) => m.version < 15);
    const old = openDatabase(join(dir, 'old.db'), { migrations: before });
    old
      .prepare(
        `INSERT INTO character_ledger (reservation_id, guild_id, user_id, period_start, endpoint, chars, state, created_at, settled_at, sent_at)
         VALUES ('r-old', 'g1', 'alice', ?, 'standard', 42, 'charged', ?, ?, ?)`,
      )
      .run(period.start, now, now, now);
    old.close();
    db = openDatabase(join(dir, 'old.db'));
    const rows = db.prepare('SELECT reservation_id, user_id, chars, state, channel_id FROM character_ledger').all();
    expect(rows).toEqual([{ reservation_id: 'r-old', user_id: 'alice', chars: 42, state: 'charged', channel_id: null }]);
    const ledger = new SqliteLedger(db);
    await chargeAll(ledger, batchRequest('g1', [u('新しい', { channelId: 'general', userId: 'alice' })], RULES).charges);
    expect(new DailySpendReport(db).channels(period, { guildId: 'g1' })).toEqual([
      { channelId: null, chars: 42 },
      { channelId: 'general', chars: RULES.countChars('新しい') },
    ]);
  });
});
