import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import opus from '@discordjs/opus';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyGain, GainedOpusStream, softLimit } from '../../src/audio/gain.ts';
import { Mp3OpusStream } from '../../src/audio/mp3-opus.ts';
import { FRAME_SAMPLES, VOICE_CHANNELS, VOICE_SAMPLE_RATE } from '../../src/util/voice-format.ts';
import { ffmpeg } from '@yomiage/local-discord/test/voice/helpers';
import { audioFor } from '@yomiage/tts-emulator';

// A member's volume applied by the bot to decoded audio: measured as a listener would, by the RMS of
// the PCM before and after (and of the Opus packets decoded back, as the local Discord's listener
// decodes them). Fixtures: sine tones made here (and an MP3 of one by ffmpeg's lavfi).

const dB = (ratio: number) => 20 * Math.log10(ratio);
function rms(samples: Int16Array): number {
  let sum = 0;
  for (const s of samples) sum += s * s;
  return Math.sqrt(sum / samples.length);
}
/** 20 ms frames of a 440 Hz stereo sine at `amplitude` (full scale 1), `frames` long. */
function sineFrames(amplitude: number, frames: number): Int16Array[] {
  const out: Int16Array[] = [];
  for (let f = 0; f < frames; f++) {
    const frame = new Int16Array(FRAME_SAMPLES * VOICE_CHANNELS);
    for (let i = 0; i < FRAME_SAMPLES; i++) {
      const v = Math.round(amplitude * 32767 * Math.sin((2 * Math.PI * 440 * (f * FRAME_SAMPLES + i)) / VOICE_SAMPLE_RATE));
      frame[i * 2] = v;
      frame[i * 2 + 1] = v;
    }
    out.push(frame);
  }
  return out;
}
const joined = (parts: readonly Int16Array[]) => {
  const all = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) all.set(p, (at += p.length) - p.length);
  return all;
};
async function collect(stream: Readable): Promise<Buffer[]> {
  const packets: Buffer[] = [];
  for await (const packet of stream) packets.push(packet as Buffer);
  return packets;
}
/** Opus packets decoded back to PCM (the first frames left out: the codec's start-up). */
function decoded(packets: readonly Buffer[]): Int16Array {
  const decoder = new opus.OpusEncoder(VOICE_SAMPLE_RATE, VOICE_CHANNELS);
  return joined(
    packets.slice(3).map((p) => {
      const pcm = decoder.decode(p);
      return new Int16Array(pcm.buffer, pcm.byteOffset, pcm.byteLength / 2);
    }),
  );
}

describe('the gain on PCM', () => {
  it.each([
    [0.5, -6.02],
    [0.25, -12.04],
    [1.5, 3.52],
  ])('GIVEN a sine at -12 dBFS WHEN played at volume %s THEN its RMS moves by %s dB', (gain, expected) => {
    const pcm = joined(sineFrames(0.25, 10));
    const before = rms(pcm);
    applyGain(pcm, gain);
    expect(dB(rms(pcm) / before)).toBeCloseTo(expected, 1);
  });

  it('GIVEN volume 0 THEN silence', () => {
    const pcm = joined(sineFrames(0.5, 2));
    applyGain(pcm, 0);
    expect(rms(pcm)).toBe(0);
  });

  it('GIVEN a loud sine (peak 0.6) made twice as loud THEN soft-limited: quiet parts doubled exactly, peaks rounded off under full scale, none clipped', () => {
    const original = joined(sineFrames(0.6, 5));
    const pcm = original.slice();
    applyGain(pcm, 2);
    // Doubled, the peak would be 1.2 of full scale: a hard clip would hold about a third of the samples at 32767.
    const peak = Math.max(...pcm.map(Math.abs));
    expect(peak).toBeLessThan(32767);
    expect(peak).toBeGreaterThan(0.95 * 32767);
    expect(rms(pcm)).toBeGreaterThan(rms(original) * 1.5);
    for (const [i, s] of original.entries()) if (Math.abs(s) * 2 < 0.8 * 32768) expect(Math.abs(pcm[i]! - s * 2)).toBeLessThanOrEqual(1);
  });

  it('GIVEN samples below the knee THEN unchanged; above it THEN bent smoothly (continuous, monotonic, under 1)', () => {
    expect(softLimit(0.5)).toBe(0.5);
    expect(softLimit(-0.8)).toBe(-0.8);
    let last = 0;
    for (let x = 0; x <= 4; x += 0.01) {
      const y = softLimit(x);
      expect(y).toBeGreaterThanOrEqual(last);
      expect(y).toBeLessThan(1);
      expect(y - last).toBeLessThanOrEqual(0.0101);
      expect(softLimit(-x)).toBe(-y);
      last = y;
    }
  });
});

describe('a cached clip (Opus packets) at another volume', () => {
  it('GIVEN the packets of a tone WHEN played at volume 0.5 THEN the listener decodes about 6 dB less; the packets as many', async () => {
    const encoder = new opus.OpusEncoder(VOICE_SAMPLE_RATE, VOICE_CHANNELS);
    encoder.setBitrate(64_000);
    const packets = sineFrames(0.3, 50).map((f) => encoder.encode(Buffer.from(f.buffer)));
    const quieter = await collect(Readable.from(packets, { objectMode: true }).pipe(new GainedOpusStream(0.5)));
    expect(quieter).toHaveLength(packets.length);
    expect(dB(rms(decoded(quieter)) / rms(decoded(packets)))).toBeCloseTo(-6, 0);
    const louder = await collect(Readable.from(packets, { objectMode: true }).pipe(new GainedOpusStream(2)));
    expect(dB(rms(decoded(louder)) / rms(decoded(packets)))).toBeGreaterThan(4);
  });

  it("GIVEN a listener's decoder that heard a clip before THEN the clip at 0.5 starts as quiet as it goes on: no fade-in", async () => {
    // The emulator's speech-like tones, as the cache holds them (Opus packets of the in-process encoder).
    const { bytes } = await audioFor({ kind: 'standard', text: 'たなかさんのことばです', voice: 'ja-JP-Wavenet-A', speed: 2, pitch: 0 });
    const plain = await collect(new Mp3OpusStream(bytes));
    const half = await collect(Readable.from(plain, { objectMode: true }).pipe(new GainedOpusStream(0.5)));
    /** dBFS of the first `n` frames and of the whole, decoded as a listener does after a clip and the player's 5 silence frames. */
    const heard = (packets: readonly Buffer[], n: number) => {
      const decoder = new opus.OpusEncoder(VOICE_SAMPLE_RATE, VOICE_CHANNELS);
      for (const p of [...plain, ...Array.from({ length: 5 }, () => Buffer.from([0xf8, 0xff, 0xfe]))]) decoder.decode(p);
      const pcm = packets.map((p) => {
        const b = decoder.decode(p);
        return new Int16Array(b.buffer, b.byteOffset, b.byteLength / 2);
      });
      return { start: rms(joined(pcm.slice(0, n))), all: rms(joined(pcm)) };
    };
    const [a, b] = [heard(plain, 5), heard(half, 5)];
    expect(dB(b.all / a.all)).toBeCloseTo(-6, 0);
    expect(dB(b.start / a.start)).toBeGreaterThan(-8);
  });

  it('GIVEN a packet that is no Opus THEN the stream fails with decode_failed', async () => {
    const stream = Readable.from([Buffer.from('not opus at all, no, not this')], { objectMode: true }).pipe(new GainedOpusStream(0.5));
    await expect(collect(stream)).rejects.toMatchObject({ code: 'decode_failed' });
  });
});

describe('an MP3 (a cache miss) at another volume', () => {
  let dir: string;
  let mp3: Buffer;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gain-'));
    await ffmpeg([
      '-f',
      'lavfi',
      '-i',
      'sine=frequency=440:duration=1:sample_rate=24000',
      '-ac',
      '1',
      '-b:a',
      '48k',
      join(dir, 'tone.mp3'),
    ]);
    mp3 = await readFile(join(dir, 'tone.mp3'));
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('GIVEN volume 1 THEN the packets are exactly those of no volume (the cache’s); 0.5 THEN 6 dB quieter', async () => {
    const plain = await collect(new Mp3OpusStream(mp3));
    expect(await collect(new Mp3OpusStream(mp3, { volume: 1 }))).toEqual(plain);
    const half = await collect(new Mp3OpusStream(mp3, { volume: 0.5 }));
    expect(half).toHaveLength(plain.length);
    expect(dB(rms(decoded(half)) / rms(decoded(plain)))).toBeCloseTo(-6, 0);
  });
});
