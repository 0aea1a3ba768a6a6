import { Readable } from 'node:stream';
import type opus from '@discordjs/opus';
import { MPEGDecoder } from 'mpg123-decoder';
import { AudioError } from './errors.ts';
import { Resampler } from '@yomiage/media';
import { isMonoMp3 } from './mp3-frames.ts';
import { changesLoudness, softLimit } from './gain.ts';
import { encodeFrame, voiceEncoder } from './opus-codec.ts';
import { FRAME_SAMPLES, VOICE_CHANNELS, VOICE_SAMPLE_RATE } from '../util/voice-format.ts';

/**
 * An MP3 played without ffmpeg: decoded in this process (mpg123 compiled to WebAssembly), resampled
 * to 48 kHz stereo and encoded to Opus (libopus through @discordjs/opus) a few 20 ms frames ahead of
 * the player, so the first packet leaves a few milliseconds after the download instead of after an
 * ffmpeg run. The cache's Ogg Opus is made of these same packets (src/audio/transcode.ts), so a miss
 * and a hit sound alike; both match what ffmpeg made before (its leading-silence cut, rate, channels,
 * bitrate and application).
 */

/** MP3 bytes handed to the decoder at a time (a few frames at the service's 160 kbit/s). */
const FEED_BYTES = 2048;
/** The cut ffmpeg's silenceremove made (start threshold and its RMS window), kept when the cache moved in-process. */
const SILENCE_THRESHOLD = 10 ** (-50 / 20);
const SILENCE_WINDOW_S = 0.02;
/** ffmpeg's mono to stereo upmix puts the centre in both channels at -3 dB; so do we. */
const MONO_TO_STEREO_GAIN = Math.SQRT1_2;

interface Mp3OpusOptions {
  /** Opus bitrate in kbit/s (64, as Discord voice carries). */
  bitrateKbps?: number;
  application?: 'audio' | 'voip';
  /** Drop the silence before the first sound (default true). */
  trimLeadingSilence?: boolean;
  /** Frames encoded ahead of the player (the stream's high-water mark). */
  framesAhead?: number;
  /** A member's volume (0 to 2), applied to the decoded samples before encoding (src/audio/gain.ts); 1 changes nothing. */
  volume?: number;
}

const DEFAULTS = {
  bitrateKbps: 64,
  application: 'audio',
  trimLeadingSilence: true,
  framesAhead: 3,
  volume: 1,
} as const satisfies Required<Mp3OpusOptions>;

/**
 * Decoders kept ready: compiling the WebAssembly takes ~20 ms once per process and a decoder's set
 * up ~3 ms, both too slow for the first packet, so one spare is always made ahead.
 */
class DecoderPool {
  readonly #idle: MPEGDecoder[] = [];
  #spare: Promise<MPEGDecoder> | undefined;
  readonly #max = 4;

  /** Starts making a spare decoder if none is ready or on its way. */
  warm(): Promise<void> {
    if (this.#idle.length === 0 && !this.#spare) {
      const decoder = new MPEGDecoder();
      this.#spare = decoder.ready.then(() => decoder);
      // A failure is reported to whoever takes the decoder.
      this.#spare.catch(() => {});
    }
    return (
      this.#spare?.then(
        () => undefined,
        () => undefined,
      ) ?? Promise.resolve()
    );
  }

  async take(): Promise<MPEGDecoder> {
    const idle = this.#idle.pop();
    if (idle) {
      void this.warm();
      return idle;
    }
    void this.warm();
    const spare = this.#spare!;
    this.#spare = undefined;
    const decoder = await spare;
    void this.warm();
    return decoder;
  }

  /** Returns a decoder after use; reset (or freed, beyond the few kept). */
  give(decoder: MPEGDecoder): void {
    if (this.#idle.length >= this.#max) {
      decoder.free();
      return;
    }
    decoder.reset().then(
      () => this.#idle.push(decoder),
      () => {},
    );
  }
}

const pool = new DecoderPool();

/** Compiles the decoder and makes one ready, so the first cache miss does not wait for it. */
export function warmMp3Decoder(): Promise<void> {
  return pool.warm();
}

/** Drops samples before the first sound: the first whose trailing 20 ms RMS (any channel) passes -50 dBFS. */
class LeadingSilence {
  readonly #window: number;
  readonly #squares: Float64Array[];
  readonly #sums: number[];
  #at = 0;
  #open = false;

  constructor(sampleRate: number, channels: number) {
    this.#window = Math.max(1, Math.round(SILENCE_WINDOW_S * sampleRate));
    this.#squares = Array.from({ length: channels }, () => new Float64Array(this.#window));
    this.#sums = Array.from({ length: channels }, () => 0);
  }

  /** The part of `input` from the first sound on (all of it once the sound began). */
  cut(input: Float32Array[]): Float32Array[] {
    if (this.#open) return input;
    const n = input[0]!.length;
    const threshold = SILENCE_THRESHOLD * SILENCE_THRESHOLD * this.#window;
    for (let i = 0; i < n; i++, this.#at++) {
      const slot = this.#at % this.#window;
      let loud = false;
      for (let c = 0; c < input.length; c++) {
        const v = input[c]![i]!;
        const sq = v * v;
        this.#sums[c] = this.#sums[c]! + sq - this.#squares[c]![slot]!;
        this.#squares[c]![slot] = sq;
        if (this.#sums[c]! > threshold) loud = true;
      }
      if (loud) {
        this.#open = true;
        return input.map((ch) => ch.subarray(i));
      }
    }
    return input.map((ch) => ch.subarray(n));
  }
}

/**
 * Opus packets (48 kHz stereo, 20 ms each) of `mp3`, for StreamType.Opus. Each read decodes and
 * encodes only what the next frame needs, so the first one is out within a few milliseconds and
 * the work follows the player's pace (never a whole clip at once on the audio thread). Errors:
 * AudioError `decode_failed` when no audio could be decoded at all.
 */
export class Mp3OpusStream extends Readable {
  readonly #mp3: Uint8Array;
  readonly #options: Required<Mp3OpusOptions>;
  #decoder: MPEGDecoder | undefined;
  #encoder: opus.OpusEncoder | undefined;
  #fed = 0;
  #silence: LeadingSilence | undefined;
  #resampler: Resampler | undefined;
  /** Interleaved stereo 16-bit samples waiting for a full frame. */
  #pcm = new Int16Array(FRAME_SAMPLES * VOICE_CHANNELS * 4);
  #pcmLength = 0;
  #ended = false;
  readonly #gain: number;
  /** Opus frames made so far (tests and the bench read it). */
  frames = 0;
  /** 48 kHz samples per channel of audio in those frames (the last frame's padding not counted). */
  samples = 0;
  /** The MP3's own sample rate, once its first frame is decoded (0 before). */
  inputSampleRate = 0;

  constructor(mp3: Buffer | Uint8Array, options: Mp3OpusOptions = {}) {
    const o = { ...DEFAULTS, ...options };
    super({ objectMode: true, highWaterMark: o.framesAhead });
    this.#mp3 = mp3;
    this.#options = o;
    this.#gain = isMonoMp3(mp3) ? MONO_TO_STEREO_GAIN : 1;
  }

  override _construct(callback: (error?: Error | null) => void): void {
    pool.take().then(
      (decoder) => {
        this.#decoder = decoder;
        this.#encoder = voiceEncoder(this.#options.bitrateKbps, this.#options.application);
        callback();
      },
      (error: unknown) => callback(new AudioError('decode_failed', { detail: 'the MP3 decoder could not start', cause: error })),
    );
  }

  override _read(): void {
    try {
      const frame = this.#nextFrame();
      // At another volume its first frame is coded on its own (opus-codec.ts); volume 1 stays as the cache makes it.
      if (frame) this.push(encodeFrame(this.#encoder!, frame, this.frames === 1 && changesLoudness(this.#options.volume)));
      else this.push(null);
    } catch (error) {
      this.destroy(
        error instanceof AudioError ? error : new AudioError('decode_failed', { detail: (error as Error).message, cause: error }),
      );
    }
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (this.#decoder) pool.give(this.#decoder);
    this.#decoder = undefined;
    this.#encoder = undefined;
    callback(error);
  }

  /** The next 20 ms of 48 kHz stereo PCM (the last one padded with silence), or null at the end. */
  #nextFrame(): Buffer | null {
    const frameLength = FRAME_SAMPLES * VOICE_CHANNELS;
    while (this.#pcmLength < frameLength && !this.#ended) this.#decodeMore();
    if (this.#pcmLength === 0) return null;
    const frame = Buffer.alloc(frameLength * 2);
    const take = Math.min(frameLength, this.#pcmLength);
    const samples = new Int16Array(frame.buffer, frame.byteOffset, frameLength);
    samples.set(this.#pcm.subarray(0, take));
    this.#pcm.copyWithin(0, take, this.#pcmLength);
    this.#pcmLength -= take;
    this.frames++;
    this.samples += take / VOICE_CHANNELS;
    return frame;
  }

  /** Feeds the decoder one more chunk of MP3 (or ends the input) and queues what came out. */
  #decodeMore(): void {
    if (this.#fed >= this.#mp3.length) {
      this.#ended = true;
      if (!this.#resampler) {
        if (this.frames === 0 && this.#silence === undefined)
          throw new AudioError('decode_failed', { detail: 'no MPEG audio frame in the file' });
        return;
      }
      this.#queue(this.#resampler.flush());
      return;
    }
    const chunk = this.#mp3.subarray(this.#fed, this.#fed + FEED_BYTES);
    this.#fed += chunk.length;
    const decoded = this.#decoder!.decode(chunk);
    if (decoded.samplesDecoded === 0) return;
    this.inputSampleRate ||= decoded.sampleRate;
    // mpg123 gives two channels, mono duplicated: resample one of them only.
    const channels = decoded.channelData.slice(0, this.#gain === 1 ? VOICE_CHANNELS : 1);
    this.#silence ??= new LeadingSilence(decoded.sampleRate, channels.length);
    this.#resampler ??= new Resampler({ from: decoded.sampleRate, to: VOICE_SAMPLE_RATE, channels: channels.length });
    const sound = this.#options.trimLeadingSilence ? this.#silence.cut(channels) : channels;
    if (sound[0]!.length > 0) this.#queue(this.#resampler.push(sound));
  }

  #queue(channels: Float32Array[]): void {
    const n = channels[0]!.length;
    if (this.#pcmLength + n * VOICE_CHANNELS > this.#pcm.length) {
      const grown = new Int16Array(Math.max(this.#pcmLength + n * VOICE_CHANNELS, this.#pcm.length * 2));
      grown.set(this.#pcm.subarray(0, this.#pcmLength));
      this.#pcm = grown;
    }
    const left = channels[0]!;
    const right = channels[1] ?? left;
    const gain = this.#gain;
    let at = this.#pcmLength;
    const volume = this.#options.volume;
    if (changesLoudness(volume)) {
      // A member's volume: scaled and soft-limited before the 16-bit rounding (volume 1 stays bit for bit as the cache makes it).
      for (let i = 0; i < n; i++) {
        this.#pcm[at++] = toInt16(softLimit(left[i]! * gain * volume));
        this.#pcm[at++] = toInt16(softLimit(right[i]! * gain * volume));
      }
    } else {
      for (let i = 0; i < n; i++) {
        this.#pcm[at++] = toInt16(left[i]! * gain);
        this.#pcm[at++] = toInt16(right[i]! * gain);
      }
    }
    this.#pcmLength = at;
  }
}

function toInt16(v: number): number {
  const s = Math.round(v * 32767);
  return s > 32767 ? 32767 : s < -32768 ? -32768 : s;
}
