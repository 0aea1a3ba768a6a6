import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEFAULT_TOKEN } from '@yomiage/tts-emulator';
import { AudioError } from '../../src/audio/errors.ts';
import { createLogger } from '../../src/util/log.ts';
import { countChars } from '../../src/tts/chars.ts';
import { DEFAULT_IDS } from '@yomiage/local-discord';
import { startFakeVoiceServer, trustCertificate, type FakeVoiceServer } from '@yomiage/local-discord';
import { startHarness, type Harness } from '../support/bot-harness.ts';
import { captureLog, type CapturedLog } from '../support/log-scan.ts';

// Once the service has charged for a clip, a failing cache must not throw it away: a cache directory
// that cannot be written (a real fault), and a transcode to Ogg Opus that fails on every file; the
// real bot in voice. And no ffmpeg at all (FFMPEG_PATH pointing nowhere) changes nothing: the bot
// makes its Ogg Opus in its own process, so speech is played and cached as usual.
const alice = { id: DEFAULT_IDS.alice, username: 'alice' };
const guildId = DEFAULT_IDS.guild;
const CACHE_FAILED = 'could not cache the paid audio; delivering it uncached (its MP3 decoded as it plays)';

let voice: FakeVoiceServer;
let scratch: string;
beforeAll(async () => {
  voice = await startFakeVoiceServer();
  trustCertificate(voice.caCertPem);
  scratch = mkdtempSync(joinPath(tmpdir(), 'paid-audio-'));
});
afterAll(async () => {
  await voice?.close();
  rmSync(scratch, { recursive: true, force: true });
});

async function start(
  env: Record<string, string> = {},
  bot: { transcode?: (mp3: Buffer) => Promise<Buffer> } = {},
): Promise<{ h: Harness; log: CapturedLog }> {
  const log = captureLog();
  const h = await startHarness({
    discord: { voiceEndpoint: () => voice.endpoint },
    env: { AUTO_READ_MAX_AGE_SECONDS: '600', ...env },
    bot: { logger: createLogger({ level: 'debug', secrets: [DEFAULT_TOKEN], destination: log }), ...bot },
  });
  return { h, log };
}

async function join(h: Harness): Promise<void> {
  await h.discord.setVoiceState(alice.id, guildId, DEFAULT_IDS.voice);
  // Alice's client in the call: the bot's audio is end-to-end encrypted to her (DAVE).
  if (voice.dave.listeners(guildId).length === 0) voice.simulateListener({ guildId, channelId: DEFAULT_IDS.voice, userId: alice.id });
  const interaction = await h.discord.sendInteraction({ channelId: DEFAULT_IDS.general, user: alice, name: 'join', locale: 'en-US' });
  const reply = await interaction.waitForResponse((r) => r.kind === 'editOriginal', 30_000);
  expect(String(reply.data?.content)).toContain('Joined');
  await voice.waitForDave(guildId);
}

async function say(h: Harness, text: string) {
  const interaction = await h.discord.sendInteraction({
    channelId: DEFAULT_IDS.general,
    user: alice,
    name: 'say',
    locale: 'en-US',
    options: [{ name: 'text', type: 3, value: text }],
  });
  return interaction.waitForResponse((r) => r.kind === 'editOriginal', 30_000);
}

/** Says `text` in voice and expects to hear it (played through the uncached MP3 path). */
async function sayAndHear(h: Harness, text: string): Promise<void> {
  const started = performance.now();
  const reply = await say(h, text);
  expect(String(reply.data?.content)).toContain('Speaking in the voice channel');
  expect(reply.files).toHaveLength(0);
  const heard = await voice.waitForAudio({ guildId, startedAfter: started, minDurationMs: 500, timeoutMs: 30_000 });
  expect(heard.rmsDb).toBeGreaterThan(-40);
  expect(heard.plainFrames).toBe(0);
  expect(heard.packets.filter((p) => !p.silent && p.heardBy[alice.id] !== 'decrypted')).toHaveLength(0);
}

const warnings = (log: CapturedLog, msg: string) => log.records().filter((r) => r.msg === msg && r.level === 40);

describe('the cache directory cannot be written (disk full, read-only, not a directory)', () => {
  let h: Harness;
  let log: CapturedLog;
  beforeAll(async () => {
    ({ h, log } = await start());
    // Where the cache wants its directory there is a file: every write fails (root ignores modes).
    writeFileSync(joinPath(h.dataDir, 'audio'), 'not a directory');
    await join(h);
  }, 60_000);
  afterAll(async () => h?.close());

  it('plays the paid MP3 uncached, charges it once, and logs the cause once for a run of failures', async () => {
    const texts = ['キャッシュ不可です', 'もう一度書けません'];
    for (const text of texts) await sayAndHear(h, text);
    expect(h.emulator.stats().charactersCharged).toBe(texts.reduce((n, t) => n + countChars(t), 0));
    const warned = warnings(log, CACHE_FAILED);
    expect(warned).toHaveLength(1);
    expect(warned[0]!.err).toMatchObject({ code: 'cache_write_failed' });
    // The second clip is cached in the background after it plays: its failure is logged a moment later.
    await vi.waitFor(() =>
      expect(log.records().filter((r) => r.msg === 'could not cache the paid audio again (same cause)' && r.level === 20)).toHaveLength(1),
    );
    expect(log.records().some((r) => r.msg === 'speech failed')).toBe(false);
  });
});

describe('the transcode fails on the file', () => {
  let h: Harness;
  let log: CapturedLog;
  beforeAll(async () => {
    // The cache's conversion fails on every file, as it does on an MP3 it cannot decode.
    const transcode = async () => {
      throw new AudioError('transcode_failed', { detail: 'no MPEG audio frame in the file' });
    };
    ({ h, log } = await start({}, { transcode }));
    await join(h);
  }, 60_000);
  afterAll(async () => h?.close());

  it('plays the MP3 through the uncached path and logs the transcode failure once', async () => {
    const text = '変換失敗でも届く';
    await sayAndHear(h, text);
    expect(h.emulator.stats().charactersCharged).toBe(countChars(text));
    const warned = warnings(log, CACHE_FAILED);
    expect(warned).toHaveLength(1);
    expect(warned[0]!.err).toMatchObject({ code: 'transcode_failed' });
    expect(String((warned[0]!.err as { message: string }).message)).toContain('no MPEG audio frame');
  });
});

describe('no ffmpeg at all', () => {
  let h: Harness;
  let log: CapturedLog;
  beforeAll(async () => {
    ({ h, log } = await start({ FFMPEG_PATH: joinPath(scratch, 'no-such-ffmpeg') }));
    await join(h);
  }, 60_000);
  afterAll(async () => h?.close());

  it('starts without a word about ffmpeg: nothing it does needs one', () => {
    expect(log.records().filter((r) => r.level >= 40 && /ffmpeg/i.test(String(r.msg)))).toEqual([]);
    expect(log.records().some((r) => r.msg === 'bot ready')).toBe(true);
  });

  it('plays new speech in voice and caches it: the same text again is heard without being paid again', async () => {
    const text = 'エフエムペグがなくても声で読みます';
    await sayAndHear(h, text);
    expect(h.emulator.stats().charactersCharged).toBe(countChars(text));
    await sayAndHear(h, text);
    expect(h.emulator.stats().charactersCharged).toBe(countChars(text));
    expect(warnings(log, CACHE_FAILED)).toEqual([]);
  });
});
