// What the voice player makes of an utterance played at its author's volume: every clip of it (a
// cached name, then its line read from the download) at that volume, decoded back as a listener
// decodes it. Fixture: the emulator's tones for one short line.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import opus from '@discordjs/opus';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { audioFor } from '@yomiage/tts-emulator';
import { rmsDb } from '@yomiage/local-discord';
import { mp3ToOggOpus } from '../../src/audio/transcode.ts';
import { clipPackets, clipsOf } from '../../src/voice/resources.ts';
import { VOICE_CHANNELS, VOICE_SAMPLE_RATE } from '../../src/util/voice-format.ts';
import { pitchHz } from '../support/pitch.ts';

const dir = mkdtempSync(join(tmpdir(), 'yomiage-volume-'));
let mp3: Buffer;
let oggPath: string;
beforeAll(async () => {
  ({ bytes: mp3 } = await audioFor({ kind: 'standard', text: '音量の確認です', voice: 'v1', speed: 1, pitch: 0 }));
  oggPath = join(dir, 'clip.ogg');
  writeFileSync(oggPath, await mp3ToOggOpus(mp3));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The loudness (dBFS) of each half of what a listener decodes: the cached clip, then the MP3. */
async function heard(packets: Readable, split: number): Promise<[number, number]> {
  const decoder = new opus.OpusEncoder(VOICE_SAMPLE_RATE, VOICE_CHANNELS);
  const pcm: Int16Array[] = [];
  for await (const p of packets) {
    const b = decoder.decode(p as Buffer);
    pcm.push(new Int16Array(b.buffer, b.byteOffset, b.byteLength / 2));
  }
  return [rmsDb(pcm.slice(0, split)), rmsDb(pcm.slice(split))];
}

describe('an utterance played at its author’s volume', () => {
  it('GIVEN a cached name then a line not cached yet WHEN played at 0.5 THEN both clips are about 6 dB quieter than at 1', async () => {
    const parts = [{ oggPath }, { mp3 }];
    const count = async (packets: Readable) => {
      let n = 0;
      for await (const _ of packets) n++;
      return n;
    };
    const split = await count(clipPackets([{ oggPath }], 'g'));
    const asMade = await heard(clipPackets(clipsOf({ parts }), 'g'), split);
    const half = await heard(clipPackets(clipsOf({ parts, volume: 0.5 }), 'g'), split);
    expect(half[0] - asMade[0]).toBeCloseTo(-6, 0);
    expect(half[1] - asMade[1]).toBeCloseTo(-6, 0);
  });
});

describe('what the stories’ listener measures of a voice', () => {
  /** 48 kHz stereo of a voiced tone at `hz` with strong 2nd and 3rd harmonics, in 20 ms frames. */
  const voiced = (hz: number) =>
    Array.from({ length: 25 }, (_, f) => {
      const frame = new Int16Array(960 * 2);
      for (let i = 0; i < 960; i++) {
        const w = (2 * Math.PI * hz * (f * 960 + i)) / VOICE_SAMPLE_RATE;
        frame[i * 2] = frame[i * 2 + 1] = Math.round(8000 * (Math.sin(w) + 0.7 * Math.sin(2 * w) + 0.4 * Math.sin(3 * w)));
      }
      return frame;
    });
  it.each([110, 136, 174, 230])('GIVEN a voice at %s Hz with its harmonics THEN its pitch within 3%', (hz) => {
    expect(Math.abs(pitchHz(voiced(hz)) / hz - 1)).toBeLessThan(0.03);
  });
});
