import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openDatabase } from '../../src/db/database.ts';
import { DEFAULT_IDS } from '@yomiage/local-discord';
import { voiceAudience } from '../../src/speech/queue/utterance.ts';
import { standardRequests, startHarness, type Harness } from '../support/bot-harness.ts';

// What a restart of the bot keeps, in process (one harness for the file; the `npm start` story is
// npm-start-restarts.test.ts): an advanced job persisted while pending is finished and delivered by a
// new process (/narrate, the bot restarts mid-job, the audio still arrives, and the service receives
// exactly one job: nothing resubmitted, nothing charged twice); what a previous process queued for its
// voice session is restored by audience while the bot is not back in voice (two auto-read channels
// post MP3s, so each restored line is attached in its own channel, and lines merged for the voice
// session before must not be merged into one file now); and ended advanced jobs keep their job token
// and the reply's interaction token until they ended more than JOB_RETENTION_DAYS (default 7) ago,
// when they are deleted, at start and daily.
const bob = { id: DEFAULT_IDS.bob, username: 'bob' };
const STAFF = DEFAULT_IDS.chat;
const GENERAL = DEFAULT_IDS.general;
const DAY = 86_400_000;

let h: Harness;
beforeAll(async () => {
  h = await startHarness({
    env: { AUTO_READ_MAX_AGE_SECONDS: '600' },
    emulator: { jobs: { pendingMs: 2_000, runningMs: 300, minPollAfterMs: 100, pollAfterMs: 100 } },
    bot: { jobs: { pruneEveryMs: 300 } },
  });
  for (const channelId of [STAFF, GENERAL]) {
    const options = [{ name: 'add', type: 1, options: [{ name: 'mp3', type: 5, value: true }] }];
    const i = await h.discord.sendInteraction({ channelId, user: bob, name: 'autoread', locale: 'en-US', options: options as never });
    expect(String((await i.waitForResponse((r) => r.kind === 'callback', 15_000)).data?.content)).toContain('costs characters');
  }
}, 60_000);
afterAll(async () => h?.close());

const creations = () => h.emulator.requests().filter((r) => r.target === 'advanced' && r.status === 202);

describe('restart during /narrate', () => {
  it('resumes the persisted job in the new process and delivers its audio to the same reply', async () => {
    const interaction = await h.discord.sendInteraction({
      channelId: DEFAULT_IDS.general,
      user: bob,
      name: 'narrate',
      locale: 'en-US',
      options: [
        { name: 'text', type: 3, value: 'A story that outlives a restart of the bot.' },
        { name: 'voice', type: 3, value: 'Sam' },
      ],
    });
    await vi.waitUntil(() => creations().length === 1, { timeout: 20_000, message: 'job creation' });
    await vi.waitUntil(() => h.bot.context.repos.jobs.listUnfinished().length === 1, { timeout: 5_000, message: 'job persisted' });
    await h.restart();
    const final = await interaction.waitForResponse((r) => r.files.length > 0, 30_000);
    expect(String(final.data?.content)).toContain('Sam');
    expect(String(final.data?.content)).toMatch(/seed: -?\d+/);
    expect(creations()).toHaveLength(1);
    await vi.waitUntil(() => h.bot.context.repos.jobs.listUnfinished().length === 0, { timeout: 5_000, message: 'job marked delivered' });
  });
});

/** A line the previous process accepted for its voice session, as its journal wrote it. */
function queuedForVoice(id: string, channelId: string, text: string) {
  const meta = JSON.stringify({ delivery: { kind: 'message', channelId, messageId: `m-${id}` }, lang: 'ja' });
  return {
    id,
    guild_id: DEFAULT_IDS.guild,
    user_id: bob.id,
    channel_id: channelId,
    kind: 'auto',
    text,
    lang: 'ja',
    voice: 'ja-JP-Wavenet-B',
    speed: 1,
    pitch: 0,
    meta,
    audience: voiceAudience(DEFAULT_IDS.voice),
    enqueued_at: Date.now(),
    saved_at: Date.now(),
  };
}

describe('a restart restores the queue by audience', () => {
  it('GIVEN a staff line and a #general line queued for a voice session the bot is not back in THEN each is its own request and file', async () => {
    const staffText = 'スタッフ、BANの相談です';
    const generalText = 'みなさん、こんにちは';
    await h.restart({}, async () => {
      const db = openDatabase(join(h.dataDir, 'bot.sqlite3'), { migrate: false });
      const insert = db.prepare(`INSERT INTO pending_utterances
        (id, guild_id, user_id, channel_id, kind, text, lang, voice, speed, pitch, meta, audience, enqueued_at, saved_at)
        VALUES (@id, @guild_id, @user_id, @channel_id, @kind, @text, @lang, @voice, @speed, @pitch, @meta, @audience, @enqueued_at, @saved_at)`);
      insert.run(queuedForVoice('r1', STAFF, staffText));
      insert.run(queuedForVoice('r2', GENERAL, generalText));
      db.close();
    });
    const posted = (id: string) => h.discord.messages.find((m) => m.attachments.length > 0 && m.messageReference?.message_id === `m-${id}`);
    // Delivered in order: once the #general line is posted, the staff line before it was too.
    await vi.waitUntil(() => posted('r2'), { timeout: 20_000, interval: 20, message: 'the restored #general line posted' });
    const texts = standardRequests(h.emulator).map((r) => r.text);
    expect(texts.filter((t) => t.includes(staffText) && t.includes(generalText))).toEqual([]);
    expect(posted('r1')?.channelId).toBe(STAFF);
    expect(posted('r2')!.channelId).toBe(GENERAL);
  }, 60_000);
});

function job(id: string, state: string, endedDaysAgo: number): void {
  const at = Date.now() - endedDaysAgo * DAY;
  h.bot.db
    .prepare(
      `INSERT INTO advanced_jobs (job_id, job_token, guild_id, user_id, channel_id, delivery, request, state, created_at, updated_at, lease_owner, lease_expires_at)
       VALUES (?, 'job-token-secret', 'g1', 'u1', 'c1', '{"delivery":{"kind":"interaction","applicationId":"1","token":"interaction-token-secret"}}', '{"text":null}', ?, ?, ?, 'nobody', ?)`,
    )
    .run(id, state, at, at, Date.now() + 3_600_000);
}
const ids = () => h.bot.db.prepare('SELECT job_id FROM advanced_jobs ORDER BY job_id').pluck().all() as string[];

describe('ended advanced jobs are pruned after the retention period', () => {
  // Only this block's jobs in the table: the /narrate job above (ended today) is no part of these lists.
  beforeAll(() => {
    h.bot.db.prepare('DELETE FROM advanced_jobs').run();
  });

  it('at start: jobs ended over 7 days ago are deleted, tokens and all; newer and unfinished ones stay', async () => {
    job('a-delivered-8d', 'delivered', 8);
    job('b-failed-8d', 'failed', 8);
    job('c-delivered-6d', 'delivered', 6);
    job('d-pending-8d', 'pending', 8); // unfinished (held by another process): never pruned
    await h.restart();
    // Done by start() itself, before the first daily run.
    expect(ids()).toEqual(['c-delivered-6d', 'd-pending-8d']);
    expect(JSON.stringify(h.bot.db.prepare('SELECT * FROM advanced_jobs').all())).not.toContain('a-delivered-8d');
  });

  it('and daily while running', async () => {
    job('e-failed-9d', 'failed', 9);
    expect(ids()).toContain('e-failed-9d');
    await vi.waitUntil(() => !ids().includes('e-failed-9d'), { timeout: 5_000, message: 'the daily pruning' });
    expect(ids()).toEqual(['c-delivered-6d', 'd-pending-8d']);
  });
});
