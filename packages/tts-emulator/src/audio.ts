import { createHash } from 'node:crypto';
import { createMp3Encoder } from 'wasm-media-encoders';
import { ffmpegPath } from '@yomiage/media';
import type { AudioInput } from './audio-input.ts';
import { EmulatorError } from './errors.ts';
import { fnv1a } from './hash.ts';
import { espeakMp3, type SpeechEngine } from './speech.ts';

export type { AudioInput } from './audio-input.ts';

/** The live service's advanced output format (as documented: MPEG-2 Layer III, 24 kHz, mono, 160 kbit/s). */
export const SAMPLE_RATE = 24_000;
export const BITRATE_KBPS = 160;
/** Seconds of audio per code point at speed 1.0 (the default), and the shortest file we make. */
export const SECONDS_PER_CHAR = 0.12;
const MIN_SECONDS = 0.6;
/** Upper bound so a 3,000-character paid job does not produce an hour of audio. */
export const MAX_SECONDS = 600;

/** The 56-hex sha224 content hash naming an audio file (the live bucket uses 56-hex names). */
export function audioHash(input: AudioInput): string {
  // Fixed key order so the hash does not depend on how the object was built.
  const canonical = JSON.stringify([
    input.kind,
    input.text,
    input.voice,
    input.speed,
    input.pitch,
    input.tone ?? null,
    input.model ?? null,
    input.seed ?? null,
    input.temperature ?? null,
  ]);
  return createHash('sha224').update(canonical).digest('hex');
}

/**
 * Expected duration in seconds of the audio for `input` (before MP3 framing), at `secondsPerChar`
 * per code point at speed 1.0.
 */
export function expectedSeconds(input: AudioInput, secondsPerChar = SECONDS_PER_CHAR): number {
  const chars = [...input.text].length;
  return Math.min(MAX_SECONDS, Math.max(MIN_SECONDS, (chars * secondsPerChar) / input.speed));
}

/**
 * A speech-like signal as 16-bit little-endian PCM at SAMPLE_RATE: one voiced "syllable" (a tone
 * with harmonics and an envelope) per code point, silence for spaces and punctuation. The voice
 * sets the base frequency, pitch shifts it, speed shortens every syllable; advanced-only fields
 * (seed, tone, model, temperature) change the timbre. Pure arithmetic, so it is deterministic.
 */
function synthesizePcm(input: AudioInput, secondsPerChar: number): Buffer {
  const totalSamples = Math.round(expectedSeconds(input, secondsPerChar) * SAMPLE_RATE);
  const pcm = Buffer.alloc(totalSamples * 2);
  const slot = Math.max(1, Math.round((secondsPerChar / input.speed) * SAMPLE_RATE));
  const semitones = input.kind === 'standard' ? input.pitch : input.pitch * 6;
  const timbreKey = `${input.voice}|${input.seed ?? ''}|${input.tone ?? ''}|${input.model ?? ''}|${input.temperature ?? ''}`;
  const timbre = fnv1a(timbreKey);
  const base = (100 + (fnv1a(input.voice) % 160)) * 2 ** (semitones / 12);
  const h2 = 0.3 + ((timbre >>> 4) % 50) / 100;
  const h3 = 0.1 + ((timbre >>> 12) % 40) / 100;
  const norm = 1 / (1 + h2 + h3);
  const amplitude = 0.5 * 32767;

  let offset = 0;
  for (const ch of input.text) {
    if (offset + slot > totalSamples) break;
    if (!/[\s\p{P}]/u.test(ch)) {
      const step = (fnv1a(ch) % 9) - 4; // -4..4: a little intonation per character
      const freq = base * (1 + step * 0.05);
      const voiced = Math.round(slot * 0.85); // the rest of the slot is a short gap
      const attack = Math.max(1, Math.round(voiced * 0.1));
      const release = Math.max(1, Math.round(voiced * 0.25));
      for (let i = 0; i < voiced; i++) {
        const env = Math.min(1, i / attack, (voiced - i) / release);
        const w = (2 * Math.PI * freq * i) / SAMPLE_RATE;
        const v = (Math.sin(w) + h2 * Math.sin(2 * w) + h3 * Math.sin(3 * w)) * norm * env;
        pcm.writeInt16LE(Math.round(v * amplitude), (offset + i) * 2);
      }
    }
    offset += slot;
  }
  return pcm;
}

type Mp3Encoder = Awaited<ReturnType<typeof createMp3Encoder>>;
let lame: Promise<Mp3Encoder> | undefined;

/**
 * LAME compiled to WebAssembly, instantiated once per process (about 30 ms) and shared: an ffmpeg
 * child costs about 60 ms of CPU per file before it encodes anything. A failed instantiation is not
 * kept, so the next file tries again.
 */
function mp3Encoder(): Promise<Mp3Encoder> {
  lame ??= createMp3Encoder().catch((cause: unknown) => {
    lame = undefined;
    throw new EmulatorError('mp3_encoder_failed', { cause });
  });
  return lame;
}

/** Samples handed to LAME per call, so a long file does not grow its (never shrinking) memory. */
const CHUNK_SAMPLES = SAMPLE_RATE;

/**
 * Encodes 16-bit PCM at SAMPLE_RATE to MP3 in this process with LAME: MPEG-2 Layer III, 24 kHz
 * mono CBR at BITRATE_KBPS, no Xing header and no ID3 tag, so identical input gives identical bytes.
 */
async function encodeMp3(pcm: Buffer): Promise<Buffer> {
  const encoder = await mp3Encoder();
  // From configure to finalize nothing awaits, so no other file can use the shared encoder in between.
  try {
    encoder.configure({ sampleRate: SAMPLE_RATE, outputSampleRate: SAMPLE_RATE, channels: 1, bitrate: BITRATE_KBPS });
    const out: Buffer[] = [];
    const samples = new Float32Array(CHUNK_SAMPLES);
    const total = Math.floor(pcm.length / 2);
    for (let start = 0; start < total; start += CHUNK_SAMPLES) {
      const n = Math.min(CHUNK_SAMPLES, total - start);
      for (let i = 0; i < n; i++) samples[i] = pcm.readInt16LE((start + i) * 2) / 32768;
      // The encoder owns the returned bytes until its next call: copy them.
      out.push(Buffer.from(encoder.encode([samples.subarray(0, n)])));
    }
    out.push(Buffer.from(encoder.finalize()));
    return Buffer.concat(out);
  } catch (cause) {
    throw new EmulatorError('mp3_encoder_failed', { cause });
  }
}

/**
 * The MP3 for `input` made by `engine`: espeak-ng's reading, or the tones. When espeak-ng fails on
 * one text the tones stand in for it, so a request never fails for the sake of realism (and the
 * same input still gives the same bytes).
 */
async function makeMp3(
  input: AudioInput,
  engine: SpeechEngine = 'tones',
  espeakPath = 'espeak-ng',
  secondsPerChar = SECONDS_PER_CHAR,
): Promise<Buffer> {
  if (engine === 'espeak') {
    try {
      return await espeakMp3(input, {
        espeakPath,
        ffmpeg: ffmpegPath(),
        sampleRate: SAMPLE_RATE,
        bitrate: `${BITRATE_KBPS}k`,
        maxSeconds: MAX_SECONDS,
      });
    } catch (error) {
      if ((error as EmulatorError).code === 'ffmpeg_unavailable') throw error;
    }
  }
  return encodeMp3(synthesizePcm(input, secondsPerChar));
}

/** The exact MP3 bytes the emulator serves for `input` (made by `engine`), and its content hash. */
export async function audioFor(input: AudioInput, engine: SpeechEngine = 'tones'): Promise<{ hash: string; bytes: Buffer }> {
  return { hash: audioHash(input), bytes: await makeMp3(input, engine) };
}

interface AudioStoreOptions {
  /** Bytes of generated MP3 kept in memory; older files are regenerated on demand. */
  maxCacheBytes: number;
  /** How many issued media names are remembered (an unknown name is a 404). */
  maxEntries: number;
  /** What makes the audio (see speech.ts). */
  engine: SpeechEngine;
  espeakPath: string;
  /** The tones' seconds per code point at speed 1.0 (see EmulatorOptions.secondsPerChar). */
  secondsPerChar: number;
  /** Told about every file made (see EmulatorOptions.onAudio). */
  onAudio?: ((made: { hash: string; input: AudioInput; bytes: Buffer }) => void) | undefined;
}

const AUDIO_STORE_DEFAULTS = {
  maxCacheBytes: 64 * 1024 * 1024,
  maxEntries: 20_000,
  engine: 'tones',
  espeakPath: 'espeak-ng',
  secondsPerChar: SECONDS_PER_CHAR,
} as const satisfies AudioStoreOptions;

/**
 * The emulator's media bucket: names issued to clients (hash -> input) and a bounded cache of the
 * generated bytes, with concurrent generations of the same file shared.
 */
export class AudioStore {
  readonly #options: AudioStoreOptions;
  readonly #entries = new Map<string, AudioInput>();
  readonly #bytes = new Map<string, Buffer>();
  readonly #inflight = new Map<string, Promise<Buffer>>();
  #cachedBytes = 0;

  constructor(options: Partial<AudioStoreOptions> = {}) {
    this.#options = { ...AUDIO_STORE_DEFAULTS, ...options };
  }

  /** Makes `input` downloadable under its hash and returns the hash. */
  register(input: AudioInput): string {
    const hash = audioHash(input);
    this.#entries.delete(hash);
    this.#entries.set(hash, input);
    if (this.#entries.size > this.#options.maxEntries) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
    return hash;
  }

  /** The input issued under `hash`, if any. */
  lookup(hash: string): AudioInput | undefined {
    return this.#entries.get(hash);
  }

  /** The MP3 bytes for `input`, generated once and then served from memory. */
  async bytes(input: AudioInput): Promise<Buffer> {
    const hash = audioHash(input);
    const cached = this.#bytes.get(hash);
    if (cached) {
      this.#bytes.delete(hash);
      this.#bytes.set(hash, cached); // most recently used last
      return cached;
    }
    let pending = this.#inflight.get(hash);
    if (!pending) {
      pending = makeMp3(input, this.#options.engine, this.#options.espeakPath, this.#options.secondsPerChar).then(
        (buf) => {
          this.#inflight.delete(hash);
          this.#remember(hash, buf);
          this.#options.onAudio?.({ hash, input, bytes: buf });
          return buf;
        },
        (error: unknown) => {
          this.#inflight.delete(hash);
          throw error;
        },
      );
      this.#inflight.set(hash, pending);
    }
    return pending;
  }

  #remember(hash: string, buf: Buffer): void {
    this.#bytes.set(hash, buf);
    this.#cachedBytes += buf.length;
    for (const [key, old] of this.#bytes) {
      if (this.#cachedBytes <= this.#options.maxCacheBytes || key === hash) break;
      this.#bytes.delete(key);
      this.#cachedBytes -= old.length;
    }
  }
}
