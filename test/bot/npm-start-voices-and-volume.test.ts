import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { APIApplicationCommandInteractionDataOption } from 'discord.js';
import { startEmulator, type Emulator } from '@yomiage/tts-emulator';
import { DEFAULT_IDS, rmsDb, startFakeDiscord, startFakeVoiceServer, type FakeDiscord, type FakeVoiceServer } from '@yomiage/local-discord';
import { OPUS_SILENCE_FRAME } from '@yomiage/local-discord/voice/dave/frame';
import { firstPoolVoice } from '../../src/domain/voice-pool.ts';
import { standardRequests } from '../support/bot-harness.ts';
import { startChildBot, type ChildBot } from '../support/child-bot.ts';
import { pitchHz } from '../support/pitch.ts';

// Voices told apart and evened out through the real entry point: `npm start` as a child process
// against the loopback Discord (its voice server decrypts every frame for a listener, end to end
// encrypted with DAVE) and the emulator (its tones: each voice its own pitch). alice and bob, with no
// voice of their own, sit in one call; the server's pool has two voices, and both of them have the
// same first voice: in the call they must be heard with different ones. Then alice halves her
// volume: her next line, already cached, is played from the cache (no request) and heard quieter.
// One bot for the file; the steps share its state.
const guildId = DEFAULT_IDS.guild;
const alice = { id: DEFAULT_IDS.alice, username: 'alice' }; // no special permission
const bob = { id: DEFAULT_IDS.bob, username: 'bob' }; // Moderator: Manage Server
const POOL = ['ja-JP-Wavenet-A', 'ja-JP-Wavenet-C'];
const LINE = 'たなかさんのことばです';
type Option = APIApplicationCommandInteractionDataOption;

let emulator: Emulator;
let discord: FakeDiscord;
let voice: FakeVoiceServer;
let dataDir: string;
let bot: ChildBot;

beforeAll(async () => {
  voice = await startFakeVoiceServer();
  // Tones, not espeak-ng: made at once however busy the machine, and each voice at its own pitch.
  [emulator, discord] = await Promise.all([startEmulator({ control: true, speech: 'tones' }), startFakeDiscord({ voiceServer: voice })]);
  dataDir = mkdtempSync(join(tmpdir(), 'yomiage-voices-'));
  bot = await startChildBot({ discord, emulator, dataDir, caCertPem: voice.caCertPem, env: { AUTO_READ_MAX_AGE_SECONDS: '600' } });
}, 60_000);
afterAll(async () => {
  await bot?.stop('SIGKILL');
  await Promise.all([emulator?.close(), discord?.close(), voice?.close()]);
  rmSync(dataDir, { recursive: true, force: true });
});

async function command(user: { id: string; username: string }, name: string, options: Option[], locale = 'en-US'): Promise<string> {
  const i = await discord.sendInteraction({ channelId: DEFAULT_IDS.general, user, name, locale, options });
  const r = await i.waitForResponse((r) => (r.kind === 'callback' || r.kind === 'editOriginal') && r.data?.content !== undefined, 30_000);
  return String(r.data?.content);
}
const sub = (name: string, options: Option[] = []) => [{ name, type: 1, options } as Option];

/**
 * `author` writes LINE in #general: the request it made (none when it came from the cache) and the
 * clip the listener heard, whole: every packet from then until the bot is quiet for 300 ms, the
 * player's own silence frames aside (so a clip a late player padded, or cut in two, is still the
 * same clip, however loaded the machine).
 */
async function say(author: { id: string; username: string }) {
  const asked = standardRequests(emulator).length;
  const startedAfter = performance.now();
  await discord.sendMessage({ channelId: DEFAULT_IDS.general, author, content: LINE });
  await voice.waitForAudio({ guildId, startedAfter, minDurationMs: 400, timeoutMs: 30_000 });
  await vi.waitUntil(() => performance.now() - voice.packets.at(-1)!.receivedAt > 300, { timeout: 30_000, interval: 20 });
  const clip = voice.packets
    .filter((p) => p.guildId === guildId && p.receivedAt >= startedAfter && !p.opus.equals(OPUS_SILENCE_FRAME))
    .map((p) => p.pcm);
  return { requests: standardRequests(emulator).slice(asked), clip };
}

describe('npm start: voices told apart in one call, a member heard quieter at volume 0.5', () => {
  /** alice's line as the cache plays it at volume 1. */
  let asMade: Awaited<ReturnType<typeof say>>;

  it('an admin fills the voice pool (ja and en); alice and bob, in one call, are heard with two different voices of it', async () => {
    // Each clip is its line alone (no name before it), so the same line is the same request; read at
    // twice the speed, so the story waits half as long for what is heard in real time.
    await command(bob, 'config', sub('read-names', [{ name: 'value', type: 5, value: false }]));
    await command(bob, 'config', sub('speed', [{ name: 'value', type: 10, value: 2 }]));
    const pool = (voiceId: string) =>
      sub('voice-pool', [{ name: 'action', type: 3, value: 'add' } as Option, { name: 'voice', type: 3, value: voiceId }]);
    expect(await command(bob, 'config', pool(POOL[0]!), 'ja')).toContain(`声の候補に ${POOL[0]} を追加しました。`);
    expect(await command(bob, 'config', pool(POOL[1]!))).toContain(`Added ${POOL[1]} to the voice pool.`);
    // Alone, both would speak with the same voice of this pool: the call must tell them apart.
    expect(firstPoolVoice(POOL, alice.id)).toBe(firstPoolVoice(POOL, bob.id));

    for (const member of [alice, bob]) await discord.setVoiceState(member.id, guildId, DEFAULT_IDS.voice);
    voice.simulateListener({ guildId, channelId: DEFAULT_IDS.voice, userId: alice.id });
    expect(await command(alice, 'join', [])).toContain('Joined');
    await voice.waitForDave(guildId);

    const first = await say(alice);
    const second = await say(bob);
    const [a, b] = [first.requests, second.requests].map((r) => r.find((q) => q.text === LINE)?.voice);
    expect(POOL).toContain(a);
    expect(POOL).toContain(b);
    expect(a).not.toBe(b);
    // Heard, not only asked: the listener hears two voices a member tells apart (over 15% apart in pitch).
    const [pa, pb] = [pitchHz(first.clip), pitchHz(second.clip)];
    expect(Math.max(pa, pb) / Math.min(pa, pb), `${pa.toFixed(0)} Hz and ${pb.toFixed(0)} Hz`).toBeGreaterThan(1.15);
    // Each keeps theirs from one message to the next: the cache answers (its key is the voice with
    // the text, speed and pitch), so no request at all.
    expect((await say(bob)).requests).toEqual([]);
    asMade = await say(alice);
    expect(asMade.requests).toEqual([]);
  }, 90_000);

  it('alice sets her volume to 0.5 (ja): her line again makes no request, and the listener hears it 6 dB quieter (within 1 dB)', async () => {
    expect(await command(alice, 'voice', sub('volume', [{ name: 'value', type: 10, value: 0.5 }]), 'ja')).toBe(
      'ボイスチャンネルでのあなたの声の音量を 0.5 にしました。',
    );
    const quieter = await say(alice);
    expect(quieter.requests).toEqual([]);
    // Against the same clip played from the cache at volume 1, over all of it (its quiet edges too,
    // which the listener's own loudness leaves out once under its threshold).
    const [before, after] = [rmsDb(asMade.clip), rmsDb(quieter.clip)];
    const drop = after - before;
    expect(drop, `${before.toFixed(1)} dBFS then ${after.toFixed(1)} dBFS`).toBeGreaterThan(-7);
    expect(drop).toBeLessThan(-5);
    // The same voice, only quieter.
    expect(pitchHz(quieter.clip) / pitchHz(asMade.clip)).toBeCloseTo(1, 1);
    expect(bot.logs.filter((l) => l.level >= 50)).toEqual([]);
  }, 60_000);
});
