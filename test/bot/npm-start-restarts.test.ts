import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startEmulator, type Emulator } from '@yomiage/tts-emulator';
import { startChildBot, type ChildBot, type LogLine, pendingRows } from '../support/child-bot.ts';
import { DEFAULT_IDS, startFakeDiscord, type FakeDiscord } from '@yomiage/local-discord';
import { startFakeVoiceServer, type FakeVoiceServer, type Utterance } from '@yomiage/local-discord';
import { e2eeProblems, playedFrames } from '../support/dave-check.ts';
import { mp3DurationOf, standardRequests } from '../support/bot-harness.ts';

// The product is what `npm start` runs. The real entry point runs as a child process
// (its own environment, no .env, DATA_DIR of its own) against the loopback Discord, the fake TLS
// voice server and the emulator, which run here; each test checks what a server would notice.
// One story, so the bot starts only three times: first run, after SIGTERM, after kill -9.
// The call runs DAVE as on Discord: alice's client (a simulated listener) is in it, and every
// frame the bot sends must reach her end-to-end encrypted, the first ones after each rejoin too.
// The call reads two text channels (a member in it adds the second with /join's button), and a
// restart keeps both.
const alice = { id: DEFAULT_IDS.alice, username: 'alice' };
const bob = { id: DEFAULT_IDS.bob, username: 'bob' };
const guildId = DEFAULT_IDS.guild;
const owner = { id: DEFAULT_IDS.owner, username: 'owner' };
const GAMES = '1100000000000000121';

let emulator: Emulator;
let discord: FakeDiscord;
let voice: FakeVoiceServer;
let dataDir: string;
let bot: ChildBot;

async function start(): Promise<ChildBot> {
  bot = await startChildBot({ discord, emulator, dataDir, caCertPem: voice.caCertPem, env: { AUTO_READ_MAX_AGE_SECONDS: '600' } });
  return bot;
}

beforeAll(async () => {
  voice = await startFakeVoiceServer();
  [emulator, discord] = await Promise.all([
    startEmulator({ control: true, jobs: { pendingMs: 200, runningMs: 200, minPollAfterMs: 100, pollAfterMs: 100 } }),
    startFakeDiscord({ voiceEndpoint: () => voice.endpoint }),
  ]);
  discord.guilds[0]!.channels.push({ id: GAMES, name: 'games', type: 0 });
  dataDir = mkdtempSync(join(tmpdir(), 'yomiage-process-'));
  await start();
  // The server reads at speed 4: the emulator's clips are a quarter as long, and voice plays in real time.
  const speed = await discord.sendInteraction({
    channelId: DEFAULT_IDS.general,
    user: bob,
    name: 'config',
    locale: 'en-US',
    options: [{ name: 'speed', type: 1, options: [{ name: 'value', type: 10, value: 4 }] }],
  });
  expect(String((await speed.waitForResponse((r) => r.kind === 'callback')).data?.content)).toContain('speed');
}, 60_000);
afterAll(async () => {
  await bot?.stop('SIGKILL');
  await Promise.all([emulator?.close(), discord?.close(), voice?.close()]);
  rmSync(dataDir, { recursive: true, force: true });
});

const readyLog = (b: ChildBot) => b.logs.find((l) => l.msg === 'bot ready') as LogLine & { restored: number; rejoined: number };

/** bob (Manage Server) sets the server's freshness horizon (/reading) and longest line read (/config). */
async function settings(o: { freshness: number; maxLength: number }): Promise<void> {
  for (const [name, sub, value] of [
    ['reading', 'freshness', o.freshness],
    ['config', 'max-length', o.maxLength],
  ] as const) {
    const options = [{ name: sub, type: 1, options: [{ name: sub === 'freshness' ? 'seconds' : 'value', type: 4, value }] }];
    const i = await discord.sendInteraction({ channelId: DEFAULT_IDS.general, user: bob, name, locale: 'en-US', options });
    await i.waitForResponse((r) => r.kind === 'callback');
  }
}

/** `n` kana in no run of one character (a run would be read shorter: text.ts caps runs), from `from` on. */
const kana = (n: number, from: number) =>
  Array.from({ length: n }, (_, i) => 'あいうえおかきくけこさしすせそたちつてとなにぬねのはひふへほまみむめも'[(from + i * 7) % 35]).join(
    '',
  );

/** Every sound frame of `u`, from the first to speaking off, was end-to-end encrypted and alice decrypted it. */
function expectE2ee(u: Utterance): void {
  expect(u.plainFrames, 'frames without DAVE framing').toBe(0);
  expect(e2eeProblems(playedFrames(voice, u), [alice.id])).toEqual([]);
}

/** Sends `texts` as alice in #general while the service is slow, and waits until all are accepted. */
async function burst(texts: string[]): Promise<void> {
  emulator.setLatency('standard', 3_000);
  for (const content of texts) await discord.sendMessage({ channelId: DEFAULT_IDS.general, author: alice, content });
  await vi.waitUntil(() => pendingRows(dataDir) === texts.length, { timeout: 20_000, message: `${texts.length} accepted` });
}

/** After a restart: every text reaches the service again, and what comes back is played in voice. */
async function spokenAfterRestart(texts: string[], since: { requests: number; at: number }): Promise<void> {
  emulator.setLatency('standard', 0);
  const requests = await vi.waitUntil(
    () => {
      const sent = standardRequests(emulator)
        .slice(since.requests)
        .map((r) => r.text);
      return texts.every((t) => sent.some((s) => s.includes(t))) ? sent : undefined;
    },
    { timeout: 30_000, message: 'every restored message requested' },
  );
  // Each request is one utterance in voice: wait until all of them were heard to the end.
  const heard = await vi.waitUntil(
    () => {
      const us = voice.utterances(guildId).filter((u) => u.start >= since.at && u.complete);
      return us.length >= requests.length ? us : undefined;
    },
    { timeout: 30_000, message: 'the restored messages heard' },
  );
  // Played at once after the rejoin, before any test waited for DAVE: encrypted all the same.
  heard.forEach(expectE2ee);
  await vi.waitUntil(() => pendingRows(dataDir) === 0, { timeout: 10_000, message: 'nothing left on disk' });
}

const requested = (from: number, text: string) =>
  standardRequests(emulator)
    .slice(from)
    .some((r) => r.text.includes(text));

/** A slash command by `user` in `channelId` (ja): its first answer. */
async function command(user: { id: string; username: string }, name: string, channelId: string) {
  const i = await discord.sendInteraction({ channelId, user, name, locale: 'ja' });
  return i.waitForResponse((r) => r.kind === 'callback', 20_000);
}

/** Clicks the button labelled `label` of the question `asked` (message `messageId`); the click's answer. */
async function click(messageId: string, asked: { data: Record<string, unknown> | null }, label: string, channelId: string) {
  const rows = (asked.data?.components as Array<{ components: Array<{ custom_id: string; label: string }> }>) ?? [];
  const button = rows.flatMap((row) => row.components).find((b) => b.label === label);
  expect(button, label).toBeDefined();
  const component = { messageId, customId: button!.custom_id };
  const c = await discord.sendInteraction({ type: 3, channelId, user: alice, name: '', locale: 'ja', component });
  return c.waitForResponse((r) => r.kind === 'callback', 20_000);
}

/** Alice, in the call, adds `channelId` with /join typed there and its button; the channel is told (ja). */
async function alsoRead(channelId: string): Promise<void> {
  const join = await discord.sendInteraction({ channelId, user: alice, name: 'join', locale: 'ja' });
  const asked = await join.waitForResponse((r) => r.kind === 'callback', 20_000);
  expect(asked.data?.flags).toBe(64);
  const added = await click(join.original()!.id, asked, 'このチャンネルも読み上げる', channelId);
  expect(String(added.data?.content)).toBe(`このチャンネル（<#${channelId}>）も <#${DEFAULT_IDS.voice}> で読み上げます。`);
}

describe('npm start, as a child process', () => {
  it('/say without voice answers with an MP3 attachment', async () => {
    const i = await discord.sendInteraction({
      channelId: DEFAULT_IDS.general,
      user: alice,
      name: 'say',
      locale: 'en-US',
      options: [{ name: 'text', type: 3, value: '添付で届きます' }],
    });
    const reply = await i.waitForResponse((r) => r.files.length > 0, 20_000);
    expect(reply.files[0]!.name).toMatch(/\.mp3$/);
    expect(reply.files[0]!.data.subarray(0, 3).toString('latin1') === 'ID3' || reply.files[0]!.data[0] === 0xff).toBe(true);
    // The ready line tells the operator how to add the bot to another server.
    expect(readyLog(bot)).toMatchObject({
      invite: `https://discord.com/oauth2/authorize?client_id=${discord.applicationId}&scope=bot+applications.commands&permissions=3247168`,
    });
  });

  it('/narrate is delivered with its audio and seed', async () => {
    const i = await discord.sendInteraction({
      channelId: DEFAULT_IDS.general,
      user: bob,
      name: 'narrate',
      locale: 'en-US',
      options: [
        { name: 'text', type: 3, value: 'The started bot narrates this.' },
        { name: 'voice', type: 3, value: 'Luna' },
        { name: 'seed', type: 4, value: 7 },
      ],
    });
    const reply = await i.waitForResponse((r) => r.files.length > 0, 30_000);
    expect(String(reply.data?.content)).toMatch(/Luna.*7/);
  });

  it('/join then /say: the voice server receives the speech', async () => {
    await discord.setVoiceState(alice.id, guildId, DEFAULT_IDS.voice);
    voice.simulateListener({ guildId, channelId: DEFAULT_IDS.voice, userId: alice.id });
    const joined = await discord.sendInteraction({ channelId: DEFAULT_IDS.general, user: alice, name: 'join', locale: 'en-US' });
    expect(String((await joined.waitForResponse((r) => r.kind === 'editOriginal', 30_000)).data?.content)).toContain('Joined');
    await voice.waitForDave(guildId);
    const started = performance.now();
    const i = await discord.sendInteraction({
      channelId: DEFAULT_IDS.general,
      user: alice,
      name: 'say',
      locale: 'en-US',
      options: [{ name: 'text', type: 3, value: 'ボイスで聞こえます' }],
    });
    expect((await i.waitForResponse((r) => r.kind === 'editOriginal', 20_000)).files).toHaveLength(0);
    const heard = await voice.waitForAudio({ guildId, startedAfter: started, minDurationMs: 200, timeoutMs: 20_000 });
    expect(heard.rmsDb).toBeGreaterThan(-40);
    expectE2ee(heard);
  });

  it('auto-read in voice: a message in the bound channel is spoken', async () => {
    const started = performance.now();
    await discord.sendMessage({ channelId: DEFAULT_IDS.general, author: alice, content: '自動で読み上げます' });
    const heard = await voice.waitForAudio({ guildId, startedAfter: started, minDurationMs: 200, timeoutMs: 20_000 });
    expect(heard.rmsDb).toBeGreaterThan(-40);
    expectE2ee(heard);
  });

  it('a second text channel in the call: added with the button (ja), both read; a third refused over the number (ja); one stopped with /leave', async () => {
    const config = await discord.sendInteraction({
      channelId: DEFAULT_IDS.general,
      user: bob,
      name: 'config',
      locale: 'en-US',
      options: [{ name: 'text-channels', type: 1, options: [{ name: 'value', type: 4, value: 2 }] }],
    });
    expect(String((await config.waitForResponse((r) => r.kind === 'callback')).data?.content)).toContain('= 2');
    await alsoRead(DEFAULT_IDS.chat);
    const since = { requests: standardRequests(emulator).length, at: performance.now() };
    await discord.sendMessage({ channelId: DEFAULT_IDS.chat, author: owner, content: 'チャットからも読みます' });
    await vi.waitUntil(() => requested(since.requests, 'チャットからも読みます'), { timeout: 20_000, message: '#chat read' });
    expectE2ee(await voice.waitForAudio({ guildId, startedAfter: since.at, minDurationMs: 200, timeoutMs: 20_000 }));

    const full = await command(alice, 'join', GAMES);
    expect(full.data?.flags).toBe(64);
    expect(String(full.data?.content)).toContain(
      `<#${DEFAULT_IDS.voice}> ではすでに <#${DEFAULT_IDS.general}> <#${DEFAULT_IDS.chat}> の 2 チャンネルを読み上げています。`,
    );

    const leave = await discord.sendInteraction({ channelId: DEFAULT_IDS.chat, user: alice, name: 'leave', locale: 'ja' });
    const asked = await leave.waitForResponse((r) => r.kind === 'callback', 20_000);
    const stopped = await click(leave.original()!.id, asked, 'このチャンネルだけやめる', DEFAULT_IDS.chat);
    expect(String(stopped.data?.content)).toContain(`このチャンネル（<#${DEFAULT_IDS.chat}>）の読み上げをやめました。`);
    const from = standardRequests(emulator).length;
    await discord.sendMessage({ channelId: DEFAULT_IDS.chat, author: owner, content: 'もう読まれません' });
    await discord.sendMessage({ channelId: DEFAULT_IDS.general, author: alice, content: 'こちらは読みます' });
    await vi.waitUntil(() => requested(from, 'こちらは読みます'), { timeout: 20_000, message: '#general still read' });
    expect(requested(from, 'もう読まれません')).toBe(false);
    // Room again under the number: #games is added, and the call reads #general and #games through the restarts below.
    await alsoRead(GAMES);
  });

  it('keeping up: the newest line, written while 14 s of a long line play, is heard after it, not dropped to leave silence', async () => {
    // bob (Manage Server) sets the horizon to 15 s and lets a 425-character line be read (the server reads at
    // speed 4: the line with its name plays about 13.7 s); both go back as they were, whatever happens.
    await settings({ freshness: 15, maxLength: 500 });
    try {
      const logsBefore = bot.logs.length;
      const requestsBefore = standardRequests(emulator).length;
      // The call quiet first: the story before may leave its last line playing, and its packets are not the long
      // line's (the newest written then waits behind the long one, over bob's 500 characters, and is refused).
      await vi.waitUntil(() => pendingRows(dataDir) === 0 && voice.utterances(guildId).every((u) => u.complete), {
        timeout: 20_000,
        message: 'the call quiet before the long line',
      });
      const started = performance.now();
      await discord.sendMessage({ channelId: DEFAULT_IDS.general, author: bob, content: kana(425, 0) });
      const [first] = await voice.waitForEvent('packet', (p) => p.guildId === guildId && p.receivedAt >= started, 20_000);
      // 0.1 s into it: the channel is behind (more than 15 s to read), and this line could start about 13.6 s after
      // it was written: within the horizon, past the 13.5 s that kept a margin for a slow request before. A loaded
      // machine's playback running late by more than the 1.4 s left drops it at the moment of speaking: rerun alone.
      await new Promise((r) => setTimeout(r, 100));
      const newest = kana(60, 3);
      await discord.sendMessage({ channelId: DEFAULT_IDS.general, author: bob, content: newest });
      await vi.waitUntil(
        () =>
          standardRequests(emulator)
            .slice(requestsBefore)
            .some((r) => r.text.includes(newest)),
        {
          timeout: 20_000,
          message: 'the newest line requested',
        },
      );
      // Both are heard, with no silence left where the newest was.
      await vi.waitUntil(() => pendingRows(dataDir) === 0 && voice.utterances(guildId).every((u) => u.complete), {
        timeout: 30_000,
        interval: 50,
        message: 'the long line and the newest played',
      });
      const heard = voice.utterances(guildId).filter((u) => u.start >= first.receivedAt - 1);
      // The long line (one stretch of sound, or more if a loaded machine paused its packets), then the newest, whole:
      // the last thing heard is as long as the newest's own audio (about 1.8 s), not the end of the long line.
      const newestText = standardRequests(emulator)
        .slice(requestsBefore)
        .find((r) => r.text.includes(newest))!.text;
      const newestMs = await mp3DurationOf(emulator, newestText);
      expect(heard.length).toBeGreaterThanOrEqual(2);
      expect(Math.abs(heard.at(-1)!.durationMs - newestMs)).toBeLessThan(300);
      heard.forEach(expectE2ee);
      expect(bot.logs.slice(logsBefore).filter((l) => String(l.msg).includes('dropped'))).toEqual([]);
    } finally {
      await settings({ freshness: 20, maxLength: 100 });
    }
  }, 60_000);

  it('SIGTERM with 9 messages queued, then a restart: the bot rejoins voice and speaks all 9', async () => {
    // Short lines: what comes back is played in real time.
    const texts = Array.from({ length: 9 }, (_, i) => `終${i + 1}`);
    await burst(texts);
    const old = bot;
    expect(await old.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    const since = { requests: standardRequests(emulator).length, at: performance.now() };
    const rejoin = discord.waitForBotVoiceState((s) => s.channelId === DEFAULT_IDS.voice, 30_000);
    await start();
    await rejoin;
    expect(readyLog(bot)).toMatchObject({ restored: 9, rejoined: 1 });
    await spokenAfterRestart(texts, since);
  });

  it('after the restart the call still reads both text channels: #games is heard, and /diagnose (ja) names both', async () => {
    const since = { requests: standardRequests(emulator).length, at: performance.now() };
    await discord.sendMessage({ channelId: GAMES, author: owner, content: 'ゲームの話も読みます' });
    await vi.waitUntil(() => requested(since.requests, 'ゲームの話も読みます'), {
      timeout: 20_000,
      message: '#games read after the restart',
    });
    expectE2ee(await voice.waitForAudio({ guildId, startedAfter: since.at, minDurationMs: 200, timeoutMs: 20_000 }));
    const diagnose = await discord.sendInteraction({ channelId: GAMES, user: alice, name: 'diagnose', locale: 'ja' });
    const report = String((await diagnose.waitForResponse((r) => r.kind === 'editOriginal', 20_000)).data?.content);
    expect(report).toContain(`読み上げるテキストチャンネル: <#${DEFAULT_IDS.general}>、<#${GAMES}>`);
  });

  it('kill -9 during a burst, then a restart: none of the 12 accepted messages is lost', async () => {
    const texts = Array.from({ length: 12 }, (_, i) => `殺${String(i + 1).padStart(2, '0')}`);
    await burst(texts);
    expect(await bot.stop('SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });
    const since = { requests: standardRequests(emulator).length, at: performance.now() };
    await start();
    expect(readyLog(bot)).toMatchObject({ restored: 12, rejoined: 1 });
    await spokenAfterRestart(texts, since);
    expect(await bot.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  });
});
