import { afterAll, beforeAll, beforeEach } from 'vitest';
import { FakeClock } from '../../../test/support/clock.ts';
import { DEFAULT_TOKEN, startEmulator, type Emulator, type EmulatorOptions } from '../src/index.ts';

export { DEFAULT_TOKEN };
/** A second, paid account. */
export const PAID_TOKEN = 'f'.repeat(64);
export const OTHER_TOKEN = 'e'.repeat(64);
export const SESSION = { sessionid: 'sess-free', csrftoken: 'csrf-token-value-123' };
export const OTHER_SESSION = { sessionid: 'sess-other' };

/** Options for a fast emulator: a FakeClock the test moves (rate windows, job timings and URL expiry follow it), accounts free + paid + other, sessions, control on. */
export function fastOptions(clock: FakeClock, over: Partial<EmulatorOptions> = {}): Partial<EmulatorOptions> {
  return {
    now: clock.now,
    control: true,
    trustProxy: true,
    accounts: [
      { token: DEFAULT_TOKEN, plan: 'free', allowance: 5000, userId: 'free-user' },
      { token: PAID_TOKEN, plan: 'paid', allowance: 1_000_000, userId: 'paid-user' },
      { token: OTHER_TOKEN, plan: 'free', allowance: 5000, userId: 'other-user' },
    ],
    sessions: [
      { sessionid: SESSION.sessionid, token: DEFAULT_TOKEN },
      { sessionid: OTHER_SESSION.sessionid, token: OTHER_TOKEN },
    ],
    jobs: { pendingMs: 1_000, runningMs: 2_000, minPollAfterMs: 500, pollAfterMs: 700 },
    ...over,
  };
}

/** Starts one emulator for the file and resets it (and the clock's rate windows) before each test. */
export function useEmulator(over: Partial<EmulatorOptions> = {}) {
  const clock = new FakeClock();
  const ctx = { clock, emu: undefined as unknown as Emulator };
  beforeAll(async () => {
    ctx.emu = await startEmulator(fastOptions(clock, over));
  });
  beforeEach(async () => {
    ctx.emu.reset();
    // A fresh minute, so windows of earlier tests are empty.
    await clock.advance(24 * 60 * 60 * 1000);
  });
  afterAll(() => ctx.emu?.close());
  return ctx;
}

export interface Res {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

/** One HTTP request to the emulator; `ip` sets X-Forwarded-For (the emulators here trust it). */
export async function call(
  emu: Emulator,
  method: string,
  path: string,
  opts: { body?: unknown; raw?: string; headers?: Record<string, string>; ip?: string } = {},
): Promise<Res> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.ip !== undefined) headers['x-forwarded-for'] = opts.ip;
  let body: string | undefined = opts.raw;
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['content-type'] ??= 'application/json';
  }
  const url = path.startsWith('http') ? path : `${emu.baseUrl}${path}`;
  const res = await fetch(url, { method, headers, body: body ?? null });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

export const STD = '/text_to_speech_api/';
export const ADV = '/api/advanced-tts/';

export const okStandard = { voice: 'ja-JP-Wavenet-B', text: 'こんにちは', speed: 1, pitch: 0 };
export const okAdvanced = { text: 'これは高度な音声合成のテストです。' };

export function standard(emu: Emulator, body: unknown, opts: { token?: string | null; ip?: string; raw?: string } = {}) {
  const headers: Record<string, string> = {};
  const token = opts.token === undefined ? DEFAULT_TOKEN : opts.token;
  if (token !== null) headers.token = token;
  return call(emu, 'POST', STD, { headers, ip: opts.ip ?? '10.0.0.1', ...(opts.raw !== undefined ? { raw: opts.raw } : { body }) });
}

export function advanced(
  emu: Emulator,
  body: unknown,
  opts: { token?: string | null; ip?: string; raw?: string; headers?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = { ...opts.headers };
  const token = opts.token === undefined ? DEFAULT_TOKEN : opts.token;
  if (token !== null) headers.token = token;
  return call(emu, 'POST', ADV, { headers, ip: opts.ip ?? '10.0.0.1', ...(opts.raw !== undefined ? { raw: opts.raw } : { body }) });
}

export function poll(emu: Emulator, pollUrl: string, opts: { jobToken?: string; ip?: string; headers?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.jobToken !== undefined) headers['x-job-token'] = opts.jobToken;
  return call(emu, 'GET', pollUrl, { headers, ip: opts.ip ?? '10.0.0.1' });
}

/** Session-authentication headers that pass the CSRF checks. */
export function sessionHeaders(emu: Emulator, over: { cookie?: string; csrf?: string; referer?: string } = {}) {
  return {
    cookie: over.cookie ?? `sessionid=${SESSION.sessionid}; csrftoken=${SESSION.csrftoken}`,
    'x-csrftoken': over.csrf ?? SESSION.csrftoken,
    referer: over.referer ?? `${emu.baseUrl}/ja/advanced-tts-beta/`,
  };
}
