import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { APIApplicationCommandInteractionDataOption } from 'discord.js';
import { DEFAULT_IDS, startFakeVoiceServer, trustCertificate, type FakeVoiceServer } from '@yomiage/local-discord';
import type { Utterance } from '../../src/speech/queue/utterance.ts';
import { join } from 'node:path';
import { openDatabase } from '../../src/db/database.ts';
import { t } from '../../src/i18n/texts.ts';
import { standardRequests, startHarness, type Harness } from '../support/bot-harness.ts';
import { guildStats } from '../support/guild-stats.ts';

// The reading controls in a voice call (loopback Discord, TLS voice server with DAVE, emulator): the
// voice-channel rule, clips the bot makes on its own charged to the server, and the spoken notice
// for stale messages, which is a cached clip. Auto-read waits at most 3 s here (the 1.5 s hold fits in it with room under load) and one request is
// prefetched, so a long /say playing makes the messages behind it stale.
const alice = { id: DEFAULT_IDS.alice, username: 'alice', globalName: 'Alice' };
const bob = { id: DEFAULT_IDS.bob, username: 'bob', globalName: 'Bob' };
const guildId = DEFAULT_IDS.guild;
const NOTICE = /^(\d+)件省略しました。$|^10件以上省略しました。$/;

let voice: FakeVoiceServer;
let h: Harness;

beforeAll(async () => {
  voice = await startFakeVoiceServer();
  trustCertificate(voice.caCertPem);
  h = await startHarness({
    discord: { voiceEndpoint: () => voice.endpoint },
    env: { AUTO_READ_MAX_AGE_SECONDS: '3', PREFETCH: '1' },
    bot: { staleNoticeIntervalMs: 0 },
  });
  await h.discord.setVoiceState(alice.id, guildId, DEFAULT_IDS.voice);
  voice.simulateListener({ guildId, channelId: DEFAULT_IDS.voice, userId: alice.id });
  const join = await h.discord.sendInteraction({ channelId: DEFAULT_IDS.general, user: alice, name: 'join', locale: 'en-US' });
  expect(String((await join.waitForResponse((r) => r.kind === 'editOriginal', 30_000)).data?.content)).toContain('Joined');
  await voice.waitForDave(guildId);
}, 60_000);
afterAll(async () => {
  await h?.close();
  await voice?.close();
});

async function command(
  user: { id: string; username: string },
  name: string,
  options: APIApplicationCommandInteractionDataOption[],
): Promise<string> {
  const interaction = await h.discord.sendInteraction({ channelId: DEFAULT_IDS.general, user, name, locale: 'en-US', options });
  return String((await interaction.waitForResponse((r) => r.kind === 'callback', 20_000)).data?.content ?? '');
}
const sub = (name: string, options: APIApplicationCommandInteractionDataOption[] = []) => [
  { name, type: 1, options } as APIApplicationCommandInteractionDataOption,
];
const texts = (from: number) =>
  standardRequests(h.emulator)
    .slice(from)
    .map((r) => r.text);
const idle = () =>
  vi.waitUntil(
    () => {
      const s = guildStats(h.bot.scheduler, guildId);
      return s.queued + s.synthesizing + s.ready === 0 && !s.playing ? true : undefined;
    },
    { timeout: 60_000, interval: 20, message: 'an idle queue' },
  );

describe('/reading in-voice', () => {
  it("on: a member outside the bot's voice channel is not read, one inside is", async () => {
    expect(await command(bob, 'reading', sub('in-voice', [{ name: 'value', type: 5, value: true }]))).toContain('in-voice');
    const before = standardRequests(h.emulator).length;
    await h.discord.sendMessage({ channelId: DEFAULT_IDS.general, author: bob, content: 'ボイスにいない人の発言' });
    await h.discord.sendMessage({ channelId: DEFAULT_IDS.general, author: alice, content: 'ボイスにいる人の発言' });
    const sent = await vi.waitUntil(() => (texts(before).some((t) => t.includes('ボイスにいる人')) ? texts(before) : undefined), {
      timeout: 20_000,
      interval: 20,
      message: "alice's message",
    });
    expect(sent.join('|')).not.toContain('ボイスにいない人');
    await command(bob, 'reading', sub('in-voice', [{ name: 'value', type: 5, value: false }]));
    await idle();
  });
});

describe("the bot's own clips are charged to the server", () => {
  it('a join announcement costs the server, not the member who joined', async () => {
    await command(bob, 'config', sub('announce', [{ name: 'value', type: 5, value: true }]));
    const before = standardRequests(h.emulator).length;
    await h.discord.setVoiceState(bob.id, guildId, DEFAULT_IDS.voice);
    await vi.waitUntil(() => (texts(before).some((t) => t.includes('入室しました')) ? true : undefined), {
      timeout: 20_000,
      interval: 20,
      message: 'the announcement',
    });
    await idle();
    expect((await h.bot.context.budget.usage({ guildId, userId: bob.id })).used).toBe(0);
    expect((await h.bot.context.budget.usage({ guildId, userId: guildId })).used).toBeGreaterThan(0);
    expect((await h.bot.context.budget.topSpenders(guildId)).map((s) => s.userId)).not.toContain(guildId);
    await command(bob, 'config', sub('announce', [{ name: 'value', type: 5, value: false }]));
    await h.discord.setVoiceState(bob.id, guildId, null);
  });
});

describe('the stale-drop notice', () => {
  it('says how many messages were skipped, as a request of its own, charged to the server; the next time it is a cached clip', async () => {
    await idle();
    const before = standardRequests(h.emulator).length;
    const serverBefore = (await h.bot.context.budget.usage({ guildId, userId: guildId })).used;
    const aliceBefore = (await h.bot.context.budget.usage({ guildId, userId: alice.id })).used;
    const started = performance.now();
    const speaking = voice.waitForEvent('packet', (p) => p.guildId === guildId && !p.silent && p.receivedAt >= started, 30_000);
    const long = await h.discord.sendInteraction({
      channelId: DEFAULT_IDS.general,
      user: alice,
      name: 'say',
      locale: 'en-US',
      options: [
        {
          name: 'text',
          type: 3,
          value: 'これはとても長い読み上げです。後ろのメッセージが古くなるまで、ゆっくりと読み続けます。まだまだ続きます。',
        },
      ],
    });
    await speaking;
    // The notice says what had been dropped when it was queued (later drops wait for the next one).
    const drops: number[] = [];
    h.bot.scheduler.on('dropped', ({ items }) => drops.push(items.length));
    // Behind the long /say, none of these could be read within 3 s of arriving: each is dropped
    // before anything is paid for it (the cut holds at the moment of speaking).
    for (const content of ['一件目です', '二件目です', '三件目です', '四件目です']) {
      await h.discord.sendMessage({ channelId: DEFAULT_IDS.general, author: alice, content });
    }
    const notice = await vi
      .waitUntil(() => texts(before).find((t) => NOTICE.test(t)), { timeout: 60_000, interval: 20, message: 'the notice request' })
      .catch((e: Error) => {
        throw new Error(e.message + JSON.stringify({ sent: texts(before), stats: guildStats(h.bot.scheduler, guildId) }));
      });
    const dropped = guildStats(h.bot.scheduler, guildId).dropped;
    expect(dropped).toBeGreaterThan(0);
    expect(notice).toBe(drops[0]! > 9 ? '10件以上省略しました。' : `${drops[0]}件省略しました。`);
    await long.waitForResponse((r) => r.kind === 'editOriginal', 30_000);
    await idle();
    // Charged to the server: alice paid for her /say and what was read, not for the notices (a drop
    // after the first notice is told in a second one).
    const serverAfter = (await h.bot.context.budget.usage({ guildId, userId: guildId })).used;
    const notices = texts(before).filter((t) => NOTICE.test(t));
    expect(serverAfter - serverBefore).toBe(notices.reduce((n, t) => n + [...t].length, 0));
    expect(notices.reduce((n, t) => n + Number(/\d+/.exec(t)![0]), 0)).toBe(dropped);
    const aliceSpent = (await h.bot.context.budget.usage({ guildId, userId: alice.id })).used - aliceBefore;
    expect(aliceSpent).toBe(
      texts(before)
        .filter((t) => !NOTICE.test(t))
        .reduce((n, t) => n + [...t].length, 0),
    );

    // The same count again: played from the cache, nothing sent, nothing charged.
    const heardBefore = voice.utterances(guildId).length;
    const requestsBefore = standardRequests(h.emulator).length;
    h.bot.scheduler.emit('dropped', {
      guildId,
      audience: 'voice:test',
      items: Array.from({ length: drops[0]! }, () => ({}) as Utterance),
      reason: 'too_old',
    });
    await vi.waitUntil(() => (voice.utterances(guildId).length > heardBefore ? true : undefined), {
      timeout: 30_000,
      interval: 20,
      message: 'the notice played again',
    });
    await idle();
    expect(standardRequests(h.emulator).length).toBe(requestsBefore);
    expect((await h.bot.context.budget.usage({ guildId, userId: guildId })).used).toBe(serverAfter);
  }, 120_000);

  it('switched off, stale messages are dropped without a word', async () => {
    await command(bob, 'reading', sub('stale-notice', [{ name: 'value', type: 5, value: false }]));
    await idle();
    const heardBefore = voice.utterances(guildId).length;
    // The bot answers a drop at once (a notice is queued synchronously, or nothing): the queue
    // still empty right after it proves that nothing will be said.
    h.bot.scheduler.emit('dropped', { guildId, audience: 'voice:test', items: [{} as Utterance], reason: 'too_old' });
    expect(guildStats(h.bot.scheduler, guildId)).toMatchObject({ queued: 0, synthesizing: 0, ready: 0, playing: false });
    expect(voice.utterances(guildId).length).toBe(heardBefore);
  });
});

describe('a bot clip waiting when the bot restarts', () => {
  it("goes without a word and without a request when nobody is left in voice; members' messages are still told", async () => {
    await idle();
    const before = standardRequests(h.emulator).length;
    const clip = '7件省略しました。';
    await h.restart(undefined, async () => {
      await h.discord.setVoiceState(alice.id, guildId, null);
      const db = openDatabase(join(h.dataDir, 'bot.sqlite3'), { migrate: false });
      try {
        const row = (id: string, userId: string, kind: string, text: string, meta: object) =>
          db
            .prepare(
              `INSERT INTO pending_utterances (id, guild_id, user_id, channel_id, kind, text, lang, voice, speed, pitch, meta, enqueued_at, saved_at)
            VALUES (?, ?, ?, ?, ?, ?, 'ja', 'ja-JP-Wavenet-B', 1, 0, ?, ?, ?)`,
            )
            .run(id, guildId, userId, DEFAULT_IDS.voice, kind, text, JSON.stringify(meta), Date.now(), Date.now());
        row('clip-1', guildId, 'say', clip, {
          delivery: { kind: 'message', channelId: DEFAULT_IDS.voice, messageId: '' },
          lang: 'ja',
          botClip: true,
        });
        row('chat-1', alice.id, 'auto', '再起動前の発言', {
          delivery: { kind: 'message', channelId: DEFAULT_IDS.voice, messageId: '1' },
          lang: 'ja',
        });
      } finally {
        db.close();
      }
    });
    // The member's message is told once (1 message, not 2: the clip is nobody's), the clip is gone.
    const expected = t('ja', 'restart.not_read', { count: 1 });
    await vi.waitUntil(() => h.discord.messages.find((m) => m.channelId === DEFAULT_IDS.voice && m.content === expected), {
      timeout: 10_000,
      interval: 20,
      message: 'the not-read notice for one message',
    });
    // Every restored row handled (none left on disk, the queue idle): a request for the clip would
    // have been sent by now.
    const db = openDatabase(join(h.dataDir, 'bot.sqlite3'), { migrate: false });
    try {
      await vi.waitUntil(() => db.prepare('SELECT COUNT(*) FROM pending_utterances').pluck().get() === 0, {
        timeout: 10_000,
        interval: 20,
        message: 'the restored rows handled',
      });
      await idle();
      expect(texts(before)).not.toContain(clip);
    } finally {
      db.close();
    }
  }, 60_000);
});
