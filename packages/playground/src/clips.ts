/**
 * Which text the bot is saying: every audio file the emulator makes is decoded here and kept as a
 * contour (per 20 ms: loudness in dB and pitch), and an utterance heard in
 * voice is matched against them by the shape of its contour. The bot transcodes each MP3 to Ogg
 * Opus (trimming leading silence) and plays that, so what arrives is the same audio through another
 * codec: the contours line up closely, whatever the text, voice or cache hit. Two texts of the same
 * rhythm (the emulator's tones give every character the same envelope) still differ in pitch.
 * Nothing of the bot is asked or changed.
 */
import { MPEGDecoder } from 'mpg123-decoder';
import { Resampler } from '@yomiage/media';
import { FRAME_MS, FRAME_SAMPLES, VOICE_SAMPLE_RATE } from '@yomiage/local-discord';
import type { AudioInput } from '@yomiage/tts-emulator';

const FLOOR_DB = -60;
/** The bot's transcode trims leading silence below -50 dB; frames under this count as quiet. */
const QUIET_DB = -45;
const KEPT_CLIPS = 500;
/** Frames compared at most, and at least before a match is trusted. */
const MAX_FRAMES = 3_000 / FRAME_MS;
const MIN_FRAMES = 300 / FRAME_MS;
/**
 * A clip's score is its dB spread plus 20 dB per octave of mean pitch difference. Measured on the
 * emulator's audio through the bot's transcode: the same text scores 1.5 to 2.5 (espeak-ng or
 * tones), another text 4 or more; the best must also beat every other text by a margin.
 */
const PITCH_WEIGHT = 20;
const MAX_SCORE = 4;
const MARGIN = 1.5;
/** Pitch is looked for between 60 and 500 Hz, on the frame taken down to 12 kHz. */
const PITCH_RATE = 12_000;
const MIN_LAG = PITCH_RATE / 500;
const MAX_LAG = PITCH_RATE / 60;
/** The clip's contour is kept at these offsets (ms) too: heard packets start anywhere in it. */
const OFFSETS_MS = [0, 5, 10, 15];

/** One 20 ms frame: RMS loudness (dB, floored at -60) and pitch (Hz, 0 when unvoiced). */
export interface Frame {
  db: number;
  f0: number;
}

export interface ClipLabel {
  text: string;
  voice: string;
}

interface Clip extends ClipLabel {
  hash: string;
  /** The contour at each of OFFSETS_MS, each from its first frame that is not quiet. */
  variants: Frame[][];
  /** Frames from the first to the last that is not quiet. */
  loudFrames: number;
}

/** The contour of mono 16-bit PCM, 20 ms per frame, from sample `offset`. */
export function contourOf(pcm: Int16Array, offset = 0, frameSamples = FRAME_SAMPLES): Frame[] {
  const out: Frame[] = [];
  for (let start = offset; start + frameSamples <= pcm.length; start += frameSamples)
    out.push(frameOf(pcm.subarray(start, start + frameSamples)));
  return out;
}

/** Loudness and pitch of one 48 kHz frame (pitch by autocorrelation at 12 kHz). */
export function frameOf(frame: Int16Array): Frame {
  let sum = 0;
  for (const s of frame) sum += s * s;
  const db = sum === 0 ? FLOOR_DB : Math.max(FLOOR_DB, 20 * Math.log10(Math.sqrt(sum / frame.length) / 32768));
  if (db <= QUIET_DB) return { db, f0: 0 };
  const step = VOICE_SAMPLE_RATE / PITCH_RATE;
  const x = new Float64Array(Math.floor(frame.length / step));
  for (let i = 0; i < x.length; i++) {
    let v = 0;
    for (let k = 0; k < step; k++) v += frame[i * step + k]!;
    x[i] = v / step;
  }
  const r = new Float64Array(MAX_LAG + 1);
  let best = 0;
  for (let lag = MIN_LAG; lag <= MAX_LAG; lag++) {
    let num = 0;
    let e1 = 0;
    let e2 = 0;
    for (let i = 0; i + lag < x.length; i++) {
      num += x[i]! * x[i + lag]!;
      e1 += x[i]! * x[i]!;
      e2 += x[i + lag]! * x[i + lag]!;
    }
    r[lag] = e1 > 0 && e2 > 0 ? num / Math.sqrt(e1 * e2) : 0;
    best = Math.max(best, r[lag]!);
  }
  if (best < 0.5) return { db, f0: 0 };
  // The shortest period nearly as periodic as the best: no octave-down errors.
  for (let lag = MIN_LAG; lag <= MAX_LAG; lag++) {
    if (r[lag]! >= 0.9 * best && (lag === MAX_LAG || r[lag]! >= r[lag + 1]!)) return { db, f0: PITCH_RATE / lag };
  }
  return { db, f0: 0 };
}

function trimQuiet(frames: readonly Frame[]): { frames: Frame[]; loudFrames: number } {
  const first = frames.findIndex((f) => f.db > QUIET_DB);
  if (first < 0) return { frames: [], loudFrames: 0 };
  let last = frames.length - 1;
  while (last > first && frames[last]!.db <= QUIET_DB) last--;
  return { frames: frames.slice(first), loudFrames: last - first + 1 };
}

/**
 * How far `heard` is from `clip`, at the best of a few frame shifts: `db`, the mean absolute
 * deviation of the per-frame dB difference from its median (a constant gain does not count);
 * `pitch`, the mean pitch difference in octaves where both are voiced.
 */
export function contourDistance(heard: readonly Frame[], clip: readonly Frame[]): { db: number; pitch: number } {
  let best = { db: Infinity, pitch: Infinity };
  for (let shift = -2; shift <= 2; shift++) {
    const diffs: number[] = [];
    let pitch = 0;
    let voiced = 0;
    for (let i = 0; i < Math.min(heard.length, MAX_FRAMES); i++) {
      const j = i + shift;
      if (j < 0 || j >= clip.length) continue;
      const h = heard[i]!;
      const c = clip[j]!;
      diffs.push(h.db - c.db);
      if (h.f0 > 0 && c.f0 > 0) {
        pitch += Math.abs(Math.log2(h.f0 / c.f0));
        voiced++;
      }
    }
    if (diffs.length < MIN_FRAMES) continue;
    const median = [...diffs].sort((a, b) => a - b)[diffs.length >> 1]!;
    const db = diffs.reduce((sum, d) => sum + Math.abs(d - median), 0) / diffs.length;
    const meanPitch = voiced > 0 ? pitch / voiced : 0;
    if (db + 20 * meanPitch < best.db + 20 * best.pitch) best = { db, pitch: meanPitch };
  }
  return best;
}

export class ClipIndex {
  readonly #clips: Clip[] = [];
  /** Made for the first file; decodes run one at a time, so it serves them all. */
  #decoder: Promise<MPEGDecoder> | undefined;
  /** Decodes run one at a time: the playground shares a small machine with the bot. */
  #queue: Promise<void> = Promise.resolve();

  get size(): number {
    return this.#clips.length;
  }

  /** Remembers a file the emulator made (decoded in the background); resolves once it is indexed. */
  add(made: { hash: string; input: AudioInput; bytes: Buffer }): Promise<void> {
    const next = this.#queue.then(async () => {
      if (this.#clips.some((c) => c.hash === made.hash)) return;
      const pcm = await this.#decode(made.bytes).catch(() => undefined);
      if (!pcm) return; // unlabelled, not broken: the utterance still plays
      const variants = OFFSETS_MS.map((ms) => trimQuiet(contourOf(pcm, (ms * VOICE_SAMPLE_RATE) / 1000)));
      this.#clips.push({
        hash: made.hash,
        text: made.input.text,
        voice: made.input.voice,
        variants: variants.map((v) => v.frames),
        loudFrames: variants[0]!.loudFrames,
      });
      if (this.#clips.length > KEPT_CLIPS) this.#clips.splice(0, this.#clips.length - KEPT_CLIPS);
    });
    this.#queue = next;
    return next;
  }

  /**
   * The text `heard` (frames from the utterance's first loud packet) is, once one text matches its
   * shape clearly better than any other: while messages that start alike (the author's name read
   * first) match equally well, none. A complete utterance must also be about as long as the clip.
   */
  match(heard: readonly Frame[], complete: boolean): ClipLabel | undefined {
    const shaped = trimQuiet(heard);
    if (shaped.frames.length < MIN_FRAMES) return undefined;
    const best = new Map<string, { clip: Clip; score: number }>();
    for (const clip of this.#clips) {
      if (clip.loudFrames < MIN_FRAMES) continue;
      // Still playing: the clip must be at least as long as what was heard so far.
      if (!complete && clip.loudFrames + 5 < shaped.loudFrames) continue;
      if (complete && Math.abs(clip.loudFrames - shaped.loudFrames) > Math.max(10, 0.15 * clip.loudFrames)) continue;
      const score = Math.min(
        ...clip.variants.map((frames) => {
          const distance = contourDistance(shaped.frames, frames);
          return distance.db + PITCH_WEIGHT * distance.pitch;
        }),
      );
      const known = best.get(clip.text);
      if (!known || score < known.score) best.set(clip.text, { clip, score });
    }
    const [first, second] = [...best.values()].sort((a, b) => a.score - b.score);
    if (!first || first.score > MAX_SCORE || (second && second.score - first.score < MARGIN)) return undefined;
    return { text: first.clip.text, voice: first.clip.voice };
  }

  /**
   * MP3 to mono 16-bit PCM at the voice rate, in this process: mpg123 compiled to WebAssembly and
   * the resampler of @yomiage/media, as the bot's own uncached playback decodes (src/audio/mp3-opus.ts), where
   * an ffmpeg child per file cost ~60 ms of CPU before decoding anything.
   */
  async #decode(bytes: Buffer): Promise<Int16Array> {
    this.#decoder ??= readyDecoder().catch((error: unknown) => {
      this.#decoder = undefined; // the next file tries again
      throw error;
    });
    const decoder = await this.#decoder;
    try {
      const decoded = decoder.decode(bytes);
      if (decoded.samplesDecoded === 0) throw new Error('no MPEG audio frame in the file');
      // mpg123 gives two channels, a mono file's duplicated: the emulator's files are mono.
      const resampler = new Resampler({ from: decoded.sampleRate, to: VOICE_SAMPLE_RATE, channels: 1 });
      const first = resampler.push([decoded.channelData[0]!])[0]!;
      const rest = resampler.flush()[0]!;
      const pcm = new Int16Array(first.length + rest.length);
      pcm.set(toInt16(first));
      pcm.set(toInt16(rest), first.length);
      return pcm;
    } finally {
      await decoder.reset();
    }
  }
}

async function readyDecoder(): Promise<MPEGDecoder> {
  const decoder = new MPEGDecoder();
  await decoder.ready;
  return decoder;
}

function toInt16(samples: Float32Array): Int16Array {
  const out = new Int16Array(samples.length);
  for (let i = 0; i < samples.length; i++) out[i] = Math.max(-32768, Math.min(32767, Math.round(samples[i]! * 32768)));
  return out;
}
