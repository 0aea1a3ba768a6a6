import { describe, expect, it } from 'vitest';
import { BITRATE_KBPS, MAX_SECONDS, SAMPLE_RATE } from '../src/audio.ts';
import { EmulatorError } from '../src/errors.ts';
import { espeakMp3 } from '../src/speech.ts';

type EmulatorErrorCode = EmulatorError['code'];

describe('EmulatorError', () => {
  it.each(Object.entries(EmulatorError.messages) as [EmulatorErrorCode, string][])(
    'GIVEN code %s THEN name, code and the default message are set',
    (code, message) => {
      const cause = new Error('underlying');
      const error = new EmulatorError(code, { cause });
      expect(error).toBeInstanceOf(Error);
      expect(error.name).toBe('EmulatorError');
      expect(error.code).toBe(code);
      expect(error.message).toBe(message);
      expect(error.cause).toBe(cause);
    },
  );

  // Only espeak-ng's reading still goes through ffmpeg (its 22.05 kHz WAV is resampled); the tones are encoded in-process.
  const reading = (ffmpeg: string, text = 'エラーのテスト') =>
    espeakMp3(
      { kind: 'standard', voice: 'ja-JP-Wavenet-B', text, speed: 1, pitch: 0 },
      { espeakPath: 'espeak-ng', ffmpeg, sampleRate: SAMPLE_RATE, bitrate: `${BITRATE_KBPS}k`, maxSeconds: MAX_SECONDS },
    );

  it('GIVEN an ffmpeg that cannot be started THEN the espeak-ng reading fails with ffmpeg_unavailable, the spawn error as its cause', async () => {
    const error = await reading('/nonexistent/ffmpeg').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EmulatorError);
    expect((error as EmulatorError).code).toBe('ffmpeg_unavailable');
    expect(((error as EmulatorError).cause as NodeJS.ErrnoException).code).toBe('ENOENT');
  });

  it('GIVEN an ffmpeg that exits non-zero before reading a long reading THEN it fails with ffmpeg_failed naming the exit code (espeak-ng is not left blocked on a full pipe)', async () => {
    // About 20 s of speech (1 MB of WAV): far more than a pipe holds once ffmpeg stops reading.
    const error = await reading('false', 'きょうはいいてんきですね、さんぽにいきましょう。'.repeat(8)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EmulatorError);
    expect((error as EmulatorError).code).toBe('ffmpeg_failed');
    expect((error as EmulatorError).message).toMatch(/^ffmpeg exited with 1/);
  });
});
