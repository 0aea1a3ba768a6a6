import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEFAULT_IDS } from '@yomiage/local-discord';
import { startFakeVoiceServer, trustCertificate, type FakeVoiceServer, type Utterance } from '@yomiage/local-discord';
import { botPrivacyCode, decodedMs, e2eeProblems, playedFrames } from '../support/dave-check.ts';
import type { SimulatedListener } from '@yomiage/local-discord/voice/dave/listener';
import { mp3DurationOf as harnessMp3DurationOf, standardRequests, startHarness, type Harness } from '../support/bot-harness.ts';

// Voice playback and resilience: real discord.js + @discordjs/voice against the loopback Discord (REST,
// gateway, TLS voice gateway, UDP); the fake voice server decrypts and decodes what is played.
// The call is end-to-end encrypted (DAVE v1) with a simulated listener in it, who
// decrypts every frame (voice-dave.test.ts covers the DAVE protocol itself).
const alice = { id: DEFAULT_IDS.alice, username: 'alice' };
const guildId = DEFAULT_IDS.guild;
// The negative control's seam: YOMIAGE_TEST_BOT_DAVE=off runs the bot without DAVE (tests fail).
const botDave = process.env.YOMIAGE_TEST_BOT_DAVE !== 'off';

let voice: FakeVoiceServer;
let h: Harness;
let aliceEars: SimulatedListener;

beforeAll(async () => {
  voice = await startFakeVoiceServer();
  trustCertificate(voice.caCertPem);
  h = await startHarness({
    discord: { voiceEndpoint: () => voice.endpoint },
    env: { AUTO_READ_MAX_AGE_SECONDS: '600' },
    // Shorter than the guide's 5 s so the 4014 test does not wait long.
    bot: { voice: { reconnectGraceMs: 1_000, daveEncryption: botDave } },
  });
  await h.discord.setVoiceState(alice.id, guildId, DEFAULT_IDS.voice);
  aliceEars = voice.simulateListener({ guildId, channelId: DEFAULT_IDS.voice, userId: alice.id });
}, 60_000);

/** Every sound frame of `u` was end-to-end encrypted, and alice's client decrypted it. */
function expectE2ee(u: Utterance): void {
  expect(u.plainFrames, 'frames without DAVE framing').toBe(0);
  expect(u.daveFrames).toBeGreaterThan(0);
  expect(u.packets.filter((p) => !p.silent && p.heardBy[alice.id] !== 'decrypted')).toHaveLength(0);
}
afterAll(async () => {
  await h?.close();
  await voice?.close();
});

const mp3DurationOf = (text: string) => harnessMp3DurationOf(h.emulator, text);

async function join(): Promise<void> {
  const interaction = await h.discord.sendInteraction({ channelId: DEFAULT_IDS.general, user: alice, name: 'join', locale: 'en-US' });
  const reply = await interaction.waitForResponse((r) => r.kind === 'editOriginal', 30_000);
  expect(String(reply.data?.content)).toContain('Joined');
  // The bot is in the DAVE group with the listener before anything is said.
  await voice.waitForDave(guildId);
}

async function say(text: string) {
  return h.discord.sendInteraction({
    channelId: DEFAULT_IDS.general,
    user: alice,
    name: 'say',
    locale: 'en-US',
    options: [{ name: 'text', type: 3, value: text }],
  });
}

describe('voice playback', () => {
  it('/join then /say: DAVE v1; every frame end-to-end encrypted and decrypted by the listener, as long as the MP3, clearly above silence', async () => {
    await join();
    expect(voice.sessions.findLast((s) => s.serverId === guildId)).toMatchObject({ maxDaveProtocolVersion: 1, daveProtocolVersion: 1 });
    const started = performance.now();
    const text = 'ボイスで読み上げ';
    const interaction = await say(text);
    const reply = await interaction.waitForResponse((r) => r.kind === 'editOriginal', 20_000);
    expect(reply.files).toHaveLength(0); // played, not attached
    const heard = await voice.waitForAudio({ guildId, startedAfter: started, minDurationMs: 500, timeoutMs: 30_000 });
    await vi.waitUntil(() => voice.utterances(guildId).find((u) => u.start === heard.start)?.complete, {
      timeout: 30_000,
      message: 'utterance end',
    });
    const done = voice.utterances(guildId).find((u) => u.start === heard.start)!;
    const expected = await mp3DurationOf(text);
    expect(Math.abs(done.durationMs - expected) / expected).toBeLessThan(0.1);
    expect(done.rmsDb).toBeGreaterThan(-40);
    expectE2ee(done);
    // Frame by frame, from the first to speaking off: DAVE framing, never the plaintext, decrypted
    // by the listener, and together exactly as long as the MP3.
    const frames = playedFrames(voice, done);
    expect(e2eeProblems(frames, [alice.id])).toEqual([]);
    expect(Math.abs(decodedMs(frames) - expected)).toBeLessThanOrEqual(40);
    // The bot and the listener hold the same group: the same voice privacy code.
    expect(botPrivacyCode(guildId)).toMatch(/^\d{30}$/);
    expect(botPrivacyCode(guildId)).toBe(aliceEars.voicePrivacyCode);
  });

  it('reads three auto-read messages as three utterances in message order', async () => {
    const texts = ['はい', 'きょうはいいてんき', 'また明日'];
    const started = performance.now();
    const before = standardRequests(h.emulator).length;
    for (const [i, content] of texts.entries()) {
      await h.discord.sendMessage({ channelId: DEFAULT_IDS.general, author: alice, content });
      await vi.waitUntil(() => standardRequests(h.emulator).length >= before + i + 1, { timeout: 20_000, message: `request ${i + 1}` });
    }
    const sent = standardRequests(h.emulator)
      .slice(before)
      .map((r) => r.text);
    expect(sent).toHaveLength(3);
    sent.forEach((t, i) => expect(t).toContain(texts[i]));
    const heard = await vi.waitUntil(
      () => {
        const us = voice.utterances(guildId).filter((u) => u.start >= started && u.complete);
        return us.length >= 3 ? us : undefined;
      },
      { timeout: 60_000, message: 'three utterances' },
    );
    expect(heard).toHaveLength(3);
    for (const [i, text] of sent.entries()) {
      const expected = await mp3DurationOf(text);
      // The fake counts from the first to the last non-silent frame; the emulator's audio ends in
      // a short fade, which matters for a two-syllable clip, hence the 200 ms floor.
      expect(Math.abs(heard[i]!.durationMs - expected), `utterance ${i + 1}`).toBeLessThan(Math.max(0.1 * expected, 200));
      expectE2ee(heard[i]!);
    }
  });

  it('/skip ends the current utterance early and the next one starts', async () => {
    const long = 'これはとても長いメッセージです。スキップされるまで読み続けます。まだまだ続きます。';
    const next = '次のメッセージ';
    const started = performance.now();
    const before = standardRequests(h.emulator).length;
    const speaking = voice.waitForEvent('packet', (p) => p.guildId === guildId && !p.silent && p.receivedAt >= started, 30_000);
    await h.discord.sendMessage({ channelId: DEFAULT_IDS.general, author: alice, content: long });
    // Sent once the first is on its way, so the two are not merged into one request (coalescing).
    await vi.waitUntil(() => standardRequests(h.emulator).length > before, { timeout: 20_000, message: 'the long request' });
    await h.discord.sendMessage({ channelId: DEFAULT_IDS.general, author: alice, content: next });
    await vi.waitUntil(() => standardRequests(h.emulator).length > before + 1, { timeout: 20_000, message: 'the next request' });
    await speaking;
    // Half a second of it heard (25 frames of 20 ms) before the skip.
    let frames = 0;
    await voice.waitForEvent('packet', (p) => p.guildId === guildId && !p.silent && p.receivedAt >= started && ++frames >= 25, 30_000);
    const skip = await h.discord.sendInteraction({ channelId: DEFAULT_IDS.general, user: alice, name: 'skip', locale: 'en-US' });
    expect(String((await skip.waitForResponse((r) => r.kind === 'callback')).data?.content)).toContain('Skipped');
    const heard = await vi.waitUntil(
      () => {
        const us = voice.utterances(guildId).filter((u) => u.start >= started && u.complete);
        return us.length >= 2 ? us : undefined;
      },
      { timeout: 30_000, message: 'the next utterance' },
    );
    const longText = standardRequests(h.emulator).find((r) => r.text.includes('スキップされるまで'))!.text;
    const nextText = standardRequests(h.emulator).find((r) => r.text.includes(next))!.text;
    expect(heard[0]!.durationMs).toBeLessThan((await mp3DurationOf(longText)) * 0.7);
    expect(Math.abs(heard[1]!.durationMs - (await mp3DurationOf(nextText))) / (await mp3DurationOf(nextText))).toBeLessThan(0.1);
    heard.slice(0, 2).forEach(expectE2ee);
  });

  it('/voice preview plays the sample to a member in the call with the bot; a member elsewhere gets it as a private file', async () => {
    const sample = 'Hello, this is how I will read your messages.';
    const preview = (user: { id: string; username: string }) =>
      h.discord.sendInteraction({
        channelId: DEFAULT_IDS.general,
        user,
        name: 'voice',
        locale: 'en-US',
        options: [{ name: 'preview', type: 1, options: [{ name: 'voice', type: 3, value: 'en-US-Wavenet-C' }] }],
      });
    const elsewhere = await preview({ id: DEFAULT_IDS.bob, username: 'bob' });
    expect((await elsewhere.waitForResponse((r) => r.kind === 'callback')).data?.flags).toBe(64);
    const file = await elsewhere.waitForResponse((r) => r.files.length > 0, 20_000);
    expect(file.files[0]!.name).toMatch(/\.mp3$/);
    const started = performance.now();
    const played = await preview(alice);
    const reply = await played.waitForResponse((r) => r.kind === 'editOriginal', 20_000);
    expect(reply.files).toHaveLength(0);
    await voice.waitForEvent('packet', (p) => p.guildId === guildId && !p.silent && p.receivedAt >= started, 30_000);
    // The same sample again: the cached audio, no second request.
    expect(
      standardRequests(h.emulator)
        .filter((r) => r.voice === 'en-US-Wavenet-C')
        .map((r) => r.text),
    ).toEqual([sample]);
    // Cut short: the sample need not be heard to its end.
    await h.discord.sendInteraction({ channelId: DEFAULT_IDS.general, user: alice, name: 'skip', locale: 'en-US' });
    await vi.waitUntil(() => voice.utterances(guildId).some((u) => u.start >= started && u.complete), { timeout: 30_000 });
  });
});

describe('voice resilience', () => {
  it('4015: the session resumes and playback continues', async () => {
    const resumed = new Promise<void>((resolve) => voice.once('resume', () => resolve()));
    voice.closeConnection(guildId, 4015);
    await resumed;
    const started = performance.now();
    await say('再開後も読む');
    const heard = await voice.waitForAudio({ guildId, startedAfter: started, minDurationMs: 500, timeoutMs: 30_000 });
    expect(heard.rmsDb).toBeGreaterThan(-40);
    // The DAVE group outlives a resume: same keys, no new commit needed.
    expectE2ee(heard);
  });

  it('4006: the bot rejoins with a new session and keeps speaking', async () => {
    const sessionsBefore = voice.sessions.length;
    voice.closeConnection(guildId, 4006);
    await vi.waitUntil(() => voice.sessions.length > sessionsBefore, { timeout: 30_000, message: 'a new voice session' });
    // The new session makes a new group with the listener (after the sole member reset).
    await voice.waitForDave(guildId);
    const started = performance.now();
    await say('また繋がった');
    const heard = await voice.waitForAudio({ guildId, startedAfter: started, minDurationMs: 500, timeoutMs: 30_000 });
    expect(heard.rmsDb).toBeGreaterThan(-40);
    expectE2ee(heard);
  });

  it('4014: the session is cleaned up, and a later /join works', async () => {
    voice.closeConnection(guildId, 4014);
    await vi.waitUntil(() => h.bot.context.voice.sessions(guildId).length === 0, { timeout: 30_000, message: 'session cleanup' });
    const sessionsBefore = voice.sessions.length;
    await join();
    expect(voice.sessions.length).toBeGreaterThan(sessionsBefore);
    const started = performance.now();
    await say('また参加した');
    const heard = await voice.waitForAudio({ guildId, startedAfter: started, minDurationMs: 500, timeoutMs: 30_000 });
    expect(heard.rmsDb).toBeGreaterThan(-40);
    expectE2ee(heard);
  });

  it('leaves when the last human leaves the voice channel', async () => {
    expect(h.bot.context.voice.sessions(guildId).length > 0).toBe(true);
    const leavesBefore = h.discord.botVoiceStates.filter((s) => s.channelId === null).length;
    await h.discord.setVoiceState(alice.id, guildId, null);
    for (const listener of voice.dave.listeners(guildId)) voice.dave.detachListener(listener);
    await vi.waitUntil(() => h.discord.botVoiceStates.filter((s) => s.channelId === null).length > leavesBefore, {
      timeout: 20_000,
      message: 'the bot leaving',
    });
    expect(h.bot.context.voice.sessions(guildId).length > 0).toBe(false);
  });
});
