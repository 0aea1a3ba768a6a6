/**
 * The playground labels each utterance it hears with the text the emulator made it from, by the
 * shape of its contour (src/clips.ts). Heard audio here goes the way the bot sends it:
 * the emulator's MP3, transcoded to Ogg Opus with leading silence trimmed, decoded back to PCM.
 */
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_TOKEN, startEmulator, type Emulator, type SpeechEngine } from '@yomiage/tts-emulator';
import { ClipIndex, contourDistance, contourOf, type Frame } from '../src/clips.ts';

const VOICE = 'ja-JP-Wavenet-B';
const texts = {
  short: 'Alice、こんにちは',
  long: 'Alice、こんにちは、げんきですか',
  // Same rhythm as `short` (five characters, a pause, five): only the pitch tells them apart.
  sameRhythm: 'Bobby、さようなら',
};

/** An emulator making `speech` audio, whose files are indexed as the playground does; and every MP3 it served. */
function setup(speech: SpeechEngine) {
  const ctx = { emulator: undefined as unknown as Emulator, clips: new ClipIndex(), made: [] as string[], mp3: new Map<string, Buffer>() };
  const added: Promise<void>[] = [];
  beforeAll(async () => {
    ctx.emulator = await startEmulator({
      speech,
      onAudio: (file) => {
        ctx.made.push(file.input.text);
        added.push(ctx.clips.add(file));
      },
    });
    for (const text of Object.values(texts)) ctx.mp3.set(text, await speak(ctx.emulator, text));
    await Promise.all(added);
  });
  afterAll(() => ctx.emulator?.close());
  return ctx;
}

async function speak(emulator: Emulator, text: string): Promise<Buffer> {
  const res = await fetch(`${emulator.baseUrl}/text_to_speech_api/`, {
    method: 'POST',
    headers: { token: DEFAULT_TOKEN, 'content-type': 'application/json' },
    body: JSON.stringify({ text, voice: VOICE, speed: 1, pitch: 0 }),
  });
  const { url } = (await res.json()) as { url: string };
  return Buffer.from(await (await fetch(url)).arrayBuffer());
}

/** Runs ffmpeg with `args`, `input` on stdin; resolves with stdout. */
function ffmpeg(args: string[], input: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn('ffmpeg', ['-hide_banner', '-loglevel', 'error', ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
    const out: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(Buffer.concat(out)) : reject(new Error(`ffmpeg exited with ${code}`))));
    child.stdin.end(input);
  });
}

/** What the page hears of an MP3: the bot's Ogg Opus of it (leading silence trimmed), decoded, at another gain. */
async function heard(mp3: Buffer, gain = 0.8): Promise<Frame[]> {
  const ogg = await ffmpeg(
    [
      '-i',
      'pipe:0',
      '-af',
      'silenceremove=start_periods=1:start_threshold=-50dB',
      '-ac',
      '2',
      '-ar',
      '48000',
      '-c:a',
      'libopus',
      '-b:a',
      '64k',
      '-f',
      'ogg',
      'pipe:1',
    ],
    mp3,
  );
  const raw = await ffmpeg(['-i', 'pipe:0', '-af', `volume=${gain}`, '-f', 's16le', '-ac', '1', '-ar', '48000', 'pipe:1'], ogg);
  return contourOf(new Int16Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + (raw.length & ~1))));
}

describe('the emulator tells the playground about each file it makes', () => {
  const ctx = setup('tones');
  it('once per file: a repeated text is served from memory and not announced again', async () => {
    expect(ctx.made).toEqual(Object.values(texts));
    await speak(ctx.emulator, texts.short);
    expect(ctx.made).toHaveLength(3);
    expect(ctx.clips.size).toBe(3);
  });
});

describe('contour matching (pure)', () => {
  const tone = (db: number, f0: number, n: number): Frame[] => Array.from({ length: n }, () => ({ db, f0 }));
  it('GIVEN the same contour 6 dB quieter THEN it is close; GIVEN it a semitone higher THEN it is not', () => {
    const clip = [...tone(-20, 150, 10), ...tone(-60, 0, 5), ...tone(-25, 180, 10)];
    const quieter = clip.map((f) => ({ db: f.db === -60 ? -60 : f.db - 6, f0: f.f0 }));
    expect(contourDistance(quieter, clip).db).toBeLessThan(1.5);
    expect(contourDistance(quieter, clip).pitch).toBe(0);
    const higher = clip.map((f) => ({ ...f, f0: f.f0 * 2 ** (1 / 12) }));
    expect(contourDistance(higher, clip).pitch).toBeCloseTo(1 / 12, 5);
  });

  it('GIVEN a 200 Hz tone THEN the frame says 200 Hz and its loudness', () => {
    const sine = new Int16Array(960).map((_, i) => Math.round(16384 * Math.sin((2 * Math.PI * 200 * i) / 48_000)));
    const [frame] = contourOf(sine);
    expect(frame!.f0).toBeGreaterThan(195);
    expect(frame!.f0).toBeLessThan(205);
    expect(frame!.db).toBeCloseTo(-9, 0);
  });
});

describe.each(['tones', 'espeak'] as const)('labelling what the bot plays (%s)', (speech) => {
  const ctx = setup(speech);
  const hear = (text: string) => heard(ctx.mp3.get(text)!);

  it('GIVEN each whole utterance THEN its own text, at another gain, through Opus', async () => {
    for (const text of Object.values(texts)) expect(ctx.clips.match(await hear(text), true)).toEqual({ text, voice: VOICE });
  });

  it('GIVEN the first second of a message that starts like another THEN no label yet; past the shorter one THEN the longer', async () => {
    const long = await hear(texts.long);
    const shortFrames = (await hear(texts.short)).length;
    expect(ctx.clips.match(long.slice(0, 40), false)).toBeUndefined();
    expect(ctx.clips.match(long.slice(0, shortFrames + 20), false)?.text).toBe(texts.long);
  });

  it('GIVEN audio the emulator never made THEN no label', () => {
    const noise = new Int16Array(48_000).map((_, i) => Math.round(8000 * Math.sin(i / 3) * Math.sin(i / 4000)));
    expect(ctx.clips.match(contourOf(noise), true)).toBeUndefined();
  });
});
