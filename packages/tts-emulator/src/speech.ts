/**
 * Real words for the emulator's audio: espeak-ng reads the text aloud when it is
 * installed, so trying the bot is hearing it read. Without it the emulator keeps its tones
 * (audio.ts `synthesizePcm`). espeak-ng has Japanese and English voices but reads no kanji (its
 * Japanese voice spells each one as "Chinese letter" in English), so the text is cut into runs by
 * script and each run is read by a voice that can: kana by Japanese, kanji by Mandarin, Latin
 * words by English (or the voice's own language), in one espeak-ng call through SSML.
 */
import { spawn, spawnSync } from 'node:child_process';
import { EmulatorError } from './errors.ts';
import type { AudioInput } from './audio-input.ts';
import { fnv1a } from './hash.ts';
import { ADVANCED_VOICES } from './validate.ts';

/** What makes the audio: espeak-ng's speech, or the deterministic tones. */
export type SpeechEngine = 'espeak' | 'tones';
/** The `speech` option: `auto` is espeak-ng when it runs here, else tones. */
export type SpeechOption = 'auto' | SpeechEngine;

/** Default espeak-ng words per minute (speed 1.0), and the range it accepts well. */
const ESPEAK_WPM = 175;
const MIN_WPM = 80;
const MAX_WPM = 900;

/** True when `espeakPath --version` runs: the engine `auto` picks. */
export function espeakAvailable(espeakPath = 'espeak-ng'): boolean {
  const probe = spawnSync(espeakPath, ['--version'], { stdio: ['ignore', 'pipe', 'ignore'], timeout: 10_000 });
  return probe.status === 0 && /espeak/i.test(probe.stdout?.toString() ?? '');
}

/** The engine an option asks for on this machine; `espeak` without espeak-ng is an error. */
export function resolveSpeechEngine(option: SpeechOption, espeakPath = 'espeak-ng'): SpeechEngine {
  if (option === 'tones') return 'tones';
  const available = espeakAvailable(espeakPath);
  if (option === 'espeak' && !available)
    throw new EmulatorError('espeak_unavailable', {
      message: `espeak-ng (${espeakPath}) could not be started; install it (apt-get install espeak-ng) or use speech: 'auto'`,
    });
  return available ? 'espeak' : 'tones';
}

/** The espeak-ng language of a service voice id: its locale prefix; named voices are English (Polly) or Japanese (advanced). */
export function voiceLanguage(voice: string): string {
  const locale = /^([a-z]{2,3})-([A-Z]{2})\b/.exec(voice);
  if (locale) {
    const [, lang, region] = locale as unknown as [string, string, string];
    if (lang === 'en') return region === 'GB' ? 'en-gb' : 'en-us';
    return lang;
  }
  if ((ADVANCED_VOICES as readonly string[]).includes(voice)) return 'ja';
  return /^[A-Z][a-z]+$/.test(voice) ? 'en-us' : 'ja';
}

/** One run of text and the espeak-ng language that reads it. */
interface SpeechRun {
  lang: string;
  text: string;
}

type Script = 'han' | 'kana' | 'hangul' | 'latin' | 'other';

function scriptOf(ch: string): Script {
  if (/\p{Script=Han}/u.test(ch)) return 'han';
  if (/[\p{Script=Hiragana}\p{Script=Katakana}ー]/u.test(ch)) return 'kana';
  if (/\p{Script=Hangul}/u.test(ch)) return 'hangul';
  if (/\p{Script=Latin}/u.test(ch)) return 'latin';
  return 'other';
}

/** The language that reads `script` for a voice speaking `voiceLang`; undefined: the voice's own. */
function languageFor(script: Script, voiceLang: string): string | undefined {
  switch (script) {
    case 'han':
      return voiceLang === 'ja' ? 'cmn' : voiceLang === 'cmn' || voiceLang === 'yue' ? undefined : 'cmn';
    case 'kana':
      return 'ja';
    case 'hangul':
      return 'ko';
    case 'latin':
      // A Latin-script voice reads Latin words itself; Japanese, Chinese and Korean voices spell them letter by letter.
      return ['ja', 'cmn', 'yue', 'ko'].includes(voiceLang) ? 'en-us' : undefined;
    default:
      return undefined;
  }
}

/**
 * Cuts `text` into runs by script, each with the language that reads it. Digits, spaces and
 * punctuation stay with the run they follow, so numbers are read in the surrounding language.
 */
export function speechRuns(text: string, voiceLang: string): SpeechRun[] {
  const runs: SpeechRun[] = [];
  for (const ch of text) {
    const script = scriptOf(ch);
    const last = runs.at(-1);
    const lang = script === 'other' ? (last?.lang ?? voiceLang) : (languageFor(script, voiceLang) ?? voiceLang);
    if (last && last.lang === lang) last.text += ch;
    else runs.push({ lang, text: ch });
  }
  return runs;
}

function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c]!);
}

/** The SSML espeak-ng reads (`-m`): each run not in the voice's language in a <voice> element. */
export function speechSsml(text: string, voiceLang: string): string {
  const body = speechRuns(text, voiceLang)
    .map((run) => (run.lang === voiceLang ? escapeXml(run.text) : `<voice xml:lang="${run.lang}">${escapeXml(run.text)}</voice>`))
    .join('');
  return `<speak>${body}</speak>`;
}

const FEMALE = ['f1', 'f2', 'f3', 'f4'];
const MALE = ['m1', 'm2', 'm3', 'm4'];
/** The advanced voices' list: twelve female names, then male ones (validate.ts). */
const FEMALE_ADVANCED = new Set<string>(ADVANCED_VOICES.slice(0, 12));

/** espeak-ng's command line for `input` (the SSML goes to stdin). */
export function espeakArgs(input: AudioInput): string[] {
  const lang = voiceLanguage(input.voice);
  const advanced = (ADVANCED_VOICES as readonly string[]).includes(input.voice);
  const variants = advanced ? (FEMALE_ADVANCED.has(input.voice) ? FEMALE : MALE) : [...FEMALE, ...MALE];
  const variant = variants[fnv1a(`${input.voice}|${input.seed ?? ''}|${input.tone ?? ''}`) % variants.length]!;
  const semitones = input.kind === 'standard' ? input.pitch : input.pitch * 6;
  const pitch = Math.round(Math.min(99, Math.max(0, 50 + semitones * 2.5)));
  const wpm = Math.round(Math.min(MAX_WPM, Math.max(MIN_WPM, ESPEAK_WPM * input.speed)));
  return ['-m', '--stdin', '--stdout', '-v', `${lang}+${variant}`, '-p', String(pitch), '-s', String(wpm)];
}

/**
 * Reads `input` with espeak-ng and encodes it like the tones: MPEG-2 Layer III, 24 kHz mono CBR,
 * bitexact, at most `maxSeconds` long. espeak-ng is deterministic, so equal inputs give equal bytes.
 */
export function espeakMp3(
  input: AudioInput,
  options: { espeakPath: string; ffmpeg: string; sampleRate: number; bitrate: string; maxSeconds: number },
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const espeak = spawn(options.espeakPath, espeakArgs(input), { stdio: ['pipe', 'pipe', 'pipe'] });
    const ffmpeg = spawn(
      options.ffmpeg,
      [
        '-hide_banner',
        '-loglevel',
        'error',
        '-nostdin',
        '-f',
        'wav',
        '-i',
        'pipe:0',
        '-t',
        String(options.maxSeconds),
        '-map_metadata',
        '-1',
        '-fflags',
        '+bitexact',
        '-flags:a',
        '+bitexact',
        '-c:a',
        'libmp3lame',
        '-b:a',
        options.bitrate,
        '-ar',
        String(options.sampleRate),
        '-ac',
        '1',
        '-write_xing',
        '0',
        '-id3v2_version',
        '0',
        '-f',
        'mp3',
        'pipe:1',
      ],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    let settled = false;
    const fail = (error: EmulatorError) => {
      if (settled) return;
      settled = true;
      espeak.kill();
      ffmpeg.kill();
      reject(error);
    };
    const out: Buffer[] = [];
    let espeakErr = '';
    let ffmpegErr = '';
    espeak.stderr.on('data', (d: Buffer) => (espeakErr += d.toString()));
    ffmpeg.stderr.on('data', (d: Buffer) => (ffmpegErr += d.toString()));
    ffmpeg.stdout.on('data', (d: Buffer) => out.push(d));
    espeak.on('error', (cause) => fail(new EmulatorError('espeak_unavailable', { cause })));
    ffmpeg.on('error', (cause) => fail(new EmulatorError('ffmpeg_unavailable', { cause })));
    // EPIPE when the other side exits early; the exit codes report the real failure.
    espeak.stdin.on('error', () => {});
    ffmpeg.stdin.on('error', () => {});
    espeak.stdout.pipe(ffmpeg.stdin);
    // Both must end well: a failing espeak-ng can still leave ffmpeg a valid, truncated file.
    const codes: { espeak?: number | null; ffmpeg?: number | null } = {};
    const settle = () => {
      if (settled || !('espeak' in codes) || !('ffmpeg' in codes)) return;
      if (codes.espeak !== 0)
        return fail(
          new EmulatorError('espeak_failed', { message: `espeak-ng exited with ${codes.espeak}: ${espeakErr.trim().slice(0, 300)}` }),
        );
      if (codes.ffmpeg !== 0)
        return fail(
          new EmulatorError('ffmpeg_failed', { message: `ffmpeg exited with ${codes.ffmpeg}: ${ffmpegErr.trim().slice(0, 300)}` }),
        );
      const bytes = Buffer.concat(out);
      if (bytes.length === 0) return fail(new EmulatorError('espeak_failed', { message: 'espeak-ng produced no audio' }));
      settled = true;
      resolve(bytes);
    };
    espeak.on('close', (code) => {
      codes.espeak = code;
      settle();
    });
    ffmpeg.on('close', (code) => {
      codes.ffmpeg = code;
      // An ffmpeg that ended early no longer reads: drain espeak-ng, or it blocks on a full pipe and never exits.
      espeak.stdout.unpipe(ffmpeg.stdin);
      espeak.stdout.resume();
      settle();
    });
    espeak.stdin.end(speechSsml(input.text, voiceLanguage(input.voice)));
  });
}
