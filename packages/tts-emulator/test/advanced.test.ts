import { describe, expect, it } from 'vitest';
import { ADVANCED_ERRORS } from '../src/index.ts';
import {
  ADV,
  DEFAULT_TOKEN,
  OTHER_TOKEN,
  PAID_TOKEN,
  SESSION,
  advanced,
  call,
  okAdvanced,
  sessionHeaders,
  useEmulator,
} from './support.ts';

const ctx = useEmulator();

const text = okAdvanced.text;
/** n code points of Japanese text without long runs. */
const kana = (n: number) => 'あいうえお'.repeat(Math.ceil(n / 5)).slice(0, n);
const JAPANESE = /[\u3040-\u30ff\u4e00-\u9fff]/;

function expectCode(res: { status: number; json: any }, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(res.json.code).toBe(code);
  expect(res.json.error).toMatch(JAPANESE);
}

describe('advanced creation: errors table (JSON code and Japanese error)', () => {
  it.each([
    ['invalid_token: 63 characters', { token: 'a'.repeat(63) }, okAdvanced, 'invalid_token'],
    ['invalid_token: no matching user', { token: 'a'.repeat(64) }, okAdvanced, 'invalid_token'],
    ['invalid_json: not JSON', { raw: '{"text": "これは' }, undefined, 'invalid_json'],
    ['invalid_json: not an object', {}, [text], 'invalid_json'],
    ['validation_error: text missing', {}, { voice: 'Ruby' }, 'validation_error'],
    ['validation_error: shorter than 10', {}, { text: '短いテキスト' }, 'validation_error'],
    ['validation_error: only emoji', {}, { text: '😀😃😄😁😆😅🤣😂🙂🙃' }, 'validation_error'],
    ['validation_error: same character 20 times', {}, { text: `わ${'ー'.repeat(20)}い` }, 'validation_error'],
    ['invalid_speed', {}, { text, speed: 2 }, 'invalid_speed'],
    ['invalid_speed: not a number', {}, { text, speed: 'fast' }, 'invalid_speed'],
    ['invalid_pitch', {}, { text, pitch: 1.5 }, 'invalid_pitch'],
    ['invalid_temperature', {}, { text, temperature: 0.3 }, 'invalid_temperature'],
    ['invalid_seed: not an integer', {}, { text, seed: 0.5 }, 'invalid_seed'],
    ['invalid_seed: out of range', {}, { text, seed: 2 ** 31 }, 'invalid_seed'],
    ['invalid_model', {}, { text, model: 'turbo' }, 'invalid_model'],
    ['text_too_long: 401 on free', {}, { text: kana(401) }, 'text_too_long'],
    ['text_too_long: 3,001 on paid', { token: PAID_TOKEN }, { text: kana(3001) }, 'text_too_long'],
    ['invalid_voice', {}, { text, voice: 'Alice' }, 'invalid_voice'],
    ['content_policy_violation', {}, { text: `${text}禁止ワード` }, 'content_policy_violation'],
    ['invalid_request: tone over 100 characters', {}, { text, tone: 'あ'.repeat(101) }, 'invalid_request'],
  ])('400 %s', async (_name, opts, body, code) => {
    const res = await advanced(ctx.emu, body, opts);
    expectCode(res, 400, code);
  });

  it('400 client_ip_unresolved: no token, not logged in, client IP unknown', async () => {
    const res = await advanced(ctx.emu, okAdvanced, { token: null, ip: 'unknown' });
    expectCode(res, 400, 'client_ip_unresolved');
  });

  it.each([
    ['not logged in', {}],
    ['unknown session', { cookie: `sessionid=nope; csrftoken=${SESSION.csrftoken}` }],
    ['CSRF header differs from the cookie', { csrf: 'other' }],
    ['CSRF cookie missing', { cookie: `sessionid=${SESSION.sessionid}` }],
    ['Referer missing', { referer: '' }],
    ['Referer of another page', { referer: 'http://127.0.0.1:1/ja/tts/' }],
    ['Referer of another site', { referer: 'https://evil.example/ja/advanced-tts-beta/' }],
  ])('403 with an HTML body: %s', async (name, over) => {
    const headers: Record<string, string> = name === 'not logged in' ? {} : sessionHeaders(ctx.emu, over);
    if (headers.referer === '') delete headers.referer;
    const res = await advanced(ctx.emu, okAdvanced, { token: null, headers });
    expect(res.status).toBe(403);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.text).toMatch(/<html/);
  });

  it.each(['GET', 'PUT', 'DELETE'])('405 with no body for %s', async (method) => {
    const res = await call(ctx.emu, method, ADV, { headers: { token: DEFAULT_TOKEN } });
    expect(res.status).toBe(405);
    expect(res.text).toBe('');
  });

  it('429 quota_exceeded with the available characters; nothing charged', async () => {
    ctx.emu.setRemaining(DEFAULT_TOKEN, 12);
    const res = await advanced(ctx.emu, { text: kana(13) });
    expectCode(res, 429, 'quota_exceeded');
    expect(res.json.available).toBe(12);
    expect((await advanced(ctx.emu, { text: kana(12) })).status).toBe(202);
    expect(ctx.emu.stats().charactersCharged).toBe(12);
  });

  it.each([
    [500, 'service_not_configured'],
    [500, 'internal_error'],
    [503, 'unsupported_location'],
    [503, 'tts_retry_exhausted'],
  ])('%s %s (server-side, by fault injection)', async (status, code) => {
    ctx.emu.injectFault({ target: 'advanced', count: 1, status, code });
    const res = await advanced(ctx.emu, okAdvanced);
    expectCode(res, status, code);
    expect(res.json.error).toBe(ADVANCED_ERRORS[code as keyof typeof ADVANCED_ERRORS].error);
    if (code === 'unsupported_location') expect(res.json.error_code).toBe('UNSUPPORTED_LOCATION');
    expect((await advanced(ctx.emu, okAdvanced)).status).toBe(202);
  });
});

describe('advanced creation: success', () => {
  it('202 {job_id (UUID), job_token, status pending, min_poll_after_ms, poll_url}', async () => {
    const res = await advanced(ctx.emu, {
      ...okAdvanced,
      voice: 'Kai',
      tone: '落ち着いたニュース風',
      speed: 0.8,
      pitch: -0.5,
      model: 'pro',
      seed: 42,
      temperature: 0.7,
    });
    expect(res.status).toBe(202);
    expect(Object.keys(res.json).sort()).toEqual(['job_id', 'job_token', 'min_poll_after_ms', 'poll_url', 'status']);
    expect(res.json.job_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(res.json.status).toBe('pending');
    expect(res.json.min_poll_after_ms).toBe(500);
    expect(res.json.poll_url).toBe(`/api/advanced-tts/jobs/${res.json.job_id}/`);
    expect(res.json.job_token).not.toBe(DEFAULT_TOKEN);
    expect(res.json.job_token.length).toBeGreaterThanOrEqual(32);
  });

  it('job tokens are unguessable: distinct and high-entropy', async () => {
    const tokens = new Set<string>();
    for (let i = 0; i < 5; i++) tokens.add((await advanced(ctx.emu, okAdvanced)).json.job_token);
    expect(tokens.size).toBe(5);
    for (const t of tokens) expect(Buffer.from(t, 'base64url').length).toBeGreaterThanOrEqual(32);
  });

  it('session authentication with matching CSRF header and Referer is accepted without a token', async () => {
    const res = await advanced(ctx.emu, okAdvanced, { token: null, headers: sessionHeaders(ctx.emu) });
    expect(res.status).toBe(202);
    const en = await advanced(ctx.emu, okAdvanced, {
      token: null,
      headers: sessionHeaders(ctx.emu, { referer: `${ctx.emu.baseUrl}/en/advanced-tts-beta/` }),
    });
    expect(en.status).toBe(202);
  });

  it('a token request is accepted even when the client IP is unknown', async () => {
    expect((await advanced(ctx.emu, okAdvanced, { ip: 'unknown' })).status).toBe(202);
  });

  it('400 characters are fine on free, 3,000 on paid; characters are charged at creation', async () => {
    expect((await advanced(ctx.emu, { text: kana(400) })).status).toBe(202);
    expect((await advanced(ctx.emu, { text: kana(3000) }, { token: PAID_TOKEN })).status).toBe(202);
    expect(ctx.emu.stats().charactersCharged).toBe(3400);
  });
});

describe('advanced creation: rate limit 10 / 60 s per client IP', () => {
  it('the 11th creation gets 429 rate_limited with retry_after and Retry-After; another IP is unaffected', async () => {
    for (let i = 0; i < 10; i++) {
      const res = await advanced(ctx.emu, okAdvanced, { ip: '198.51.100.7', token: [DEFAULT_TOKEN, PAID_TOKEN, OTHER_TOKEN][i % 3]! });
      expect(res.status).toBe(202);
    }
    const over = await advanced(ctx.emu, okAdvanced, { ip: '198.51.100.7', token: PAID_TOKEN });
    expectCode(over, 429, 'rate_limited');
    expect(Number.isInteger(over.json.retry_after)).toBe(true);
    expect(over.json.retry_after).toBeGreaterThanOrEqual(1);
    expect(over.headers.get('retry-after')).toBe(String(over.json.retry_after));
    // Session requests from the same IP share the budget.
    const viaSession = await advanced(ctx.emu, okAdvanced, { ip: '198.51.100.7', token: null, headers: sessionHeaders(ctx.emu) });
    expect(viaSession.status).toBe(429);

    expect((await advanced(ctx.emu, okAdvanced, { ip: '198.51.100.8' })).status).toBe(202);
    await ctx.clock.advance(60_000);
    expect((await advanced(ctx.emu, okAdvanced, { ip: '198.51.100.7' })).status).toBe(202);
  });

  it('retry_after is the time until the oldest creation leaves the window', async () => {
    for (let i = 0; i < 10; i++) await advanced(ctx.emu, okAdvanced, { ip: '198.51.100.9' });
    await ctx.clock.advance(50_000);
    const over = await advanced(ctx.emu, okAdvanced, { ip: '198.51.100.9' });
    expect(over.json.retry_after).toBe(10);
  });
});
