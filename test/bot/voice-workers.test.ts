import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '@yomiage/tts-emulator';
import { DEFAULT_IDS, startFakeDiscord, startFakeVoiceServer, type FakeDiscord, type FakeVoiceServer } from '@yomiage/local-discord';
import { startChildBot, type ChildBot } from '../support/child-bot.ts';
import { e2eeProblems, playedFrames } from '../support/dave-check.ts';

// Voice off the main thread, through `npm start` as a child process (one bot for the file): its
// voice connection runs in a worker thread (VOICE_WORKERS=1) while its main thread is kept busy
// 200 ms out of every 500 (test/support/stall-main.ts, preloaded). The voice server times
// every packet in this process, which nothing stalls. YOMIAGE_TEST_VOICE_WORKERS=0 runs the file
// with voice on the main thread: the negative control, where each stall holds the packets back.
const guildId = DEFAULT_IDS.guild;
const alice = { id: DEFAULT_IDS.alice, username: 'alice' };
const bob = { id: DEFAULT_IDS.bob, username: 'bob' };
const FRAME_MS = 20;
const STALL = { busyMs: 200, everyMs: 500 };
const epochNow = () => performance.timeOrigin + performance.now();

let emulator: Emulator;
let discord: FakeDiscord;
let voice: FakeVoiceServer;
let dataDir: string;
let bot: ChildBot;
beforeAll(async () => {
  // Epoch milliseconds, so the packets' times compare with the stalls the bot logs.
  voice = await startFakeVoiceServer({ now: epochNow });
  [emulator, discord] = await Promise.all([startEmulator({ control: true }), startFakeDiscord({ voiceEndpoint: () => voice.endpoint })]);
  dataDir = mkdtempSync(join(tmpdir(), 'yomiage-voice-workers-'));
  bot = await startChildBot({
    discord,
    emulator,
    dataDir,
    caCertPem: voice.caCertPem,
    env: {
      VOICE_WORKERS: process.env.YOMIAGE_TEST_VOICE_WORKERS ?? '1',
      // The stalls are the test's own, preloaded into the bot's process (test/support/stall-main.ts).
      NODE_OPTIONS: `--import=${join(import.meta.dirname, '../support/stall-main.ts')}`,
      STALL_MAIN: `${STALL.busyMs}/${STALL.everyMs}`,
    },
  });
}, 60_000);
afterAll(async () => {
  await bot?.stop('SIGKILL');
  await Promise.all([emulator?.close(), discord?.close(), voice?.close()]);
  rmSync(dataDir, { recursive: true, force: true });
});

describe('npm start: voice in a worker thread', () => {
  it('a main thread blocked 200 ms at a time does not delay the packets of a playing clip by more than one frame; every frame end-to-end encrypted', async () => {
    for (const user of [alice, bob]) {
      await discord.setVoiceState(user.id, guildId, DEFAULT_IDS.voice);
      voice.simulateListener({ guildId, channelId: DEFAULT_IDS.voice, userId: user.id });
    }
    await voice.waitForDave(guildId);
    const joined = await discord.sendInteraction({ channelId: DEFAULT_IDS.general, user: alice, name: 'join', locale: 'en-US' });
    expect(String((await joined.waitForResponse((r) => r.kind === 'editOriginal', 30_000)).data?.content)).toContain('Joined');
    await voice.waitForDave(guildId, 10_000);

    const started = epochNow();
    const said = await discord.sendInteraction({
      channelId: DEFAULT_IDS.general,
      user: alice,
      name: 'say',
      locale: 'en-US',
      // About 2.5 s of speech: several stalls fall inside it.
      options: [{ name: 'text', type: 3, value: 'これは長めの読み上げのテストでございます' }],
    });
    await said.waitForResponse((r) => r.kind === 'editOriginal', 30_000);
    const heard = await voice.waitForAudio({ guildId, startedAfter: started, timeoutMs: 30_000 });
    const frames = playedFrames(voice, heard);
    expect(e2eeProblems(frames, [alice.id, bob.id])).toEqual([]);

    // Every packet of the clip, the silence frames in and after it too, in the order they came.
    const first = frames[0]!;
    const packets = voice.packets.filter((p) => p.ssrc === first.ssrc && p.speakingOffCount === first.speakingOffCount);
    const stalls = bot.logs
      .filter((l) => l.msg === 'main thread stalled on purpose')
      .map((l) => ({ from: l.at as number, to: (l.at as number) + (l.ms as number) }));
    // No packet went missing.
    expect(packets.map((p) => p.seq - first.seq)).toEqual(packets.map((_, i) => i));
    // Each packet's lateness: how far behind the clip's steady pace (20 ms a packet from its typical,
    // median, offset) it came. This machine's own jitter (other processes, the timer) is in every
    // packet's; what the stalls add is what the packets due during a stall show over the others.
    const offsets = packets.map((p, i) => p.receivedAt - first.receivedAt - i * FRAME_MS);
    const pace = offsets.toSorted((a, b) => a - b)[Math.floor(offsets.length / 2)]!;
    const stalled = (i: number) =>
      stalls.some((s) => first.receivedAt + pace + i * FRAME_MS >= s.from && first.receivedAt + pace + i * FRAME_MS <= s.to);
    const during = offsets.flatMap((o, i) => (stalled(i) ? [o - pace] : []));
    const outside = offsets.flatMap((o, i) => (stalled(i) ? [] : [o - pace]));
    // The clip really played through stalls (at least two of them).
    expect(during.length).toBeGreaterThanOrEqual((2 * STALL.busyMs) / FRAME_MS);
    // The typical (median) packet due during a stall came no more than one frame later than the
    // typical other packet. (On the main thread a stall holds its packets back ~100 ms on median.)
    const median = (values: number[]) => values.toSorted((a, b) => a - b)[Math.floor(values.length / 2)]!;
    const added = median(during) - median(outside);
    expect(added, `the stalls held packets back ${Math.round(added)} ms (median, over the others')`).toBeLessThanOrEqual(FRAME_MS);
  });
});
