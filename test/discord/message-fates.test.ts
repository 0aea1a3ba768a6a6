import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.ts';
import { MessageFatesTable } from '../../src/db/message-fates.ts';
import { MessageFates, recordDeliveries, type Arrival } from '../../src/discord/diagnosis/fates.ts';
import type { ReadyUtterance, Utterance } from '../../src/speech/queue/utterance.ts';
import { BillingError } from '../../src/billing/errors.ts';
import { SpeechError } from '../../src/speech/errors.ts';
import { tempDb } from '../support/temp-db.ts';

// The record of what became of each message: the latest decision wins, where and when it arrived
// stays; ids and codes only; bounded by age and count per server; written to SQLite so a restart
// still answers.
const HOUR = 3_600_000;
const opened: Array<{ close(): void }> = [];
afterEach(() => {
  for (const o of opened.splice(0)) o.close();
});
function setup(keep = { keepMs: 6 * HOUR, perGuild: 500 }) {
  const t = tempDb();
  opened.push(t);
  let now = 10 * HOUR;
  const clock = { now: () => now, advance: (ms: number) => (now += ms) };
  const fates = new MessageFates({ table: new MessageFatesTable(t.db), now: clock.now, keep });
  return { ...t, clock, fates };
}
const arrival = (messageId: string, at: number, userId = 'u1'): Arrival => ({
  guildId: 'g1',
  messageId,
  channelId: 'c1',
  userId,
  arrivedAt: at,
});

/** An auto-read utterance reading message `messageId`. */
function utterance(messageId: string, at: number, audience = 'voice:v1'): Utterance {
  return {
    id: `u-${messageId}`,
    guildId: 'g1',
    userId: 'u1',
    channelId: 'c1',
    kind: 'auto',
    text: 'secret words',
    voice: 'v',
    speed: 1,
    pitch: 0,
    audience,
    enqueuedAt: at,
    meta: { delivery: { kind: 'message', channelId: 'c1', messageId }, lang: 'ja' },
  };
}

describe('MessageFates', () => {
  it('GIVEN decisions about one message THEN the latest is its fate, its arrival and blankness stay; survives a restart once written', async () => {
    const { fates, clock, file } = setup();
    const t0 = clock.now();
    fates.note({ ...arrival('m1', t0), blank: true }, 'queued', { voiceChannelId: 'v1' });
    clock.advance(2_000);
    fates.note(arrival('m1', clock.now()), 'too_old', { told: true });
    expect(fates.get('g1', 'm1')).toMatchObject({ fate: 'too_old', arrivedAt: t0, at: t0 + 2_000, told: true, blank: true });
    await fates.flush();
    // Another process (a restart) reads it from the file.
    const db = openDatabase(file);
    opened.push(db);
    const again = new MessageFates({ table: new MessageFatesTable(db), now: clock.now });
    expect(again.get('g1', 'm1')).toEqual(fates.get('g1', 'm1'));
    // Ids, codes and times only: the text the message carried is nowhere in the row.
    expect(JSON.stringify(db.prepare('SELECT * FROM message_fates').all())).not.toContain('secret');
  });

  it('GIVEN a write waiting for the lock THEN what it carries is still read, and a decision meanwhile keeps the arrival', async () => {
    const { fates, clock, file } = setup();
    const t0 = clock.now();
    fates.note({ ...arrival('m1', t0), blank: true }, 'queued');
    // Another process holds the write lock: the write waits (asynchronously) for it.
    const other = openDatabase(file, { migrate: false });
    opened.push(other);
    other.exec('BEGIN IMMEDIATE');
    const writing = fates.flush();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(fates.get('g1', 'm1')).toMatchObject({ fate: 'queued', blank: true });
    clock.advance(1_000);
    fates.note(arrival('m1', clock.now()), 'read', { voiceChannelId: 'v1' });
    expect(fates.recentOf('g1', 'u1', 5)).toMatchObject([{ messageId: 'm1', fate: 'read', arrivedAt: t0, blank: true }]);
    other.exec('COMMIT');
    await writing;
    await fates.flush();
    expect(fates.get('g1', 'm1')).toMatchObject({ fate: 'read', arrivedAt: t0, blank: true });
  });

  it("GIVEN a member's messages THEN their latest ones, newest first, written or not; older than the record keeps are gone", async () => {
    const { fates, clock } = setup({ keepMs: HOUR, perGuild: 500 });
    fates.note(arrival('old', clock.now()), 'read');
    await fates.flush();
    clock.advance(HOUR + 1);
    fates.note(arrival('a', clock.now()), 'muted');
    await fates.flush();
    clock.advance(1);
    fates.note(arrival('b', clock.now()), 'queued');
    fates.note(arrival('other', clock.now(), 'u2'), 'queued');
    expect(fates.recentOf('g1', 'u1', 5).map((f) => [f.messageId, f.fate])).toEqual([
      ['b', 'queued'],
      ['a', 'muted'],
    ]);
    expect(fates.get('g1', 'old')).toBeUndefined();
  });

  it('GIVEN more messages than a server keeps THEN the oldest are forgotten when written', async () => {
    const { fates, clock, db } = setup({ keepMs: HOUR, perGuild: 3 });
    for (const id of ['m1', 'm2', 'm3', 'm4', 'm5']) {
      clock.advance(1);
      fates.note(arrival(id, clock.now()), 'read');
    }
    await fates.flush();
    expect(db.prepare('SELECT message_id FROM message_fates ORDER BY arrived_at').pluck().all()).toEqual(['m3', 'm4', 'm5']);
  });

  it('GIVEN deliveries THEN read (when it started, where, with which), refused for a limit, failed, skipped; a deletion decides its own', async () => {
    const { fates, clock } = setup();
    const t0 = clock.now();
    const [a, b] = [utterance('ma', t0), utterance('mb', t0)];
    const deliver = recordDeliveries(
      fates,
      async (ready) => {
        clock.advance(1_500); // playing
        return ready.error ? undefined : { played: true, attached: false };
      },
      clock.now,
    );
    const ready = (items: Utterance[], error?: Error & { code?: string }): ReadyUtterance =>
      error
        ? { id: items[0]!.id, guildId: 'g1', items, error }
        : ({ id: items[0]!.id, guildId: 'g1', items, audio: {} } as unknown as ReadyUtterance);
    await deliver(ready([a, b]), new AbortController().signal);
    expect(fates.get('g1', 'ma')).toMatchObject({
      fate: 'read',
      at: t0,
      voiceChannelId: 'v1',
      mergedWith: [{ channelId: 'c1', messageId: 'mb' }],
    });
    const refusal = Object.assign(new BillingError('budget_refused'), { refusal: { scope: 'user', limit: 5000, used: 5000 } });
    await deliver(ready([utterance('mc', t0)], refusal), new AbortController().signal);
    expect(fates.get('g1', 'mc')).toMatchObject({ fate: 'budget', scope: 'user', limit: 5000 });
    await deliver(ready([utterance('md', t0)], new SpeechError('synthesis_failed')), new AbortController().signal);
    expect(fates.get('g1', 'md')).toMatchObject({ fate: 'failed', reason: 'synthesis_failed' });
    const skip = new AbortController();
    skip.abort(new SpeechError('aborted', { message: 'skipped' }));
    await recordDeliveries(fates, async () => ({ played: false, attached: false }), clock.now)(ready([utterance('me', t0)]), skip.signal);
    expect(fates.get('g1', 'me')).toMatchObject({ fate: 'skipped' });
    // A shutdown cuts it short: it is delivered again after the restart, so still queued.
    fates.note(arrival('mg', t0), 'queued');
    const closed = new AbortController();
    closed.abort(new SpeechError('closed'));
    await recordDeliveries(fates, async () => ({ played: true, attached: false }), clock.now)(ready([utterance('mg', t0)]), closed.signal);
    expect(fates.get('g1', 'mg')).toMatchObject({ fate: 'queued' });
    fates.note(arrival('mf', t0), 'deleted');
    const deleted = new AbortController();
    deleted.abort(new SpeechError('aborted', { message: 'withdrawn' }));
    await recordDeliveries(
      fates,
      async () => ({ played: false, attached: false }),
      clock.now,
    )(ready([utterance('mf', t0)]), deleted.signal);
    expect(fates.get('g1', 'mf')).toMatchObject({ fate: 'deleted' });
  });
});
