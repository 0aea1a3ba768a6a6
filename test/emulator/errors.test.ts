import { describe, expect, it } from 'vitest';
import { BITRATE, encodeMp3, MAX_SECONDS, SAMPLE_RATE } from '../../src/emulator/audio.ts';
import { EmulatorError } from '../../src/emulator/errors.ts';
import { EMULATOR_ERROR_MESSAGES, type EmulatorErrorCode } from '../../src/emulator/messages.ts';
import { espeakMp3 } from '../../src/emulator/speech.ts';

describe('EmulatorError', () => {
  it.each(Object.entries(EMULATOR_ERROR_MESSAGES) as [EmulatorErrorCode, string][])('GIVEN code %s THEN name, code and the default message are set', (code, message) => {
    const cause = new Error('underlying');
    const error = new EmulatorError(code, { cause });
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('EmulatorError');
    expect(error.code).toBe(code);
    expect(error.message).toBe(message);
    expect(error.cause).toBe(cause);
  });

  it('GIVEN an ffmpeg that cannot be started THEN encoding fails with ffmpeg_unavailable, the spawn error as its cause', async () => {
    const error = await encodeMp3(Buffer.alloc(480), '/nonexistent/ffmpeg').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EmulatorError);
    expect((error as EmulatorError).code).toBe('ffmpeg_unavailable');
    expect(((error as EmulatorError).cause as NodeJS.ErrnoException).code).toBe('ENOENT');
  });

  it('GIVEN an ffmpeg that exits non-zero THEN encoding fails with ffmpeg_failed naming the exit code', async () => {
    const error = await encodeMp3(Buffer.alloc(480), 'false').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EmulatorError);
    expect((error as EmulatorError).code).toBe('ffmpeg_failed');
    expect((error as EmulatorError).message).toMatch(/^ffmpeg exited with 1/);
  });
  it('GIVEN an ffmpeg that exits non-zero before reading a long espeak-ng reading THEN it fails with ffmpeg_failed naming the exit code (espeak-ng is not left blocked on a full pipe)', async () => {
    // About 20 s of speech (1 MB of WAV): far more than a pipe holds once ffmpeg stops reading.
    const text = 'きょうはいいてんきですね、さんぽにいきましょう。'.repeat(8);
    const error = await espeakMp3({ kind: 'standard', voice: 'ja-JP-Wavenet-B', text, speed: 1, pitch: 0 }, { espeakPath: 'espeak-ng', ffmpeg: 'false', sampleRate: SAMPLE_RATE, bitrate: BITRATE, maxSeconds: MAX_SECONDS }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EmulatorError);
    expect((error as EmulatorError).code).toBe('ffmpeg_failed');
    expect((error as EmulatorError).message).toMatch(/^ffmpeg exited with 1/);
  });
});
