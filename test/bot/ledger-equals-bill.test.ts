import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEFAULT_TOKEN } from '@yomiage/tts-emulator';
import { DEFAULT_IDS } from '@yomiage/local-discord';
import { SHORT_TONES, startHarness, type Harness } from '../support/bot-harness.ts';
import { StoppableClock } from '../support/clock.ts';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { guildStats } from '../support/guild-stats.ts';

// The ledger equals the bill. The whole bot (real discord.js against the loopback
// Discord, the real client, SQLite ledger) runs a matrix of faults driven for real against the
// emulator, whose per-account counter says what the service charged. In every cell:
//   certain <= charged by the service <= certain + uncertain     (never spend what budgets deny)
// and where the client can know (every cell but the two whose answer is lost for good), certain
// equals the service's counter exactly and nothing is left uncertain.
const alice = { id: DEFAULT_IDS.alice, username: 'alice' };
const bob = { id: DEFAULT_IDS.bob, username: 'bob' };
const chars = (s: string) => [...s].length;

let h: Harness;
const JOBS = { pendingMs: 400, runningMs: 200 };
/** The service's time: stopped where a job must still be running when the test acts. */
const serviceClock = new StoppableClock();
beforeAll(async () => {
  h = await startHarness({
    // The matrix sends more than a minute's worth of requests: the windows are not what is tested here.
    emulator: {
      ...SHORT_TONES,
      now: serviceClock.now,
      jobs: { ...JOBS, minPollAfterMs: 100, pollAfterMs: 100 },
      rate: { standard: { limit: 1000, windowMs: 60_000 }, advanced: { limit: 1000, windowMs: 60_000 } },
    },
    env: { USER_MONTHLY_CHARS: '3000', GUILD_MONTHLY_CHARS: '3000', ACCOUNT_MONTHLY_CHARS: '5000' },
    bot: {
      rateLimits: { standard: { limit: 1000, windowMs: 60_000 }, advanced: { limit: 1000, windowMs: 60_000 } },
      // The spec's waits (1-8 s backoff, 5 min for a stuck job) shortened; the rules are the same.
      tts: {
        retry: {
          standardBackoffMs: [20, 20, 20, 20],
          advancedBackoffMs: [20, 20, 20],
          standardMinRateWaitMs: 50,
          advancedMinRateWaitMs: 50,
        },
        jobs: { stuckPendingMs: 700, minPollMs: 50, defaultPollMs: 100 },
      },
    },
  });
}, 60_000);
afterAll(async () => h?.close());
afterEach(() => serviceClock.start()); // a failed cell leaves no stopped clock to the next

interface Books {
  /** What the emulator charged the bot's account, net of refunds. */
  service: number;
  certain: number;
  uncertain: number;
  reserved: number;
}

async function books(): Promise<Books> {
  const u = await h.bot.context.budget.accountUsage();
  return { service: h.emulator.charged(DEFAULT_TOKEN), certain: u.charged, uncertain: u.uncertain, reserved: u.reserved };
}

const delta = (a: Books, b: Books): Books => ({
  service: b.service - a.service,
  certain: b.certain - a.certain,
  uncertain: b.uncertain - a.uncertain,
  reserved: b.reserved - a.reserved,
});

/**
 * Waits until the books cannot move any more, and reads them: nothing held, every request answered
 * by the emulator, the guild's queue idle, and no advanced job followed (a failed one is refunded
 * before it ends). Nothing is left in the bot that could charge, release or refund.
 */
async function settled(): Promise<Books> {
  let last: Books | undefined;
  const idle = () => {
    const q = guildStats(h.bot.scheduler, DEFAULT_IDS.guild);
    return (
      q.queued + q.synthesizing + q.ready === 0 &&
      !q.playing &&
      !h.emulator.requests().some((r) => r.status === 0) &&
      h.bot.context.repos.jobs.listUnfinished().length === 0
    );
  };
  await vi.waitUntil(async () => idle() && (last = await books()).reserved === 0, {
    timeout: 20_000,
    interval: 10,
    message: 'the books never settled',
  });
  return last!;
}

async function say(text: string, user = alice) {
  return h.discord.sendInteraction({
    channelId: DEFAULT_IDS.general,
    user,
    name: 'say',
    locale: 'en-US',
    options: [{ name: 'text', type: 3, value: text }],
  });
}

async function narrate(text: string) {
  return h.discord.sendInteraction({
    channelId: DEFAULT_IDS.general,
    user: bob,
    name: 'narrate',
    locale: 'en-US',
    options: [
      { name: 'text', type: 3, value: text },
      { name: 'voice', type: 3, value: 'Luna' },
    ],
  });
}

async function command(name: 'skip' | 'clear') {
  const i = await h.discord.sendInteraction({ channelId: DEFAULT_IDS.general, user: bob, name, locale: 'en-US' });
  return i.waitForResponse((r) => r.kind === 'callback', 10_000);
}

/**
 * /narrate whose job is created and then kept running at the service (its clock stopped halfway
 * through the job's run) until the test starts the clock again: whatever the machine's load, the
 * job cannot end before the test's next step lands, and it is past pending, so never judged stuck.
 */
async function runningJob(text: string) {
  serviceClock.stop();
  const createdAt = serviceClock.now();
  const i = await narrate(text);
  await vi.waitUntil(() => requestFor('advanced', text).some((r) => r.status === 202), {
    timeout: 10_000,
    interval: 10,
    message: 'the job to be created',
  });
  serviceClock.stop(createdAt + JOBS.pendingMs + JOBS.runningMs / 2);
  return i;
}

/** The final edit of a /say or /narrate reply: the audio, or why there is none. */
async function final(i: Awaited<ReturnType<typeof say>>) {
  return i.waitForResponse(
    (r) => r.kind === 'editOriginal' && (r.files.length > 0 || !/queued|waiting|generating|順番|待/i.test(String(r.data?.content))),
    30_000,
  );
}

const requestFor = (target: 'standard' | 'advanced', text: string) =>
  h.emulator.requests().filter((r) => r.target === target && (r.body as { text?: string } | null)?.text === text);

/** The books of one cell, from a settled start to a settled end. */
async function cell(run: () => Promise<void>): Promise<Books> {
  const before = await settled();
  await run();
  return delta(before, await settled());
}

function exact(d: Books, service: number): void {
  expect(d).toEqual({ service, certain: service, uncertain: 0, reserved: 0 });
}

function bounded(d: Books): void {
  expect(d.certain).toBeLessThanOrEqual(d.service);
  expect(d.certain + d.uncertain).toBeGreaterThanOrEqual(d.service);
}

const totals = { service: 0, certain: 0, uncertain: 0, reserved: 0 };
/** Adds a cell to the totals; the books as a whole stay bounded after every cell. */
const record = async (d: Books) => {
  for (const k of Object.keys(totals) as (keyof Books)[]) totals[k] += d[k];
  bounded(await books());
};

describe('the ledger equals the bill (fault matrix against the emulator)', () => {
  it('plain /say: charged once, to the member it was for', async () => {
    const text = '台帳の基本の確認です';
    const userBefore = (await h.bot.context.budget.usage({ guildId: DEFAULT_IDS.guild, userId: alice.id })).charged;
    const d = await cell(async () => void (await final(await say(text))).files[0]!);
    exact(d, chars(text));
    const userAfter = (await h.bot.context.budget.usage({ guildId: DEFAULT_IDS.guild, userId: alice.id })).charged;
    expect(userAfter - userBefore).toBe(chars(text));
    await record(d);
  });

  it('transient 500 then success (retried)', async () => {
    const text = '一度失敗してから成功します';
    h.emulator.injectFault({ target: 'standard', count: 1, status: 500 });
    const d = await cell(async () => void expect((await final(await say(text))).files).toHaveLength(1));
    exact(d, chars(text));
    await record(d);
  });

  it('charge-then-500, then the retry is served free from the history', async () => {
    const text = '課金されてから失敗しました';
    h.emulator.injectFault({ target: 'standard', count: 1, status: 500, chargeFirst: true });
    const d = await cell(async () => void expect((await final(await say(text))).files).toHaveLength(1));
    exact(d, chars(text));
    await record(d);
  });

  it('charge-then-500 on every attempt: uncertain; the same text later settles it exactly', async () => {
    const text = '何度やっても答えが返りません';
    h.emulator.injectFault({ target: 'standard', count: 4, status: 500, chargeFirst: true });
    const lost = await cell(async () => void expect((await final(await say(text))).files).toHaveLength(0));
    expect(lost).toEqual({ service: chars(text), certain: 0, uncertain: chars(text), reserved: 0 });
    await record(lost);
    const later = await cell(async () => void expect((await final(await say(text))).files).toHaveLength(1));
    // Served from the history (free), which proves the first request was the one that paid.
    expect(later).toEqual({ service: 0, certain: chars(text), uncertain: -chars(text), reserved: 0 });
    await record(later);
  });

  it('429 then success', async () => {
    const text = '混雑していたので待ちました';
    h.emulator.injectFault({ target: 'standard', count: 1, status: 429 });
    const d = await cell(async () => void expect((await final(await say(text))).files).toHaveLength(1));
    exact(d, chars(text));
    await record(d);
  });

  it('notice audio (allowance exhausted) is free', async () => {
    const text = '残りの文字数がありません';
    const remaining = h.emulator.accounts().find((a) => a.userId)!.remaining;
    h.emulator.setRemaining(DEFAULT_TOKEN, 0);
    try {
      const d = await cell(async () => void expect((await final(await say(text))).files).toHaveLength(0));
      exact(d, 0);
      await record(d);
    } finally {
      h.emulator.setRemaining(DEFAULT_TOKEN, remaining);
    }
  });

  it('a repeat the cache lost is served from the history: charged once', async () => {
    const text = '同じ文章をもう一度読みます';
    // A miss is delivered while its files are still being cached: forget them once
    // written. Known by its own bytes (the attached MP3), not by a count of files: an earlier
    // cell's clip finishing its caching late must not pass for this one.
    const audioDir = join(h.dataDir, 'audio');
    let mp3: Buffer | undefined;
    const first = await cell(async () => {
      const files = (await final(await say(text))).files;
      expect(files).toHaveLength(1);
      mp3 = files[0]!.data;
    });
    exact(first, chars(text));
    await record(first);
    // Cached means both files written and the index pointing at them (src/speech/synthesis/cache.ts put).
    const cachedHere = () => {
      if (!existsSync(audioDir)) return false;
      const names = readdirSync(audioDir, { recursive: true }).map(String);
      const mine = names.filter((f) => f.endsWith('.mp3')).find((f) => readFileSync(join(audioDir, f)).equals(mp3!));
      if (mine === undefined || !names.includes(mine.replace(/\.mp3$/, '.ogg'))) return false;
      return h.bot.db.prepare('SELECT 1 FROM audio_cache WHERE mp3_path = ?').get(mine) !== undefined;
    };
    await vi.waitUntil(cachedHere, { timeout: 10_000, interval: 10, message: 'the first clip to be cached' });
    rmSync(audioDir, { recursive: true, force: true }); // the cache forgot it
    const repeat = await cell(async () => void expect((await final(await say(text))).files).toHaveLength(1));
    expect(requestFor('standard', text).filter((r) => r.status === 200)).toHaveLength(2);
    exact(repeat, 0);
    await record(repeat);
  });

  it('/clear while the request is in flight: uncertain (the service went on and charged); a later success settles it', async () => {
    const text = '送信中に取り消されました';
    h.emulator.setLatency('standard', 1_500); // time enough for /clear to land while it is in flight
    try {
      const d = await cell(async () => {
        await say(text);
        await vi.waitUntil(() => requestFor('standard', text).length === 1, {
          timeout: 10_000,
          interval: 10,
          message: 'the request to reach the service',
        });
        await command('clear');
        await vi.waitUntil(() => requestFor('standard', text)[0]!.status !== 0, {
          timeout: 10_000,
          interval: 10,
          message: 'the service to finish it',
        });
      });
      expect(d).toEqual({ service: chars(text), certain: 0, uncertain: chars(text), reserved: 0 });
      await record(d);
    } finally {
      h.emulator.setLatency('standard', 0);
    }
    const later = await cell(async () => void expect((await final(await say(text))).files).toHaveLength(1));
    expect(later).toEqual({ service: 0, certain: chars(text), uncertain: -chars(text), reserved: 0 });
    await record(later);
  });

  it('/skip while a request is in flight does not disturb its accounting', async () => {
    const text = 'スキップされても数えます';
    h.emulator.setLatency('standard', 400);
    try {
      const d = await cell(async () => {
        const i = await say(text);
        await vi.waitUntil(() => requestFor('standard', text).length === 1, {
          timeout: 10_000,
          interval: 10,
          message: 'the request to reach the service',
        });
        await command('skip');
        await final(i);
      });
      exact(d, chars(text));
      await record(d);
    } finally {
      h.emulator.setLatency('standard', 0);
    }
  });

  it('/narrate: charged at creation, once', async () => {
    const text = '高度な読み上げの基本の確認です。';
    const d = await cell(async () => void expect((await final(await narrate(text))).files).toHaveLength(1));
    exact(d, chars(text));
    await record(d);
  });

  it('a transient job failure is refunded and the resubmit charged', async () => {
    const text = '一時的に失敗した仕事をやり直します。';
    h.emulator.nextJobs({ outcome: 'fail', code: 'tts_retry_exhausted' });
    const d = await cell(async () => void expect((await final(await narrate(text))).files).toHaveLength(1));
    exact(d, chars(text));
    expect(h.emulator.requests().filter((r) => r.target === 'advanced' && (r.body as { text: string }).text === text)).toHaveLength(2);
    await record(d);
  });

  it('a job that fails for good is refunded: nothing charged', async () => {
    const text = 'この仕事は最後まで失敗します。';
    h.emulator.nextJobs({ outcome: 'fail', code: 'content_policy_violation' });
    const d = await cell(async () => void expect((await final(await narrate(text))).files).toHaveLength(0));
    exact(d, 0);
    await record(d);
  });

  it('a stuck job is abandoned and resubmitted: the service charges twice, and so does the ledger', async () => {
    const text = '止まった仕事を見捨てて出し直します。';
    h.emulator.nextJobs({ outcome: 'stay_pending' });
    const d = await cell(async () => void expect((await final(await narrate(text))).files).toHaveLength(1));
    exact(d, 2 * chars(text));
    await record(d);
  });

  it('quota_exceeded at creation is not charged', async () => {
    const text = '文字数が足りない仕事の作成です。';
    const remaining = h.emulator.accounts()[0]!.remaining;
    h.emulator.setRemaining(DEFAULT_TOKEN, 3);
    try {
      const d = await cell(async () => void expect((await final(await narrate(text))).files).toHaveLength(0));
      exact(d, 0);
      await record(d);
    } finally {
      h.emulator.setRemaining(DEFAULT_TOKEN, remaining);
    }
  });

  it('429 rate_limited at creation, then created', async () => {
    const text = '作成が混雑していたので待ちました。';
    h.emulator.injectFault({ target: 'advanced', count: 1, status: 429 });
    const d = await cell(async () => void expect((await final(await narrate(text))).files).toHaveLength(1));
    exact(d, chars(text));
    await record(d);
  });

  it('charge-then-503 at creation: the lost job stays uncertain, the retried one is certain', async () => {
    const text = '作成の答えが失われた仕事です。';
    h.emulator.injectFault({ target: 'advanced', count: 1, status: 503, chargeFirst: true });
    const d = await cell(async () => void expect((await final(await narrate(text))).files).toHaveLength(1));
    // Two jobs exist at the service and both are charged; we know of one.
    expect(d).toEqual({ service: 2 * chars(text), certain: chars(text), uncertain: chars(text), reserved: 0 });
    await record(d);
  });

  it('/clear while the creation request is in flight: uncertain', async () => {
    const text = '作成中に取り消された仕事です。';
    h.emulator.setLatency('advanced', 1_500);
    try {
      const d = await cell(async () => {
        await narrate(text);
        await vi.waitUntil(() => requestFor('advanced', text).length === 1, {
          timeout: 10_000,
          interval: 10,
          message: 'the creation to reach the service',
        });
        await command('clear');
        await vi.waitUntil(() => requestFor('advanced', text)[0]!.status !== 0, {
          timeout: 10_000,
          interval: 10,
          message: 'the service to create it',
        });
      });
      expect(d).toEqual({ service: chars(text), certain: 0, uncertain: chars(text), reserved: 0 });
      await record(d);
    } finally {
      h.emulator.setLatency('advanced', 0);
    }
  });

  it('/clear while the job runs: followed to its end for the refund of its failure, never delivered', async () => {
    const text = '取り消された後で失敗する仕事です。';
    h.emulator.nextJobs({ outcome: 'fail', code: 'internal_error' });
    let interaction: Awaited<ReturnType<typeof narrate>> | undefined;
    const d = await cell(async () => {
      interaction = await runningJob(text);
      // Running as the bot knows it (recorded): a /clear before the bot read the 202 is the lost-answer cell above.
      await vi.waitUntil(() => h.bot.context.repos.jobs.listUnfinished().some((j) => j.request.text === text), {
        timeout: 10_000,
        interval: 10,
        message: 'the bot to record the job',
      });
      await command('clear');
      serviceClock.start(); // cleared: now the job may fail
      await vi.waitUntil(() => h.emulator.requests().some((r) => r.target === 'poll' && r.code === 'internal_error'), {
        timeout: 10_000,
        interval: 10,
        message: 'the job to be followed to its end',
      });
    });
    exact(d, 0);
    expect(interaction!.responses().some((r) => r.files.length > 0)).toBe(false);
    await record(d);
  });

  it('a restart mid-job: the resumed job is charged once, by the process that created it', async () => {
    const text = '再起動をまたいで届く高度な読み上げです。';
    const d = await cell(async () => {
      const i = await runningJob(text);
      // Mid-job as the bot knows it: the job recorded and the queue's copy dropped. (Stopped
      // before the bot read the 202, it could only submit again: a lost answer, not this cell.)
      const pending = h.bot.db.prepare('SELECT COUNT(*) FROM pending_utterances').pluck();
      await vi.waitUntil(() => h.bot.context.repos.jobs.listUnfinished().some((j) => j.request.text === text) && pending.get() === 0, {
        timeout: 10_000,
        interval: 10,
        message: 'the bot to record the job',
      });
      await h.restart();
      serviceClock.start(); // the new process follows the job the old one created
      expect((await final(i)).files).toHaveLength(1);
    });
    exact(d, chars(text));
    expect(requestFor('advanced', text)).toHaveLength(1);
    await record(d);
  });

  it('over the whole matrix: certain <= the bill <= certain + uncertain, and the only uncertainty left is the two lost answers', async () => {
    const all = await books();
    expect(all.service).toBe(totals.service);
    expect(all.certain).toBeLessThanOrEqual(all.service);
    expect(all.certain + all.uncertain).toBeGreaterThanOrEqual(all.service);
    expect(all.uncertain).toBe(chars('作成の答えが失われた仕事です。') + chars('作成中に取り消された仕事です。'));
    expect(all.service - all.certain).toBe(all.uncertain);
  });
});
