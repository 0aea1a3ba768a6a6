/**
 * A local implementation of the whole TTS service interface (the service's interface specification):
 * the standard endpoint, advanced jobs with polling, the audio bucket, the per-IP rate limits and
 * the monthly allowance; plus fault injection for tests. See README.md in this package for the
 * choices made where the spec is silent.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { PLAN_ALLOWANCE } from './accounts.ts';
import { SECONDS_PER_CHAR } from './audio.ts';
import { EmulatorServer } from './server.ts';
import type { Emulator, EmulatorOptions } from './types.ts';

export type { Emulator, EmulatorOptions, RequestLogEntry } from './types.ts';
export { audioFor, type AudioInput } from './audio.ts';
export { espeakAvailable, type SpeechEngine, type SpeechOption } from './speech.ts';
export { ADVANCED_ERRORS, JOB_FAILURES, NOTICE_TEXT, STANDARD_ERRORS } from './messages.ts';
export { PLAN_ALLOWANCE } from './accounts.ts';

/** The test account's access token: 64 characters, never a real secret. */
export const DEFAULT_TOKEN = '0123456789abcdef'.repeat(4);

/** A realistic slice of the ~650 standard voice ids (the live service's list). */
const DEFAULT_VOICES: readonly string[] = [
  'ja-JP-Wavenet-A',
  'ja-JP-Wavenet-B',
  'ja-JP-Wavenet-C',
  'ja-JP-Wavenet-D',
  'ja-JP-Standard-A',
  'ja-JP-Standard-B',
  'ja-JP-Standard-C',
  'ja-JP-Standard-D',
  'ja-JP-Neural2-B',
  'en-US-Wavenet-A',
  'en-US-Wavenet-B',
  'en-US-Wavenet-C',
  'en-US-Wavenet-D',
  'en-US-Wavenet-E',
  'en-US-Wavenet-F',
  'en-US-Neural2-A',
  'cmn-CN-Wavenet-A',
  'es-ES-Standard-A',
  'ko-KR-Wavenet-A',
  'ja-JP-NanamiNeural',
  'ja-JP-NanamiNeural_cs',
  'ja-JP-KeitaNeural',
  'ja-JP-AoiNeural',
  'ja-JP-DaichiNeural',
  'ja-JP-MayuNeural',
  'ja-JP-NaokiNeural',
  'ja-JP-ShioriNeural',
  'ja-JP-JennyMultilingualV2Neural',
  'en-US-JennyNeural',
  'en-US-GuyNeural',
  'en-US-AriaNeural',
  'ja-JP-Mizuki',
  'ja-JP-Takumi',
  'ja-JP-Takumi-NTTS',
  'Joanna',
  'Matthew',
  'Salli',
  'Ivy',
  'Joey',
  'Justin',
  'Kendra',
  'Kevin',
  'Kimberly',
];

/** Defaults of every option; `accounts` holds one free account with DEFAULT_TOKEN. */
const EMULATOR_DEFAULTS = {
  port: 0,
  host: '127.0.0.1',
  accounts: [{ token: DEFAULT_TOKEN, plan: 'free', allowance: PLAN_ALLOWANCE.free }],
  sessions: [],
  voices: DEFAULT_VOICES,
  trustProxy: false,
  control: false,
  // The spec's enforced limits (Limits; Endpoints): 30 standard requests and 10 advanced job
  // creations per 60 seconds per client IP. Stated here from the spec, not taken from the client's
  // limiter, so the emulator checks the client against the service rather than against itself.
  rate: { standard: { limit: 30, windowMs: 60_000 }, advanced: { limit: 10, windowMs: 60_000 } },
  jobs: { pendingMs: 1_000, runningMs: 3_000, minPollAfterMs: 2_000, pollAfterMs: 2_000 },
  signedUrlTtlMs: 24 * 60 * 60 * 1000,
  synthesisDelayMs: 0,
  blockList: ['禁止ワード', 'forbidden-word'],
  now: () => Date.now(),
  sleep: async (ms: number) => void (await sleep(Math.max(0, ms))),
  speech: 'tones',
  espeakPath: 'espeak-ng',
  secondsPerChar: SECONDS_PER_CHAR,
} as const satisfies Omit<EmulatorOptions, 'publicBaseUrl' | 'onAudio'>;

/** Merges `options` over the defaults (nested `rate` and `jobs` field by field). */
function resolveEmulatorOptions(given: Partial<EmulatorOptions> = {}): EmulatorOptions {
  // An option passed as undefined means "the default", not "no value".
  const options = Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined)) as Partial<EmulatorOptions>;
  return {
    ...EMULATOR_DEFAULTS,
    accounts: EMULATOR_DEFAULTS.accounts.map((a) => ({ ...a })),
    sessions: [],
    blockList: [...EMULATOR_DEFAULTS.blockList],
    ...options,
    rate: {
      standard: { ...EMULATOR_DEFAULTS.rate.standard, ...options.rate?.standard },
      advanced: { ...EMULATOR_DEFAULTS.rate.advanced, ...options.rate?.advanced },
    },
    jobs: { ...EMULATOR_DEFAULTS.jobs, ...options.jobs },
  };
}

/** Starts an emulator listening on `options.host`:`options.port` (default 127.0.0.1, an ephemeral port). */
export async function startEmulator(options: Partial<EmulatorOptions> = {}): Promise<Emulator> {
  const server = new EmulatorServer(resolveEmulatorOptions(options));
  const port = await server.listen();
  return {
    baseUrl: server.baseUrl,
    port,
    options: server.options,
    speech: server.speech,
    close: () => server.close(),
    requests: () => server.requests(),
    clearRequests: () => server.clearRequests(),
    injectFault: (f) => server.injectFault(f),
    setLatency: (target, ms) => server.setLatency(target, ms),
    nextJobs: (o) => server.nextJobs(o),
    setRemaining: (token, remaining) => server.setRemaining(token, remaining),
    charged: (token) => server.charged(token),
    accounts: () => server.accounts(),
    stats: () => server.stats(),
    reset: () => server.reset(),
  };
}
