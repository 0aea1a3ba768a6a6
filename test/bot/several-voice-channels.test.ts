import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { APIApplicationCommandInteractionDataOption } from 'discord.js';
import { startEmulator, type Emulator } from '@yomiage/tts-emulator';
import {
  DEFAULT_IDS,
  defaultGuild,
  startFakeDiscord,
  startFakeVoiceServer,
  type FakeDiscord,
  type FakeVoiceServer,
} from '@yomiage/local-discord';
import type { InteractionResponse } from '@yomiage/local-discord/types';
import { mp3DurationOf } from '../support/bot-harness.ts';
import { startChildBot, type ChildBot, type LogLine, pendingRows } from '../support/child-bot.ts';
import { decodedMs, e2eeProblems, playedFrames } from '../support/dave-check.ts';

// Several voice channels of one server read at once, through `npm start` as a child process with
// two bot accounts in the server (the main one and an extra) and a third account not in it. Alice
// listens in #Voice (bound to #general), Bob in #Voice 2 (bound to #text-2). Each channel's lines
// are told apart by their text in the emulator's request log (赤 in #general, 青 in #text-2, each
// blue line long enough that its audio is clearly longer than any red one): every frame a listener
// decrypts comes from a request of its own channel, from its own channel's account. One start,
// one restart.
const guildId = DEFAULT_IDS.guild;
const VOICE_A = DEFAULT_IDS.voice;
const TEXT_A = DEFAULT_IDS.general;
const VOICE_B = '1100000000000000104';
const TEXT_B = '1100000000000000105';
const VOICE_C = '1100000000000000106';
const EXTRA = { id: '1200000000000000002', username: 'yomiage-2' };
const OUTSIDER = { id: '1200000000000000003', username: 'yomiage-3' };
const alice = { id: DEFAULT_IDS.alice, username: 'alice' };
const bob = { id: DEFAULT_IDS.bob, username: 'bob' };
const owner = { id: DEFAULT_IDS.owner, username: 'owner' };
const RED = '赤';
const BLUE = '青';

/** Who listens where, with which account and which lines. */
const SESSIONS = [
  { voice: VOICE_A, text: TEXT_A, account: DEFAULT_IDS.bot, listener: alice, other: bob, mark: RED },
  { voice: VOICE_B, text: TEXT_B, account: EXTRA.id, listener: bob, other: alice, mark: BLUE },
] as const;

let emulator: Emulator;
let discord: FakeDiscord;
let voice: FakeVoiceServer;
let dataDir: string;
let bot: ChildBot;

const guild = defaultGuild();
guild.channels.push(
  { id: VOICE_B, name: 'Voice 2', type: 2, position: 1 },
  { id: TEXT_B, name: 'text-2', type: 0, position: 2, parentId: '1100000000000000100' },
  { id: VOICE_C, name: 'Voice 3', type: 2, position: 2 },
);

async function start(): Promise<ChildBot> {
  const tokens = discord.bots.slice(1).map((b) => b.token);
  bot = await startChildBot({
    discord,
    emulator,
    dataDir,
    caCertPem: voice.caCertPem,
    env: { AUTO_READ_MAX_AGE_SECONDS: '600', EXTRA_DISCORD_TOKENS: tokens.join(',') },
  });
  return bot;
}

async function command(
  user: { id: string; username: string },
  channelId: string,
  name: string,
  options: APIApplicationCommandInteractionDataOption[] = [],
): Promise<InteractionResponse> {
  const i = await discord.sendInteraction({ channelId, user, name, locale: 'en-US', options });
  const answered = (r: InteractionResponse) => (r.kind === 'callback' || r.kind === 'editOriginal') && r.data?.content !== undefined;
  return i.waitForResponse(answered, 30_000);
}

beforeAll(async () => {
  voice = await startFakeVoiceServer();
  [emulator, discord] = await Promise.all([
    startEmulator({ control: true }),
    startFakeDiscord({
      guilds: [guild],
      voiceServer: voice,
      extraBots: [
        { user: EXTRA, guildIds: [guildId] },
        { user: OUTSIDER, guildIds: [] },
      ],
    }),
  ]);
  dataDir = mkdtempSync(join(tmpdir(), 'yomiage-several-voice-'));
  await start();
  // Speed 4: the emulator's clips are a quarter as long, and voice plays in real time.
  expect(
    String(
      (await command(bob, TEXT_A, 'config', [{ name: 'speed', type: 1, options: [{ name: 'value', type: 10, value: 4 }] }])).data?.content,
    ),
  ).toContain('speed');
  for (const s of SESSIONS) {
    await discord.setVoiceState(s.listener.id, guildId, s.voice);
    voice.simulateListener({ guildId, channelId: s.voice, userId: s.listener.id });
    expect(String((await command(s.listener, s.text, 'join')).data?.content)).toContain('Joined');
  }
  await Promise.all(SESSIONS.map((s) => voice.waitForDave(guildId, 20_000, s.voice)));
}, 90_000);

afterAll(async () => {
  await bot?.stop('SIGKILL');
  await Promise.all([emulator?.close(), discord?.close(), voice?.close()]);
  rmSync(dataDir, { recursive: true, force: true });
});

const red = (n: string) => `${RED}${n}`;
// Long enough that its clip (over 40 characters at speed 4) is clearly longer than a red line's (at most 0.6 s).
const blue = (n: string) => `${BLUE}${n}、二つ目のボイスチャンネルだけで聞こえる長めの発言をここに書いておきます`;

async function say(mark: string, texts: readonly string[]): Promise<void> {
  const s = SESSIONS.find((x) => x.mark === mark)!;
  for (const content of texts) await discord.sendMessage({ channelId: s.text, author: s.listener, content });
}

/** Each text's clip length, measured once (the measurements share the emulator's rate window for their address). */
const measured = new Map<string, Promise<number>>();
function clipMs(text: string): Promise<number> {
  if (!measured.has(text)) measured.set(text, mp3DurationOf(emulator, text));
  return measured.get(text)!;
}

/** The bot's standard requests (not the test's own, asked again from another address to measure a clip). */
function botTexts(): Array<{ text: string }> {
  return emulator
    .requests()
    .filter((r) => r.target === 'standard' && r.headers['x-forwarded-for'] === undefined)
    .map((r) => r.body as { text: string });
}

/**
 * Every line of `lines` was requested and delivered, and what each channel heard since `since`
 * was its own: no request mixes the two channels' lines; each channel heard a clip for each of its
 * requests, each from its own account, end-to-end encrypted to its listener and never offered to
 * the other one, and each as long as one of its own channel's requests and none of the other's
 * (so none carries the other channel's text).
 */
async function expectEachChannelHearsOnlyItsOwn(lines: readonly string[], since: { requests: number; at: number }): Promise<void> {
  const texts = () => botTexts().map((r) => r.text);
  await vi.waitUntil(() => lines.every((l) => texts().some((t) => t.includes(l))), { timeout: 40_000, message: 'every line requested' });
  await vi.waitUntil(() => pendingRows(dataDir) === 0, { timeout: 40_000, message: 'every line delivered' });
  const requestedSince = (mark: string) =>
    texts()
      .slice(since.requests)
      .filter((t) => t.includes(mark));
  const heardIn = (channelId: string) => voice.utterances(guildId, { channelId }).filter((u) => u.start >= since.at && u.complete);
  await vi.waitUntil(() => SESSIONS.every((s) => heardIn(s.voice).length >= requestedSince(s.mark).length), {
    timeout: 20_000,
    message: 'every request heard',
  });
  expect(texts().filter((t) => t.includes(RED) && t.includes(BLUE))).toEqual([]);
  const durations = async (mark: string) => Promise.all([...new Set(texts().filter((t) => t.includes(mark)))].map((t) => clipMs(t)));
  for (const s of SESSIONS) {
    const [ownMs, otherMs] = await Promise.all([durations(s.mark), durations(s.mark === RED ? BLUE : RED)]);
    const heard = heardIn(s.voice);
    expect(heard.length, `clips heard in ${s.voice}`).toBeGreaterThanOrEqual(Math.max(1, requestedSince(s.mark).length));
    for (const u of heard) {
      expect(u.userId).toBe(s.account);
      const frames = playedFrames(voice, u);
      expect(e2eeProblems(frames, [s.listener.id])).toEqual([]);
      expect(frames.filter((p) => p.heardBy[s.other.id] !== undefined)).toEqual([]);
      const ms = decodedMs(frames);
      // Within 3% (at least 40 ms): the first frames after a rejoin may be cut while the call's encryption settles.
      const near = (d: number) => Math.abs(d - ms) <= Math.max(40, d * 0.03);
      expect(ownMs.some(near), `${Math.round(ms)} ms is one of ${ownMs.join(', ')} ms`).toBe(true);
      expect(otherMs.some(near), `${Math.round(ms)} ms is none of ${otherMs.join(', ')} ms`).toBe(false);
    }
  }
}

describe('two accounts read two voice channels of one server', () => {
  it("each listener's decrypted frames carry only its own channel's text, from its own account", async () => {
    const since = { requests: botTexts().length, at: performance.now() };
    // Interleaved, while the service is slow: both channels have lines waiting at once.
    emulator.setLatency('standard', 800);
    const lines: string[] = [];
    for (const n of ['一', '二', '三']) {
      await say(RED, [red(n)]);
      await say(BLUE, [blue(n)]);
      lines.push(red(n), blue(n));
    }
    emulator.setLatency('standard', 0);
    await expectEachChannelHearsOnlyItsOwn(lines, since);
  }, 90_000);

  it('/skip in one voice channel stops its clip and leaves the other playing to its end', async () => {
    const at = performance.now();
    const long = (mark: string) => `${mark}スキップの試験。${'長い文章をゆっくり読み上げます、'.repeat(5)}`;
    const requestOf = (mark: string) => botTexts().find((r) => r.text.includes(`${mark}スキップの試験`))!.text;
    await say(BLUE, [long(BLUE)]);
    await say(RED, [long(RED)]);
    const playing = (channelId: string) => voice.utterances(guildId, { channelId }).find((u) => u.start >= at && u.durationMs > 500);
    await vi.waitUntil(() => playing(VOICE_A) && playing(VOICE_B), { timeout: 20_000, message: 'both channels playing' });
    // Alice (no Move Members) in #Voice: her channel's session.
    expect(String((await command(alice, TEXT_A, 'skip')).data?.content)).toContain('Skipped');
    const [skipped, kept] = await Promise.all(
      [VOICE_A, VOICE_B].map((channelId) =>
        voice.waitForAudio({ guildId, channelId, startedAfter: at, minDurationMs: 500, timeoutMs: 20_000 }),
      ),
    );
    expect(skipped!.durationMs).toBeLessThan((await clipMs(requestOf(RED))) * 0.7);
    const keptMs = await clipMs(requestOf(BLUE));
    expect(Math.abs(kept!.durationMs - keptMs) / keptMs).toBeLessThan(0.1);
  }, 60_000);

  it('a third /join while both accounts of the server are busy answers privately with the invite link of the one not in it', async () => {
    await discord.setVoiceState(owner.id, guildId, VOICE_C);
    const reply = await command(owner, DEFAULT_IDS.chat, 'join');
    expect(reply.kind).toBe('callback');
    expect(Number(reply.data?.flags ?? 0) & 64).toBe(64);
    const link = String(reply.data?.content).match(/https:\/\/discord\.com\/oauth2\/authorize\?\S+/)?.[0];
    expect(link, String(reply.data?.content)).toBeDefined();
    expect(Object.fromEntries(new URL(link!).searchParams)).toMatchObject({
      client_id: OUTSIDER.id,
      scope: 'bot applications.commands',
      guild_id: guildId,
    });
    // Nothing changed: no account moved, none joined the third channel.
    expect(discord.botVoiceStates.filter((s) => s.channelId === VOICE_C)).toEqual([]);
  });

  it('SIGTERM with lines waiting in both channels, then a restart: both sessions are rejoined and each speaks its own', async () => {
    emulator.setLatency('standard', 3_000);
    await say(RED, [red('再一'), red('再二')]);
    await say(BLUE, [blue('再一'), blue('再二')]);
    await vi.waitUntil(() => pendingRows(dataDir) === 4, { timeout: 20_000, message: 'four accepted' });
    expect(await bot.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    const since = { requests: botTexts().length, at: performance.now() };
    const rejoined = SESSIONS.map((s) =>
      discord.waitForBotVoiceState((v) => v.channelId === s.voice && (v.botId ?? DEFAULT_IDS.bot) === s.account, 30_000),
    );
    await start();
    await Promise.all(rejoined);
    const ready = bot.logs.find((l) => l.msg === 'bot ready') as LogLine & { restored: number; rejoined: number };
    expect(ready).toMatchObject({ restored: 4, rejoined: 2 });
    emulator.setLatency('standard', 0);
    await expectEachChannelHearsOnlyItsOwn([red('再一'), red('再二'), blue('再一'), blue('再二')], since);
    // One IP, one rate window for every account: the service never answered 429.
    expect(
      emulator.requests().filter((r) => r.target === 'standard' && r.status === 429 && r.headers['x-forwarded-for'] === undefined),
    ).toEqual([]);
  }, 120_000);
  it("a member joining one channel is announced in that channel's session only; an account leaves when its last listener does, and auto-join brings a free one", async () => {
    expect(
      String(
        (await command(bob, TEXT_A, 'config', [{ name: 'announce', type: 1, options: [{ name: 'value', type: 5, value: true }] }])).data
          ?.content,
      ),
    ).toBeTruthy();
    const since = { requests: botTexts().length, at: performance.now() };
    await discord.setVoiceState(owner.id, guildId, VOICE_B);
    await vi.waitUntil(
      () =>
        botTexts()
          .slice(since.requests)
          .some((r) => r.text.includes('入室')),
      {
        timeout: 20_000,
        message: 'the announcement requested',
      },
    );
    // Said in Voice 2 by its own account, to Bob; nothing in #Voice.
    const heard = await voice.waitForAudio({ guildId, channelId: VOICE_B, startedAfter: since.at, minDurationMs: 200, timeoutMs: 20_000 });
    expect(heard.userId).toBe(EXTRA.id);
    expect(e2eeProblems(playedFrames(voice, heard), [bob.id])).toEqual([]);
    expect(voice.utterances(guildId, { channelId: VOICE_A }).filter((u) => u.start >= since.at)).toEqual([]);
    // Everyone leaves Voice 2: its account leaves; the main account stays in #Voice with Alice.
    const left = discord.waitForBotVoiceState((v) => v.botId === EXTRA.id && v.channelId === null, 20_000);
    await discord.setVoiceState(owner.id, guildId, null);
    await discord.setVoiceState(bob.id, guildId, null);
    await left;
    expect(discord.botVoiceStates.filter((v) => (v.botId ?? DEFAULT_IDS.bot) === DEFAULT_IDS.bot).at(-1)?.channelId).toBe(VOICE_A);
    // Auto-join set on Voice 2: the first member to enter brings the free account there; the main one stays.
    const autoJoin = [{ name: 'auto-join', type: 1, options: [{ name: 'channel', type: 7, value: VOICE_B }] }];
    expect(String((await command(bob, TEXT_A, 'config', autoJoin)).data?.content)).toContain(VOICE_B);
    const joined = discord.waitForBotVoiceState((v) => v.botId === EXTRA.id && v.channelId === VOICE_B, 20_000);
    await discord.setVoiceState(bob.id, guildId, VOICE_B);
    await joined;
    expect(discord.botVoiceStates.filter((v) => (v.botId ?? DEFAULT_IDS.bot) === DEFAULT_IDS.bot).at(-1)?.channelId).toBe(VOICE_A);
  }, 60_000);
});
