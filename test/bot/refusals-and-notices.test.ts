import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEFAULT_IDS } from '@yomiage/local-discord';
import { SHORT_TONES, standardRequests, startHarness, type Harness } from '../support/bot-harness.ts';
import { systemClock, type Clock } from '../../src/util/clock.ts';

// What members are told and what is spent, end to end in process (real discord.js, the loopback Discord, the emulator):
// commands do what they say, nothing disappears without a word, no noise, no spend for nobody.
const alice = { id: DEFAULT_IDS.alice, username: 'alice' };
const bob = { id: DEFAULT_IDS.bob, username: 'bob' }; // Moderator role: Manage Server
const EPHEMERAL = 64;
const guildId = DEFAULT_IDS.guild;

/** Discord's clock, which a test can move on (the interaction token's 15 minutes). */
let skewMs = 0;
const discordClock: Clock = { now: () => Date.now() + skewMs, sleep: systemClock.sleep };
/** The bot's clock, moved on alone: the bot must not even try a token it knows is too old. */
let botSkewMs = 0;
const botClock: Clock = { now: () => Date.now() + botSkewMs, sleep: systemClock.sleep };

let h: Harness;
beforeAll(async () => {
  h = await startHarness({
    env: { USER_MONTHLY_CHARS: '60' },
    emulator: { ...SHORT_TONES, jobs: { pendingMs: 600, runningMs: 300, minPollAfterMs: 100, pollAfterMs: 100 } },
    discord: { clock: discordClock }, // interaction tokens expire after 15 minutes of this clock
    bot: { clock: botClock },
  });
  for (const [channelId, mp3] of [
    [DEFAULT_IDS.general, false],
    [DEFAULT_IDS.chat, true],
  ] as const) {
    const add = await h.discord.sendInteraction({
      channelId,
      user: bob,
      name: 'autoread',
      locale: 'en-US',
      options: [{ name: 'add', type: 1, options: [{ name: 'mp3', type: 5, value: mp3 }] }],
    });
    await add.waitForResponse((r) => r.kind === 'callback');
  }
});
afterAll(async () => h?.close());

const texts = (from = 0) => standardRequests(h.emulator).slice(from);
const botMessages = (channelId: string) => h.discord.messages.filter((m) => m.channelId === channelId && m.source === 'channel');

describe('no spend when nobody listens', () => {
  it('an auto-read channel is not read while the bot is in no voice channel, unless it posts MP3s', async () => {
    const before = standardRequests(h.emulator).length;
    await h.discord.sendMessage({ channelId: DEFAULT_IDS.general, author: alice, content: '誰も聞いていない発言' });
    // A later message in the MP3 channel: the queue is FIFO, so once it is sent the first one would have been.
    await h.discord.sendMessage({ channelId: DEFAULT_IDS.chat, author: alice, content: 'こちらはMP3で投稿' });
    await vi.waitUntil(() => texts(before).some((r) => r.text.includes('こちらはMP3で投稿')), {
      timeout: 20_000,
      message: 'the MP3 channel',
    });
    expect(texts(before).some((r) => r.text.includes('誰も聞いていない'))).toBe(false);
    await vi.waitUntil(() => botMessages(DEFAULT_IDS.chat).some((m) => m.attachments.length > 0), {
      timeout: 20_000,
      message: 'the MP3 post',
    });
  });
});

describe('names after /clear', () => {
  it('after /clear the next message is named again, as the reader starts afresh', async () => {
    const ivy = { id: '1000000000000000055', username: 'ivy' };
    const said = async (content: string) => {
      const before = standardRequests(h.emulator).length;
      await h.discord.sendMessage({ channelId: DEFAULT_IDS.chat, author: ivy, content });
      return vi.waitUntil(() => texts(before).find((r) => r.text.includes(content))?.text, { timeout: 20_000, message: content });
    };
    expect(await said('一つ目の発言')).toBe('ivy、一つ目の発言');
    expect(await said('二つ目の発言')).toBe('二つ目の発言'); // the same author again: not named twice
    const clear = await h.discord.sendInteraction({ channelId: DEFAULT_IDS.chat, user: bob, name: 'clear', locale: 'en-US' });
    await clear.waitForResponse((r) => r.kind === 'callback');
    expect(await said('三つ目の発言')).toBe('ivy、三つ目の発言');
  });
});

describe('budget refusals of auto-read', () => {
  it('a member out of characters gets one public notice, then reactions, not a reply per line', async () => {
    const erin = { id: '1000000000000000066', username: 'erin' };
    const before = standardRequests(h.emulator).length;
    await h.discord.sendMessage({
      channelId: DEFAULT_IDS.chat,
      author: erin,
      content: 'これは五十文字近くある長い最初のメッセージです、まだ予算は足りていますがもうすぐなくなります',
    });
    await vi.waitUntil(() => texts(before).some((r) => r.text.includes('最初のメッセージ')), {
      timeout: 20_000,
      message: 'the first message',
    });
    const refused: string[] = [];
    for (let i = 0; i < 5; i++)
      refused.push(
        (
          await h.discord.sendMessage({
            channelId: DEFAULT_IDS.chat,
            author: erin,
            content: `予算を超えたあとのメッセージその${i + 1}です`,
          })
        ).id,
      );
    const notices = () =>
      botMessages(DEFAULT_IDS.chat).filter((m) => m.content.includes('上限') && refused.includes(m.messageReference?.message_id ?? ''));
    const reacted = () => h.discord.reactions.filter((r) => refused.includes(r.messageId));
    await vi.waitUntil(() => notices().length + reacted().length >= 5, { timeout: 20_000, message: 'every refused line answered' });
    expect(notices()).toHaveLength(1);
    expect(reacted()).toHaveLength(4);
  });
});

describe('voices are checked before they are saved or used', () => {
  const confirmations = (voice: string, from: number) => texts(from).filter((r) => r.voice === voice);

  it('/config voice with an unknown id: one short request, refused, nothing saved, the reply names the voice', async () => {
    const before = standardRequests(h.emulator).length;
    const saved = h.bot.context.repos.guildSettings.get(guildId).voice;
    const i = await h.discord.sendInteraction({
      channelId: DEFAULT_IDS.general,
      user: bob,
      name: 'config',
      locale: 'en-US',
      options: [{ name: 'voice', type: 1, options: [{ name: 'value', type: 3, value: 'no-such-voice' }] }],
    });
    const reply = await i.waitForResponse((r) => r.kind === 'editOriginal', 20_000);
    expect(String(reply.data?.content)).toContain('"no-such-voice" is not offered');
    expect(String(reply.data?.content)).toContain('/config voice');
    expect(h.bot.context.repos.guildSettings.get(guildId).voice).toBe(saved);
    expect(confirmations('no-such-voice', before)).toEqual([{ text: 'あ', voice: 'no-such-voice', speed: 1, pitch: 0 }]);
  });

  it('/config voice with a voice the service has but the known list lacks: confirmed, saved, charged to the server', async () => {
    const before = standardRequests(h.emulator).length;
    const spent = (await h.bot.context.budget.usage({ guildId })).used;
    const i = await h.discord.sendInteraction({
      channelId: DEFAULT_IDS.general,
      user: bob,
      name: 'config',
      locale: 'en-US',
      options: [{ name: 'voice', type: 1, options: [{ name: 'value', type: 3, value: 'ja-JP-Standard-A' }] }],
    });
    const reply = await i.waitForResponse((r) => r.kind === 'editOriginal', 20_000);
    expect(String(reply.data?.content)).toContain('ja-JP-Standard-A');
    expect(h.bot.context.repos.guildSettings.get(guildId).voice).toBe('ja-JP-Standard-A');
    expect(confirmations('ja-JP-Standard-A', before)).toHaveLength(1);
    expect((await h.bot.context.budget.usage({ guildId })).used).toBe(spent + 1);
    await h.bot.context.repos.guildSettings.update(guildId, { voice: 'ja-JP-Wavenet-B' });
  });

  it('/voice set with an unknown id: refused ephemerally, nothing saved', async () => {
    const i = await h.discord.sendInteraction({
      channelId: DEFAULT_IDS.general,
      user: alice,
      name: 'voice',
      locale: 'ja',
      options: [{ name: 'set', type: 1, options: [{ name: 'voice', type: 3, value: 'nope-voice' }] }],
    });
    const reply = await i.waitForResponse((r) => r.kind === 'editOriginal', 20_000);
    expect(i.responses()[0]).toMatchObject({ kind: 'callback', type: 5, data: { flags: EPHEMERAL } });
    expect(String(reply.data?.content)).toContain('声「nope-voice」');
    expect(h.bot.context.repos.userSettings.get(guildId, alice.id).voice).toBeNull();
  });

  it('/say voice: with an unknown id: the reply names the voice and what admins can run', async () => {
    const i = await h.discord.sendInteraction({
      channelId: DEFAULT_IDS.general,
      user: alice,
      name: 'say',
      locale: 'ja',
      options: [
        { name: 'text', type: 3, value: 'テスト' },
        { name: 'voice', type: 3, value: 'bad-voice-x' },
      ],
    });
    const reply = await i.waitForResponse((r) => r.kind === 'editOriginal' && !String(r.data?.content).includes('待ち'), 20_000);
    expect(String(reply.data?.content)).toContain('声「bad-voice-x」');
    // Named as a Japanese client shows /config voice.
    expect(String(reply.data?.content)).toContain('/設定 声');
    expect(reply.files).toHaveLength(0);
  });

  it('a voice saved before these checks that the service refuses: the notice names it, never 「」', async () => {
    await h.bot.context.repos.userSettings.set(guildId, '1000000000000000088', { voice: 'old-bad-voice' });
    const frank = { id: '1000000000000000088', username: 'frank' };
    const { id } = await h.discord.sendMessage({ channelId: DEFAULT_IDS.chat, author: frank, content: '古い声の設定で話します' });
    const notice = await vi.waitUntil(() => botMessages(DEFAULT_IDS.chat).find((m) => m.messageReference?.message_id === id), {
      timeout: 20_000,
      message: 'the failure notice',
    });
    expect(notice.content).toContain('声「old-bad-voice」');
    expect(notice.content).toContain('/マイボイス 設定'); // /voice set, as a Japanese client shows it
  });
});

describe('nothing disappears without a word', () => {
  it('/clear gives every queued /say a final answer saying why', async () => {
    h.emulator.setLatency('standard', 1_500);
    try {
      const says = [];
      for (const [n, user] of [
        ['一', alice],
        ['二', bob],
        ['三', { id: '1000000000000000099', username: 'gina' }],
      ] as const) {
        const i = await h.discord.sendInteraction({
          channelId: DEFAULT_IDS.general,
          user,
          name: 'say',
          locale: 'en-US',
          options: [{ name: 'text', type: 3, value: `クリアされる発言${n}` }],
        });
        says.push(i);
        // Queued behind the first (its request takes 1.5 s): the bot edits in its position.
        if (says.length > 1) await i.waitForResponse((r) => String(r.data?.content).startsWith('Queued'));
      }
      const clear = await h.discord.sendInteraction({ channelId: DEFAULT_IDS.general, user: bob, name: 'clear', locale: 'en-US' });
      expect(String((await clear.waitForResponse((r) => r.kind === 'callback')).data?.content)).toMatch(/Cleared [1-9]/);
      for (const i of says) {
        const final = await i.waitForResponse((r) => String(r.data?.content).includes('cleared with /clear'), 10_000);
        expect(final.files).toHaveLength(0);
      }
    } finally {
      h.emulator.setLatency('standard', 0);
    }
  });

  it('a /say answered after 14 minutes (its token about to expire) goes to the channel, not to the reply', async () => {
    h.emulator.setLatency('standard', 1_000);
    try {
      const i = await h.discord.sendInteraction({
        channelId: DEFAULT_IDS.general,
        user: alice,
        name: 'say',
        locale: 'en-US',
        options: [{ name: 'text', type: 3, value: '遅れて届く音声' }],
      });
      await i.waitForResponse((r) => r.kind === 'callback');
      const posted = h.discord.waitForMessage(
        (m) =>
          m.source === 'channel' && m.channelId === DEFAULT_IDS.general && m.attachments.length > 0 && m.content.includes(`<@${alice.id}>`),
        20_000,
      );
      botSkewMs = 14 * 60_000 + 30_000;
      expect((await posted).content).toContain('Here is the audio');
      expect(i.responses().filter((r) => r.kind === 'editOriginal' && r.files.length > 0)).toEqual([]);
    } finally {
      botSkewMs = 0;
      h.emulator.setLatency('standard', 0);
    }
  });

  it('/narrate that outlives the 15-minute interaction token is delivered in the channel', async () => {
    const i = await h.discord.sendInteraction({
      channelId: DEFAULT_IDS.general,
      user: bob,
      name: 'narrate',
      locale: 'en-US',
      options: [
        { name: 'text', type: 3, value: 'A very long story that takes its time.' },
        { name: 'voice', type: 3, value: 'Sam' },
      ],
    });
    await i.waitForResponse((r) => r.kind === 'callback');
    skewMs = 16 * 60_000; // Discord's side: the token is now past its 15 minutes
    try {
      const posted = await h.discord.waitForMessage(
        (m) => m.source === 'channel' && m.channelId === DEFAULT_IDS.general && m.attachments.length > 0,
        30_000,
      );
      expect(posted.content).toContain(`<@${bob.id}>`);
      expect(posted.content).toContain('Sam');
      expect(posted.pings.users).toEqual([]);
    } finally {
      skewMs = 0;
    }
  });

  it('/narrate whose audio Discord refused is not marked delivered: the next start delivers it', async () => {
    // The bot's clock says the token is too old, so the answer goes to the channel, which refuses it once.
    botSkewMs = 14 * 60_000 + 30_000;
    const hana = { id: '1000000000000000077', username: 'hana' }; // a member with characters left
    const channelPost = /^\/channels\/\d+\/messages$/;
    h.discord.injectFault({ method: 'POST', path: channelPost, status: 403, count: 1 });
    try {
      const i = await h.discord.sendInteraction({
        channelId: DEFAULT_IDS.general,
        user: hana,
        name: 'narrate',
        locale: 'en-US',
        options: [
          { name: 'text', type: 3, value: 'A story whose first delivery fails.' },
          { name: 'voice', type: 3, value: 'Kai' },
        ],
      });
      await i.waitForResponse((r) => r.kind === 'callback');
      const refused = await h.discord.waitForRequest((r) => r.method === 'POST' && channelPost.test(r.path) && r.status === 403, 30_000);
      expect(refused).toMatchObject({ method: 'POST', status: 403 });
      // Ended at the service, its audio not delivered: still the bot's to deliver.
      await vi.waitUntil(
        () => h.bot.context.repos.jobs.listUnfinished().some((j) => j.state === 'succeeded' && j.request.voice === 'Kai'),
        { timeout: 5_000, message: 'the job left undelivered' },
      );
      const posted = h.discord.waitForMessage(
        (m) => m.source === 'channel' && m.channelId === DEFAULT_IDS.general && m.attachments.length > 0 && m.content.includes('Kai'),
        30_000,
      );
      await h.restart();
      expect((await posted).content).toContain(`<@${hana.id}>`);
      await vi.waitUntil(() => h.bot.context.repos.jobs.listUnfinished().length === 0, {
        timeout: 5_000,
        message: 'the job marked delivered',
      });
    } finally {
      botSkewMs = 0;
    }
  });
});
