import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import opus from '@discordjs/opus';
import prism from 'prism-media';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AudioError } from '../../src/audio/errors.ts';
import { mp3ToOggOpus } from '../../src/audio/transcode.ts';
import { probeDurationMs } from '../../src/audio/mp3-frames.ts';
import { ffmpegPath } from '@yomiage/media';
import { ffmpegOggOpus, readOggPages, readOpusHead } from '../support/ogg-pages.ts';

// Fixtures: made here by ffmpeg from a sine tone, like the service's own files (its documented formats:
// advanced = MPEG-2 Layer III 24 kHz mono 160 kbit/s, standard sample = 16 kHz mono; both Lavf).
let dir: string;
function makeMp3(name: string, seconds: number, rate: number, channels: number, bitrate: string, extra: string[] = []): Buffer {
  const file = join(dir, name);
  // prettier-ignore
  execFileSync(ffmpegPath(), ['-v', 'error', '-y', '-f', 'lavfi', '-i', `sine=frequency=440:duration=${seconds}`,
    '-ar', String(rate), '-ac', String(channels), '-b:a', bitrate, ...extra, file]);
  return readFileSync(file);
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'transcode-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('probeDurationMs', () => {
  it.each([
    { label: 'MPEG-2 24 kHz mono (advanced output)', seconds: 3.5, rate: 24_000, channels: 1, bitrate: '160k' },
    { label: 'MPEG-2 16 kHz mono (standard output)', seconds: 2, rate: 16_000, channels: 1, bitrate: '160k' },
    { label: 'MPEG-1 44.1 kHz stereo', seconds: 5, rate: 44_100, channels: 2, bitrate: '128k' },
    { label: 'MPEG-2.5 8 kHz mono', seconds: 4, rate: 8_000, channels: 1, bitrate: '32k' },
  ])('$label of $seconds s is measured within 3 %', ({ seconds, rate, channels, bitrate }) => {
    const mp3 = makeMp3(`${rate}.mp3`, seconds, rate, channels, bitrate);
    expect(mp3.subarray(0, 3).toString('latin1')).toBe('ID3'); // ffmpeg writes an ID3v2 tag first
    expect(Math.abs(probeDurationMs(mp3) - seconds * 1000)).toBeLessThanOrEqual(seconds * 30);
  });

  it('skips a large ID3v2 tag and ignores an ID3v1 trailer', () => {
    const mp3 = makeMp3('tagged.mp3', 3, 24_000, 1, '160k', ['-metadata', `comment=${'x'.repeat(5_000)}`, '-write_id3v1', '1']);
    expect(Math.abs(probeDurationMs(mp3) - 3000)).toBeLessThanOrEqual(90);
  });

  it('is 0 for data that holds no MP3 frame', () => {
    expect(probeDurationMs(Buffer.from('definitely not audio'))).toBe(0);
    expect(probeDurationMs(Buffer.alloc(0))).toBe(0);
  });
});

describe('mp3ToOggOpus (in-process)', () => {
  it('GIVEN a 2 s MP3 THEN a valid Ogg Opus: CRCs, pre-skip and input rate, granules counting 48 kHz samples, end of stream', async () => {
    const mp3 = makeMp3('speech.mp3', 2, 24_000, 1, '160k');
    const pages = readOggPages(await mp3ToOggOpus(mp3));
    for (const page of pages) expect(page.computedCrc).toBe(page.crc);
    expect(pages.map((p) => p.sequence)).toEqual(pages.map((_, i) => i));
    expect(new Set(pages.map((p) => p.serial)).size).toBe(1);
    // Beginning of stream on the first page, end of stream on the last, nothing in between.
    expect(pages.map((p) => p.flags)).toEqual([2, ...pages.slice(1, -1).map(() => 0), 4]);
    expect(readOpusHead(pages[0]!.packets[0]!)).toEqual({ channels: 2, preSkip: 312, inputSampleRate: 24_000 });
    expect(pages[1]!.packets[0]!.toString('latin1', 0, 8)).toBe('OpusTags');
    // Each audio page's granule: pre-skip + 960 samples per 20 ms packet so far; the last one ends at the audio's end.
    let packets = 0;
    for (const page of pages.slice(2, -1)) {
      packets += page.packets.length;
      expect(page.granule).toBe(BigInt(312 + packets * 960));
    }
    packets += pages.at(-1)!.packets.length;
    const last = Number(pages.at(-1)!.granule) - 312;
    expect(last).toBeGreaterThan((packets - 1) * 960);
    expect(last).toBeLessThanOrEqual(packets * 960);
    // As long as the MP3, and as long as ffmpeg's Ogg Opus of it (what the cache held before).
    expect(Math.abs(last / 48 - probeDurationMs(mp3))).toBeLessThanOrEqual(30);
    const theirs = readOggPages(ffmpegOggOpus(mp3));
    expect(Math.abs(last - Number(theirs.at(-1)!.granule - BigInt(readOpusHead(theirs[0]!.packets[0]!).preSkip)))).toBeLessThanOrEqual(960);
  });

  it('GIVEN that Ogg THEN prism-media demuxes every packet and libopus decodes them to 48 kHz stereo', async () => {
    const ogg = await mp3ToOggOpus(makeMp3('demux.mp3', 1, 16_000, 1, '160k'));
    const packets: Buffer[] = [];
    for await (const p of Readable.from([ogg]).pipe(new prism.opus.OggDemuxer())) packets.push(p as Buffer);
    expect(packets.length).toBe(
      readOggPages(ogg)
        .slice(2)
        .reduce((n, p) => n + p.packets.length, 0),
    );
    const decoder = new opus.OpusEncoder(48_000, 2);
    expect(packets.every((p) => decoder.decode(p).length === 960 * 2 * 2)).toBe(true);
  });

  it('fails with transcode_failed on input that is not audio', async () => {
    const error = await mp3ToOggOpus(Buffer.from('<html>notice</html>')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AudioError);
    expect((error as AudioError).code).toBe('transcode_failed');
    expect((error as AudioError).message).toMatch(/no MPEG audio frame/);
  });

  it('fails with transcode_aborted when aborted while it works, and transcode_timeout past its deadline', async () => {
    const mp3 = makeMp3('long.mp3', 4, 24_000, 1, '160k');
    const controller = new AbortController();
    const aborted = mp3ToOggOpus(mp3, { signal: controller.signal }).catch((e: unknown) => e);
    controller.abort();
    expect(await aborted).toMatchObject({ code: 'transcode_aborted' });
    expect(await mp3ToOggOpus(mp3, { timeoutMs: 0 }).catch((e: unknown) => e)).toMatchObject({ code: 'transcode_timeout' });
  });
});
