import { execFile, spawn } from 'node:child_process';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { audioFor, espeakAvailable, startEmulator, type Emulator, type EmulatorOptions } from '../src/index.ts';
import { espeakArgs, speechRuns, speechSsml, voiceLanguage } from '../src/speech.ts';
import { call, DEFAULT_TOKEN, fastOptions, okStandard } from './support.ts';
import { FakeClock } from '../../../test/support/clock.ts';

// The emulator speaks real words with espeak-ng, and falls back to its tones without it.
// espeak-ng is required here as ffmpeg is (`bash .ci/run` installs both).
const run = promisify(execFile);
let dir: string;
const started: Emulator[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'emulator-speech-'));
});
afterAll(async () => {
  await Promise.all(started.map((e) => e.close()));
  await rm(dir, { recursive: true, force: true });
});

async function emulator(over: Partial<EmulatorOptions>): Promise<Emulator> {
  const emu = await startEmulator(fastOptions(new FakeClock(), over));
  started.push(emu);
  return emu;
}

/** The MP3 the emulator serves for a standard request with `body`. */
async function speak(emu: Emulator, body: Record<string, unknown>): Promise<Buffer> {
  const res = await call(emu, 'POST', '/text_to_speech_api/', { body: { ...okStandard, ...body }, headers: { token: DEFAULT_TOKEN } });
  expect(res.status).toBe(200);
  return Buffer.from(await (await fetch(res.json.url)).arrayBuffer());
}

let n = 0;
async function seconds(audio: Buffer, ext = 'mp3'): Promise<number> {
  const file = join(dir, `s${n++}.${ext}`);
  await writeFile(file, audio);
  const { stdout } = await run('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', file]);
  return Number(stdout.trim());
}

/** espeak-ng run by hand with `args`, reading `input` from stdin: its WAV. */
function espeakDirect(args: string[], input: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn('espeak-ng', args, { stdio: ['pipe', 'pipe', 'inherit'] });
    const out: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(Buffer.concat(out)) : reject(new Error(`espeak-ng exited with ${code}`))));
    child.stdin.end(input);
  });
}

/** A shell script standing in for espeak-ng: answers --version, fails on anything else. */
async function brokenEspeak(): Promise<string> {
  const file = join(dir, 'espeak-broken');
  await writeFile(file, '#!/bin/sh\nif [ "$1" = "--version" ]; then echo "eSpeak NG text-to-speech: 0 (broken)"; exit 0; fi\nexit 3\n');
  await chmod(file, 0o755);
  return file;
}

describe('which script each language reads (pure)', () => {
  it('GIVEN Japanese with kanji and an English word THEN kana is read in Japanese, kanji in Mandarin, Latin in English; digits stay with their run', () => {
    expect(speechRuns('今日は hello 123です', 'ja')).toEqual([
      { lang: 'cmn', text: '今日' },
      { lang: 'ja', text: 'は ' },
      { lang: 'en-us', text: 'hello 123' },
      { lang: 'ja', text: 'です' },
    ]);
  });

  it('GIVEN an English voice THEN Latin text is its own and kana still goes to Japanese', () => {
    expect(speechRuns('Hi ありがとう', 'en-us')).toEqual([
      { lang: 'en-us', text: 'Hi ' },
      { lang: 'ja', text: 'ありがとう' },
    ]);
  });

  it('GIVEN markup characters THEN the SSML escapes them (no tag of the member reaches espeak-ng)', () => {
    expect(speechSsml('<b>&"', 'en-us')).toBe('<speak>&lt;b&gt;&amp;&quot;</speak>');
    expect(speechSsml('テスト abc', 'ja')).toBe('<speak>テスト <voice xml:lang="en-us">abc</voice></speak>');
  });

  it('GIVEN service voice ids THEN the espeak-ng language follows their locale; named voices are English (Polly) or Japanese (advanced)', () => {
    expect(
      ['ja-JP-Wavenet-B', 'en-US-Wavenet-A', 'en-GB-News-K', 'cmn-CN-Wavenet-A', 'ko-KR-Wavenet-A', 'Joanna', 'Luna'].map(voiceLanguage),
    ).toEqual(['ja', 'en-us', 'en-gb', 'cmn', 'ko', 'en-us', 'ja']);
  });

  it('GIVEN speed and pitch THEN espeak-ng gets words per minute and its 0-99 pitch', () => {
    const args = espeakArgs({ kind: 'standard', text: 'x', voice: 'ja-JP-Wavenet-B', speed: 2, pitch: 10 });
    expect(args.slice(args.indexOf('-p'))).toEqual(['-p', '75', '-s', '350']);
    const slow = espeakArgs({ kind: 'standard', text: 'x', voice: 'ja-JP-Wavenet-B', speed: 0.3, pitch: -20 });
    expect(slow.slice(slow.indexOf('-p'))).toEqual(['-p', '0', '-s', '80']);
  });
});

describe('espeak-ng audio', () => {
  it('is installed (bash .ci/run installs it)', () => {
    expect(espeakAvailable(), 'espeak-ng must be on PATH for the test suite').toBe(true);
  });

  it('reads the text: an MP3 of the same format, not the tones, as long as espeak-ng reading it, the same bytes every time', async () => {
    const emu = await emulator({ speech: 'espeak' });
    expect(emu.speech).toBe('espeak');
    const text = 'こんにちは、よみあげのテストです。';
    const mp3 = await speak(emu, { text });
    expect(mp3[0]).toBe(0xff);
    expect(mp3[1]! & 0xfe).toBe(0xf2); // MPEG-2 Layer III, like the live service
    const tones = await audioFor({ kind: 'standard', ...okStandard, text }, 'tones');
    expect(mp3.equals(tones.bytes)).toBe(false);
    // espeak-ng's own reading of the same input, straight to WAV.
    const direct = await seconds(await espeakDirect(espeakArgs({ kind: 'standard', ...okStandard, text }), speechSsml(text, 'ja')), 'wav');
    expect(direct).toBeGreaterThan(1);
    expect(Math.abs((await seconds(mp3)) - direct)).toBeLessThan(0.15);
    const other = await emulator({ speech: 'espeak' });
    expect((await speak(other, { text })).equals(mp3)).toBe(true);
  });

  it('kanji are read (in Mandarin), not spelled out as "Chinese letter" by the Japanese voice', async () => {
    const emu = await emulator({ speech: 'espeak' });
    const read = await seconds(await speak(emu, { text: '漢字天気' }));
    const spelled = await seconds(await espeakDirect(['-v', 'ja', '--stdin', '--stdout'], '漢字天気'), 'wav');
    expect(read).toBeGreaterThan(0.5);
    expect(read).toBeLessThan(spelled * 0.6);
  });

  it('speed and voice shape the reading', async () => {
    const emu = await emulator({ speech: 'espeak' });
    const text = 'きょうはいいてんきですね、さんぽにいきましょう。';
    const normal = await speak(emu, { text });
    const fast = await speak(emu, { text, speed: 2 });
    expect(await seconds(fast)).toBeLessThan((await seconds(normal)) * 0.7);
    expect((await speak(emu, { text, voice: 'en-US-Wavenet-A' })).equals(normal)).toBe(false);
  });
});

describe('without espeak-ng', () => {
  it("speech 'auto' falls back to the tones, byte for byte", async () => {
    const emu = await emulator({ speech: 'auto', espeakPath: join(dir, 'no-such-espeak') });
    expect(emu.speech).toBe('tones');
    const text = 'トーンで読みます';
    const expected = await audioFor({ kind: 'standard', ...okStandard, text }, 'tones');
    expect((await speak(emu, { text })).equals(expected.bytes)).toBe(true);
  });

  it("speech 'espeak' refuses to start, naming espeak-ng", async () => {
    const error = await startEmulator({ speech: 'espeak', espeakPath: join(dir, 'no-such-espeak') }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'espeak_unavailable', message: expect.stringContaining('espeak-ng') });
  });

  it('an espeak-ng that fails on one text gives the tones for it: the request still succeeds', async () => {
    const emu = await emulator({ speech: 'auto', espeakPath: await brokenEspeak() });
    expect(emu.speech).toBe('espeak');
    const text = '失敗しても届きます';
    const expected = await audioFor({ kind: 'standard', ...okStandard, text }, 'tones');
    expect((await speak(emu, { text })).equals(expected.bytes)).toBe(true);
  });
});
