import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEFAULT_TOKEN } from '@yomiage/tts-emulator';
import { DEFAULT_IDS } from '@yomiage/local-discord';
import { startFakeVoiceServer, trustCertificate, type FakeVoiceServer } from '@yomiage/local-discord';
import { mp3DurationOf, standardRequests, startHarness, type Harness } from '../support/bot-harness.ts';

// A cache miss plays from the downloaded MP3, decoded in the bot's process. When the
// service's MP3 is broken (it passes the download's magic check, then nothing decodes), the clip
// fails on its own: it is paid once and never again for that message, it is not cached (the same
// text later is asked for afresh and heard), and the messages after it are read as usual.
const alice = { id: DEFAULT_IDS.alice, username: 'alice' };
const guildId = DEFAULT_IDS.guild;
/** An ID3v2 tag of size 0 (the download accepts it as an MP3), then bytes that are no MPEG audio. */
const BROKEN_MP3 = `ID3\u0003\u0000\u0000\u0000\u0000\u0000\u0000${'broken audio '.repeat(400)}`;

let voice: FakeVoiceServer;
let h: Harness;

beforeAll(async () => {
  voice = await startFakeVoiceServer();
  trustCertificate(voice.caCertPem);
  h = await startHarness({ discord: { voiceEndpoint: () => voice.endpoint }, env: { AUTO_READ_MAX_AGE_SECONDS: '600' } });
  await h.discord.setVoiceState(alice.id, guildId, DEFAULT_IDS.voice);
  voice.simulateListener({ guildId, channelId: DEFAULT_IDS.voice, userId: alice.id });
  const interaction = await h.discord.sendInteraction({ channelId: DEFAULT_IDS.general, user: alice, name: 'join', locale: 'en-US' });
  await interaction.waitForResponse((r) => r.kind === 'editOriginal', 30_000);
  await voice.waitForDave(guildId);
}, 60_000);
afterAll(async () => {
  await h?.close();
  await voice?.close();
});

/** Sends `content` as alice and waits until the service was asked for it (the request that carries it). */
async function message(content: string): Promise<string> {
  const before = standardRequests(h.emulator).length;
  await h.discord.sendMessage({ channelId: DEFAULT_IDS.general, author: alice, content });
  return vi.waitUntil(
    () =>
      standardRequests(h.emulator)
        .slice(before)
        .find((r) => r.text.includes(content))?.text,
    { timeout: 20_000, interval: 20, message: `a request for ${content}` },
  );
}

/** The next complete utterance that starts after `after` (performance.now()). */
async function heard(after: number) {
  const first = await voice.waitForAudio({ guildId, startedAfter: after, minDurationMs: 300, timeoutMs: 30_000 });
  return vi.waitUntil(() => voice.utterances(guildId).find((u) => u.start === first.start && u.complete), {
    timeout: 30_000,
    interval: 20,
    message: 'the end of the utterance',
  });
}

/**
 * All that was heard from `after` on, once `expectedMs` of it (less a few frames) has arrived: a loaded machine may
 * pause the packets of one clip long enough for the listener to hear it as two stretches of sound.
 */
async function heardAll(after: number, expectedMs: number) {
  const since = () => voice.utterances(guildId).filter((u) => u.start >= after);
  await vi.waitUntil(() => since().reduce((ms, u) => ms + u.durationMs, 0) >= expectedMs - 60 && since().every((u) => u.complete), {
    timeout: 30_000,
    interval: 20,
    message: 'the whole clip heard',
  });
  const us = since();
  return {
    start: us[0]!.start,
    durationMs: us.reduce((ms, u) => ms + u.durationMs, 0),
    plainFrames: us.reduce((n, u) => n + u.plainFrames, 0),
  };
}

describe('a broken MP3 on a cache miss', () => {
  it('fails alone: paid once, nothing heard for it, not cached; the next message and the same text later are heard whole', async () => {
    const charged0 = h.emulator.charged(DEFAULT_TOKEN);
    h.emulator.injectFault({ target: 'audio', count: 1, status: 200, body: BROKEN_MP3, headers: { 'content-type': 'audio/mpeg' } });
    const t0 = performance.now();
    const brokenText = await message('壊れた音声のテストです');
    // Sent once the broken one's request has left, so the two cannot share one request.
    const t1 = performance.now();
    const nextText = await message('次のメッセージは聞こえます');
    await heard(t1);
    const nextMs = await mp3DurationOf(h.emulator, nextText);
    const next = await heardAll(t1, nextMs);
    expect(Math.abs(next.durationMs - nextMs)).toBeLessThanOrEqual(60);
    expect(next.plainFrames).toBe(0);
    // Nothing was heard between the broken message and the next one.
    expect(voice.utterances(guildId).filter((u) => u.start >= t0 && u.start < next.start)).toEqual([]);
    // Each text paid exactly once.
    expect(h.emulator.charged(DEFAULT_TOKEN) - charged0).toBe([...brokenText].length + [...nextText].length);
    expect(standardRequests(h.emulator).filter((r) => r.text === brokenText)).toHaveLength(1);

    // The same text again: the broken clip was not cached, so it is asked for and heard this time.
    const t2 = performance.now();
    const againText = await message('壊れた音声のテストです');
    await heard(t2);
    const againMs = await mp3DurationOf(h.emulator, againText);
    const again = await heardAll(t2, againMs);
    expect(Math.abs(again.durationMs - againMs)).toBeLessThanOrEqual(60);
  }, 90_000);
});
