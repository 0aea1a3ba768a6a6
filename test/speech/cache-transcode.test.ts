import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AudioError } from '../../src/audio/errors.ts';
import { mp3ToOggOpus, probeDurationMs } from '../../src/audio/transcode.ts';
import { ffmpegPath } from '@yomiage/media';

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

describe('mp3ToOggOpus', () => {
  it('turns an MP3 into Ogg Opus at 48 kHz stereo that ffprobe reads back at the same length', async () => {
    const mp3 = makeMp3('speech.mp3', 2, 24_000, 1, '160k');
    const ogg = await mp3ToOggOpus(mp3);
    expect(ogg.subarray(0, 4).toString('latin1')).toBe('OggS');
    expect(ogg.includes('OpusHead')).toBe(true);
    const oggFile = join(dir, 'speech.ogg');
    writeFileSync(oggFile, ogg);
    const probe = JSON.parse(
      execFileSync('ffprobe', [
        '-v',
        'error',
        '-show_entries',
        'stream=codec_name,sample_rate,channels:format=duration',
        '-of',
        'json',
        oggFile,
      ]).toString(),
    ) as { streams: { codec_name: string; sample_rate: string; channels: number }[]; format: { duration: string } };
    expect(probe.streams[0]).toMatchObject({ codec_name: 'opus', sample_rate: '48000', channels: 2 });
    expect(Math.abs(Number(probe.format.duration) - 2)).toBeLessThan(0.1);
  });

  it("fails with transcode_failed (and ffmpeg's reason) on input that is not audio", async () => {
    const error = await mp3ToOggOpus(Buffer.from('<html>notice</html>')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AudioError);
    expect((error as AudioError).code).toBe('transcode_failed');
    expect((error as AudioError).message).toMatch(/Invalid data/);
  });

  it('fails with ffmpeg_not_found when the binary is missing', async () => {
    const error = await mp3ToOggOpus(Buffer.from('x'), { ffmpeg: join(dir, 'no-such-ffmpeg') }).catch((e: unknown) => e);
    expect((error as AudioError).code).toBe('ffmpeg_not_found');
  });

  it('kills ffmpeg and fails with transcode_timeout when it hangs', async () => {
    // A stand-in "ffmpeg" that never exits.
    const hang = join(dir, 'hang.sh');
    writeFileSync(hang, '#!/bin/sh\nexec sleep 60\n', { mode: 0o755 });
    const error = await mp3ToOggOpus(Buffer.from('x'), { ffmpeg: hang, timeoutMs: 200 }).catch((e: unknown) => e);
    expect((error as AudioError).code).toBe('transcode_timeout');
  });
});
