import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEFAULT_TOKEN } from '@yomiage/tts-emulator';
import { createLogger } from '../../src/util/log.ts';
import { countChars } from '../../src/tts/chars.ts';
import { DEFAULT_IDS } from '@yomiage/local-discord';
import { startFakeVoiceServer, trustCertificate, type FakeVoiceServer } from '@yomiage/local-discord';
import { startHarness, type Harness } from '../support/bot-harness.ts';
import { captureLog, type CapturedLog } from '../support/log-scan.ts';

// Once the service has charged for a clip, a failing cache or ffmpeg must not throw
// it away. Real faults only: a cache directory that cannot be written, an ffmpeg that fails on
// every file, and no ffmpeg at all (FFMPEG_PATH pointing nowhere); the real bot in voice.
const alice = { id: DEFAULT_IDS.alice, username: 'alice' };
const guildId = DEFAULT_IDS.guild;
const CACHE_FAILED = 'could not cache the paid audio; delivering it uncached (played as MP3, or attached)';

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

async function start(env: Record<string, string> = {}): Promise<{ h: Harness; log: CapturedLog }> {
  const log = captureLog();
  const h = await startHarness({
    discord: { voiceEndpoint: () => voice.endpoint },
    env: { AUTO_READ_MAX_AGE_SECONDS: '600', ...env },
    bot: { logger: createLogger({ level: 'debug', secrets: [DEFAULT_TOKEN], destination: log }) },
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

describe('ffmpeg fails on the file', () => {
  let h: Harness;
  let log: CapturedLog;
  beforeAll(async () => {
    // A real executable that answers the start-up check like ffmpeg but fails every transcode.
    const failing = joinPath(scratch, 'failing-ffmpeg');
    writeFileSync(
      failing,
      '#!/bin/sh\nfor a in "$@"; do case "$a" in -version|-encoders) exec ffmpeg "$@";; esac; done\ncat >/dev/null\necho "pipe:0: Invalid data found when processing input" >&2\nexit 1\n',
    );
    chmodSync(failing, 0o755);
    ({ h, log } = await start({ FFMPEG_PATH: failing }));
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
    expect(String((warned[0]!.err as { message: string }).message)).toContain('Invalid data');
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

  it('starts anyway and says at warn level what works without ffmpeg', () => {
    const warned = log.records().filter((r) => r.level === 40 && String(r.msg).startsWith('ffmpeg not found: running degraded'));
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatchObject({ reason: 'ENOENT' });
    expect(String(warned[0]!.msg)).toMatch(/Works: .*attachment.*Does not work: playing new speech in voice/);
    expect(log.records().some((r) => r.msg === 'bot ready')).toBe(true);
  });

  it('attaches the paid MP3 to the reply instead of playing it, even while in voice', async () => {
    const started = performance.now();
    const text = 'エフエムペグがなくても音声を添付します';
    const reply = await say(h, text);
    expect(reply.files).toHaveLength(1);
    expect(reply.files[0]!.name).toMatch(/\.mp3$/);
    expect(reply.files[0]!.data.subarray(0, 3).toString('latin1') === 'ID3' || reply.files[0]!.data[0] === 0xff).toBe(true);
    expect(h.emulator.stats().charactersCharged).toBe(countChars(text));
    expect(voice.utterances(guildId).filter((u) => u.start >= started)).toHaveLength(0);
  });

  it("attaches an auto-read message's audio as a reply to it", async () => {
    const posted = h.discord.waitForMessage((m) => m.attachments.length > 0 && m.channelId === DEFAULT_IDS.general);
    const { id } = await h.discord.sendMessage({ channelId: DEFAULT_IDS.general, author: alice, content: '自動読み上げも添付されます' });
    const message = await posted;
    expect(message.messageReference?.message_id).toBe(id);
    await vi.waitUntil(() => h.emulator.stats().charactersCharged > 0, { timeout: 10_000 });
    expect(log.records().some((r) => r.msg === 'playback failed')).toBe(false);
  });
});
