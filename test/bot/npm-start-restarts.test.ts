import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startEmulator, type Emulator } from '@yomiage/tts-emulator';
import { startChildBot, type ChildBot, type LogLine, pendingRows } from '../support/child-bot.ts';
import { DEFAULT_IDS, startFakeDiscord, type FakeDiscord } from '@yomiage/local-discord';
import { startFakeVoiceServer, type FakeVoiceServer, type Utterance } from '@yomiage/local-discord';
import { e2eeProblems, playedFrames } from '../support/dave-check.ts';
import { standardRequests } from '../support/bot-harness.ts';

// The product is what `npm start` runs. The real entry point runs as a child process
// (its own environment, no .env, DATA_DIR of its own) against the loopback Discord, the fake TLS
// voice server and the emulator, which run here; each test checks what a server would notice.
// One story, so the bot starts only three times: first run, after SIGTERM, after kill -9.
// The call runs DAVE as on Discord: alice's client (a simulated listener) is in it, and every
// frame the bot sends must reach her end-to-end encrypted, the first ones after each rejoin too.
const alice = { id: DEFAULT_IDS.alice, username: 'alice' };
const bob = { id: DEFAULT_IDS.bob, username: 'bob' };
const guildId = DEFAULT_IDS.guild;

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
