import { Transform, type TransformCallback } from 'node:stream';
import { AudioError } from './errors.ts';
import { encodeFrame, voiceEncoder } from './opus-codec.ts';

// A member's volume (0 to 2), applied by the bot itself to decoded audio before it is encoded to
// Opus: never sent to the service and never part of the cache key, so one cached clip plays at
// every volume. Volume 1 changes nothing (the packets pass as they are, no decoding at all).

/** Where the soft limiter starts to bend: quieter samples pass unchanged. */
const KNEE = 0.8;

/**
 * A sample (full scale ±1) bent smoothly into (-1, 1) instead of clipped: unchanged up to the knee,
 * then approaching full scale along a tanh curve whose slope at the knee is 1, so a voice made
 * louder than the format holds is rounded off rather than squared off (no harsh clipping).
 */
export function softLimit(x: number): number {
  const a = Math.abs(x);
  if (a <= KNEE) return x;
  const bent = KNEE + (1 - KNEE) * Math.tanh((a - KNEE) / (1 - KNEE));
  return x < 0 ? -bent : bent;
}

/** Whether `volume` changes anything (1, or nothing said, plays the audio as it is). */
export function changesLoudness(volume: number | undefined): volume is number {
  return volume !== undefined && volume !== 1;
}

/** Multiplies 16-bit samples by `gain` in place, soft-limited (softLimit) so nothing wraps or clips hard. */
export function applyGain(samples: Int16Array, gain: number): void {
  for (let i = 0; i < samples.length; i++) {
    const v = softLimit((samples[i]! / 32768) * gain);
    samples[i] = Math.max(-32768, Math.min(32767, Math.round(v * 32768)));
  }
}

/**
 * Opus packets (48 kHz stereo, as the cache's Ogg Opus holds them) played at `volume`: each is
 * decoded, its samples scaled (applyGain) and encoded again as the MP3 player encodes. About
 * 0.15 ms of CPU per 20 ms frame, on the voice thread, only when the volume is not 1.
 */
export class GainedOpusStream extends Transform {
  readonly #codec = voiceEncoder();
  readonly #volume: number;
  #first = true;

  constructor(volume: number) {
    super({ objectMode: true });
    this.#volume = volume;
  }

  override _transform(packet: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    try {
      const pcm = this.#codec.decode(packet);
      const samples = new Int16Array(pcm.buffer, pcm.byteOffset, pcm.byteLength / 2);
      applyGain(samples, this.#volume);
      callback(null, encodeFrame(this.#codec, pcm, this.#first));
      this.#first = false;
    } catch (error) {
      callback(new AudioError('decode_failed', { detail: 'an Opus packet of the cached clip could not be decoded', cause: error }));
    }
  }
}
