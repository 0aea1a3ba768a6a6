import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import opus from '@discordjs/opus';
import prism from 'prism-media';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Mp3OpusStream } from '../../src/audio/mp3-opus.ts';
import { mp3ToOggOpus } from '../../src/audio/transcode.ts';
import { ffmpegOggOpus } from '../support/ogg-pages.ts';
import { clipPackets } from '../../src/voice/resources.ts';
import { ffmpeg } from '@yomiage/local-discord/test/voice/helpers';

// The in-process MP3 player against what a listener hears: the Opus packets are
// decoded back to PCM and compared with the Ogg Opus that ffmpeg makes of the same MP3 (what the
// cache played before it made its own). Fixtures are made here by ffmpeg from lavfi tones.

let dir: string;
/** 0.5 s at 300 Hz then 0.5 s at 1500 Hz, 24 kHz mono at 48 kbit/s (the service's MP3 shape). */
let twoTones: Buffer;
/** The same tones, 44.1 kHz stereo, with 0.3 s of leading silence. */
let stereoLate: Buffer;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mp3-opus-'));
  const tones = (rate: number, channels: number, lead: number, out: string) =>
    ffmpeg([
      '-f',
      'lavfi',
      '-i',
      `anullsrc=r=${rate}:cl=mono:d=${lead || 0.001}`,
      '-f',
      'lavfi',
      '-i',
      `sine=frequency=300:duration=0.5:sample_rate=${rate}`,
      '-f',
      'lavfi',
      '-i',
      `sine=frequency=1500:duration=0.5:sample_rate=${rate}`,
      '-filter_complex',
      `[0][1][2]concat=n=3:v=0:a=1${lead ? '' : ',atrim=start=0.001'}`,
      '-ar',
      String(rate),
      '-ac',
      String(channels),
      '-b:a',
      '48k',
      out,
    ]);
  await Promise.all([tones(24_000, 1, 0, join(dir, 'two.mp3')), tones(44_100, 2, 0.3, join(dir, 'late.mp3'))]);
  [twoTones, stereoLate] = await Promise.all([readFile(join(dir, 'two.mp3')), readFile(join(dir, 'late.mp3'))]);
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function collect(stream: Readable): Promise<Buffer[]> {
  const packets: Buffer[] = [];
  for await (const packet of stream) packets.push(packet as Buffer);
  return packets;
}

/** Left channel of the decoded packets, as floats. */
function decode(packets: Buffer[]): Float32Array {
  const decoder = new opus.OpusEncoder(48_000, 2);
  const out: number[] = [];
  for (const p of packets) {
    const pcm = decoder.decode(p);
    const samples = new Int16Array(pcm.buffer, pcm.byteOffset, pcm.length / 2);
    for (let i = 0; i < samples.length; i += 2) out.push(samples[i]! / 32768);
  }
  return Float32Array.from(out);
}

/** Upward zero crossings per second in [from, to) seconds. */
function pitch(x: Float32Array, from: number, to: number): number {
  let crossings = 0;
  for (let i = Math.floor(from * 48_000) + 1; i < Math.floor(to * 48_000); i++) if (x[i - 1]! < 0 && x[i]! >= 0) crossings++;
  return crossings / (to - from);
}

/** Where the sound starts: the first sample louder than -40 dBFS. */
const onset = (x: Float32Array) => x.findIndex((v) => Math.abs(v) > 0.01) / 48_000;

describe('Mp3OpusStream', () => {
  it("GIVEN a 1 s MP3 of two tones THEN 20 ms Opus packets carry the whole clip, in order, as ffmpeg's Ogg Opus does", async () => {
    const packets = await collect(new Mp3OpusStream(twoTones));
    const ours = decode(packets);
    const ogg = ffmpegOggOpus(twoTones);
    const theirs = decode(await collect(Readable.from([ogg]).pipe(new prism.opus.OggDemuxer())));

    // Every frame is 20 ms of 48 kHz stereo; the clip is as long as ffmpeg's, within two frames.
    expect(ours.length % 960).toBe(0);
    expect(Math.abs(packets.length - theirs.length / 960)).toBeLessThanOrEqual(2);
    expect(packets.length).toBeGreaterThanOrEqual(50);
    // The low tone first, then the high one: nothing reordered, lost or pitch-shifted.
    expect(pitch(ours, 0.1, 0.4)).toBeCloseTo(300, -1);
    expect(pitch(ours, 0.6, 0.9)).toBeCloseTo(1500, -2);
    expect(Math.abs(pitch(ours, 0.6, 0.9) - pitch(theirs, 0.6, 0.9))).toBeLessThan(20);
  });

  it('GIVEN 44.1 kHz stereo with 0.3 s of silence first THEN the silence is cut as the cache cuts it, and the tones follow at the right pitch', async () => {
    const ours = decode(await collect(new Mp3OpusStream(stereoLate)));
    const theirs = decode(await collect(Readable.from([ffmpegOggOpus(stereoLate)]).pipe(new prism.opus.OggDemuxer())));
    expect(onset(ours)).toBeLessThan(0.05);
    expect(Math.abs(onset(ours) - onset(theirs))).toBeLessThan(0.03);
    expect(pitch(ours, 0.1, 0.4)).toBeCloseTo(300, -1);
    expect(pitch(ours, 0.6, 0.9)).toBeCloseTo(1500, -2);
  });

  it('GIVEN bytes that are not an MP3 THEN the stream fails with AudioError decode_failed and gives no packet', async () => {
    const garbage = Buffer.alloc(8_000, 0x5a);
    const stream = new Mp3OpusStream(garbage);
    const error = await collect(stream).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ name: 'AudioError', code: 'decode_failed' });
    expect(stream.frames).toBe(0);
  });

  it('GIVEN an empty download THEN decode_failed too (nothing silently plays as success)', async () => {
    await expect(collect(new Mp3OpusStream(Buffer.alloc(0)))).rejects.toMatchObject({ code: 'decode_failed' });
  });

  it('GIVEN an MP3 cut off halfway (a broken download) THEN what arrived plays, and the stream ends', async () => {
    const half = twoTones.subarray(0, Math.floor(twoTones.length / 2));
    const packets = await collect(new Mp3OpusStream(half));
    expect(packets.length).toBeGreaterThan(15);
    expect(packets.length).toBeLessThan(40);
    expect(pitch(decode(packets), 0.1, 0.3)).toBeCloseTo(300, -1);
  });

  it('GIVEN several streams at once THEN each gets its own audio (decoders from the pool are not shared)', async () => {
    const [a, b] = await Promise.all([collect(new Mp3OpusStream(twoTones)), collect(new Mp3OpusStream(stereoLate))]);
    expect(pitch(decode(a), 0.1, 0.4)).toBeCloseTo(300, -1);
    expect(pitch(decode(b), 0.1, 0.4)).toBeCloseTo(300, -1);
    const again = await collect(new Mp3OpusStream(twoTones));
    expect(again.length).toBe(a.length);
  });
});

describe('clipPackets (a name and its line as one stream)', () => {
  it('GIVEN a cached Ogg clip then an MP3 not cached yet (a miss) THEN one stream carries both, in order, with no gap between them', async () => {
    const oggPath = join(dir, 'name.ogg');
    await writeFile(oggPath, await mp3ToOggOpus(twoTones));
    const first = await collect(Readable.from([await readFile(oggPath)]).pipe(new prism.opus.OggDemuxer()));
    const second = await collect(new Mp3OpusStream(twoTones));
    const joined = await collect(clipPackets([{ oggPath }, { mp3: twoTones }], 'g1'));
    // Every packet of both clips and nothing in between: the player sees one resource, so no
    // end-of-resource silence and no restart separate them at the voice server.
    expect(joined.length).toBe(first.length + second.length);
    const x = decode(joined);
    const at = first.length * 0.02;
    expect(pitch(x, 0.1, 0.4)).toBeCloseTo(300, -1);
    expect(pitch(x, 0.6, 0.9)).toBeCloseTo(1500, -2);
    expect(pitch(x, at + 0.1, at + 0.4)).toBeCloseTo(300, -1);
    expect(pitch(x, at + 0.6, at + 0.9)).toBeCloseTo(1500, -2);
  });

  it('GIVEN an MP3 part whose file is gone THEN the stream fails with playback_failed (the player reports it)', async () => {
    const error = await collect(clipPackets([{ mp3: twoTones }, { mp3Path: join(dir, 'gone.mp3') }], 'g1')).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ name: 'VoiceSessionError', code: 'playback_failed' });
  });
});
