/**
 * bench:queue's last check: a name and its line played as clips of their own leave
 * no audible gap between them at the voice server. The real bot (in this process, started as the
 * test harness starts it) reads messages from two members in turn, so each is read with a name;
 * with the rate budget idle it asks for the name and the line alone, caches both and plays them
 * back to back. The voice server decrypts (DAVE) and decodes every packet.
 *
 * What is measured: the silence at the server from the last sounding packet of the name to the
 * first sounding packet of the line, minus the silence the two clips carry themselves (the name's
 * trailing pause "、" and each MP3's encoder padding, measured by decoding the same Ogg Opus files
 * the same way). What remains is what playback added between the clips.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import opus from '@discordjs/opus';
import prism from 'prism-media';
import { DEFAULT_IDS, startFakeVoiceServer, trustCertificate } from '@yomiage/local-discord';
import { rmsDb } from '@yomiage/local-discord/voice/utterances';
import { AudioCache } from '../src/speech/synthesis/cache.ts';
import { startHarness, standardRequests } from '../test/support/bot-harness.ts';

export interface GapResult {
  trials: number;
  /** The largest added silence over the trials (ms); Infinity when a trial was not played as two clips. */
  addedMaxMs: number;
  detail: string;
}

const PACKET_MS = 20;
/** The voice server's threshold (its default): quieter packets are silence. */
const SILENCE_DB = -60;
const VOICE = 'ja-JP-Wavenet-B';

/** Which Opus packets of an Ogg Opus file decode to silence, in order. */
async function silentPackets(oggPath: string): Promise<boolean[]> {
  const decoder = new opus.OpusEncoder(48_000, 2);
  const out: boolean[] = [];
  for await (const packet of Readable.from([readFileSync(oggPath)]).pipe(new prism.opus.OggDemuxer())) {
    const pcm = decoder.decode(packet as Buffer);
    out.push(rmsDb(new Int16Array(pcm.buffer, pcm.byteOffset, pcm.length / 2)) < SILENCE_DB);
  }
  return out;
}

export async function measureBackToBack(trials = 6): Promise<GapResult> {
  const voice = await startFakeVoiceServer();
  trustCertificate(voice.caCertPem);
  // A rate budget with room to spare: this check is about playback, and a name gets a request of its
  // own only while one is to spare (src/tts/limiter/pacing.ts `hasSpare`).
  const roomy = { standard: { limit: 300, windowMs: 60_000 }, advanced: { limit: 100, windowMs: 60_000 } };
  const h = await startHarness({
    discord: { voiceEndpoint: () => voice.endpoint },
    emulator: { synthesisDelayMs: 0, rate: roomy },
    bot: { rateLimits: roomy },
  });
  const authors = [
    { id: DEFAULT_IDS.alice, username: 'alice' },
    { id: DEFAULT_IDS.bob, username: 'bob' },
  ];
  const guildId = DEFAULT_IDS.guild;
  const lines: string[] = [];
  const names = new Map<string, string>();
  let addedMax = 0;
  try {
    await h.discord.setVoiceState(authors[0]!.id, guildId, DEFAULT_IDS.voice);
    voice.simulateListener({ guildId, channelId: DEFAULT_IDS.voice, userId: authors[0]!.id });
    const joined = await h.discord.sendInteraction({ channelId: DEFAULT_IDS.general, user: authors[0]!, name: 'join', locale: 'en-US' });
    await joined.waitForResponse((r) => r.kind === 'editOriginal', 30_000);
    await voice.waitForDave(guildId);
    // A name becomes a clip of its own from its third reading (src/speech/queue/batching/reuse.ts `ReadCounts`): each is read
    // twice first, in turn, so every trial below reads it again.
    for (let i = 0; i < 4; i++) {
      const before = standardRequests(h.emulator).length;
      await h.discord.sendMessage({ guildId, channelId: DEFAULT_IDS.general, author: authors[i % 2]!, content: `準備${i + 1}です` });
      for (let w = 0; w < 500 && standardRequests(h.emulator).length === before; w++) await new Promise((r) => setTimeout(r, 20));
      await voice.waitForAudio({ guildId, startedAfter: performance.now() - 5_000, timeoutMs: 30_000 });
      await new Promise((r) => setTimeout(r, 1_500));
    }
    for (let i = 0; i < trials; i++) {
      const author = authors[i % 2]!;
      const body = `テスト${i + 1}番のメッセージです`;
      const t0 = performance.now();
      await h.discord.sendMessage({ guildId, channelId: DEFAULT_IDS.general, author, content: body });
      const heard = await voice.waitForAudio({ guildId, startedAfter: t0, timeoutMs: 30_000 });
      // Until the utterance is over (speaking off after its trailing silence frames).
      for (let w = 0; w < 300 && !voice.utterances(guildId).find((u) => u.start === heard.start)?.complete; w++)
        await new Promise((r) => setTimeout(r, 20));
      await new Promise((r) => setTimeout(r, 300));
      const sent = standardRequests(h.emulator).map((r) => r.text);
      // The name clip was asked for at the author's first message; later ones play it from the cache.
      const name = names.get(author.id) ?? sent.findLast((t) => t.endsWith('、') && !t.includes(body));
      if (name !== undefined) names.set(author.id, name);
      if (!sent.includes(body) || name === undefined) {
        lines.push(`  trial ${i + 1}: not played as two clips (requests: ${JSON.stringify(sent.slice(-2))})`);
        addedMax = Number.POSITIVE_INFINITY;
        continue;
      }
      const file = (text: string) => {
        const key = AudioCache.key({ endpoint: 'standard', voice: VOICE, speed: 1, pitch: 0, text });
        return join(h.dataDir, 'audio', key.slice(0, 2), `${key}.ogg`);
      };
      const nameSilent = await silentPackets(file(name));
      const bodySilent = await silentPackets(file(body));
      const ssrcPackets = voice.packets.filter((p) => p.guildId === guildId && p.receivedAt >= t0);
      const n = nameSilent.length;
      const lastLoudName = nameSilent.lastIndexOf(false);
      const firstLoudBody = bodySilent.indexOf(false);
      // At the server: the same packet positions (the stream is the name's packets, then the line's).
      let serverLast = -1;
      for (let k = Math.min(n - 1, ssrcPackets.length - 1); k >= 0; k--)
        if (!ssrcPackets[k]!.silent) {
          serverLast = k;
          break;
        }
      let serverFirst = -1;
      for (let k = n; k < ssrcPackets.length; k++)
        if (!ssrcPackets[k]!.silent) {
          serverFirst = k;
          break;
        }
      if (serverLast < 0 || serverFirst < 0) {
        lines.push(`  trial ${i + 1}: could not find both clips in ${ssrcPackets.length} packets`);
        addedMax = Number.POSITIVE_INFINITY;
        continue;
      }
      const atServer = ssrcPackets[serverFirst]!.receivedAt - ssrcPackets[serverLast]!.receivedAt - PACKET_MS;
      const inClips = (n - 1 - lastLoudName + firstLoudBody) * PACKET_MS;
      const added = atServer - inClips;
      addedMax = Math.max(addedMax, added);
      const expectedPackets = n + bodySilent.length;
      lines.push(
        `  trial ${i + 1} (${JSON.stringify(name)} + ${JSON.stringify(body)}): silence at the server ${atServer.toFixed(0)} ms, ` +
          `in the clips themselves ${inClips} ms, added ${added.toFixed(0)} ms; packets ${ssrcPackets.length} (clips ${expectedPackets} + end padding)`,
      );
    }
  } finally {
    await h.close();
    await voice.close();
  }
  return { trials, addedMaxMs: addedMax, detail: lines.join('\n') };
}
