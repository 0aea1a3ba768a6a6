import { describe, expect, it } from 'vitest';
import { NOTICE_TEXT, STANDARD_ERRORS, startEmulator } from '../src/index.ts';
import { FakeClock } from '../../../test/support/clock.ts';
import { call, DEFAULT_TOKEN, fastOptions, OTHER_TOKEN, PAID_TOKEN, STD, okStandard, standard, useEmulator } from './support.ts';

const ctx = useEmulator({ rate: { standard: { limit: 30, windowMs: 60_000 }, advanced: { limit: 10, windowMs: 60_000 } } });

describe('standard endpoint: errors table', () => {
  // Spec: Errors / Standard endpoint, one row per case; the status and exact message must match.
  it.each([
    ['Token does not exists: header missing', null, okStandard, 400, STANDARD_ERRORS.tokenMissing],
    ['Token does not exists: 63 characters', 'a'.repeat(63), okStandard, 400, STANDARD_ERRORS.tokenMissing],
    ['Token does not exists: 65 characters', 'a'.repeat(65), okStandard, 400, STANDARD_ERRORS.tokenMissing],
    ['Token does not match', 'a'.repeat(64), okStandard, 400, STANDARD_ERRORS.tokenMismatch],
    ['voice parameter is required: missing', DEFAULT_TOKEN, { text: 'a', speed: 1, pitch: 0 }, 400, STANDARD_ERRORS.voiceRequired],
    [
      'voice parameter is required: not a string',
      DEFAULT_TOKEN,
      { ...okStandard, voice: ['ja-JP-Wavenet-B'] },
      400,
      STANDARD_ERRORS.voiceRequired,
    ],
    ['Unsupported voice requested.', DEFAULT_TOKEN, { ...okStandard, voice: 'ja-JP-Nobody' }, 400, STANDARD_ERRORS.unsupportedVoice],
    ['Please set: text missing', DEFAULT_TOKEN, { voice: okStandard.voice, speed: 1, pitch: 0 }, 400, STANDARD_ERRORS.missingField],
    ['Please set: text empty', DEFAULT_TOKEN, { ...okStandard, text: '' }, 400, STANDARD_ERRORS.missingField],
    ['Please set: speed missing', DEFAULT_TOKEN, { voice: okStandard.voice, text: 'a', pitch: 0 }, 400, STANDARD_ERRORS.missingField],
    ['Please set: pitch missing', DEFAULT_TOKEN, { voice: okStandard.voice, text: 'a', speed: 1 }, 400, STANDARD_ERRORS.missingField],
    ['finite numbers: speed a string', DEFAULT_TOKEN, { ...okStandard, speed: 'fast' }, 400, STANDARD_ERRORS.notFinite],
  ])('%s', async (_name, token, body, status, error) => {
    const res = await standard(ctx.emu, body, { token });
    expect(res.status).toBe(status);
    expect(res.json).toEqual({ error });
  });

  it.each([
    ['speed 1e999 (Infinity)', `{"voice":"ja-JP-Wavenet-B","text":"a","speed":1e999,"pitch":0}`],
    ['pitch -1e999', `{"voice":"ja-JP-Wavenet-B","text":"a","speed":1,"pitch":-1e999}`],
    ['speed NaN literal', `{"voice":"ja-JP-Wavenet-B","text":"a","speed":NaN,"pitch":0}`],
    ['pitch Infinity literal', `{"voice":"ja-JP-Wavenet-B","text":"a","speed":1,"pitch":Infinity}`],
  ])('"speed" and "pitch" must be finite numbers: %s', async (_name, raw) => {
    const res = await standard(ctx.emu, undefined, { raw });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error: STANDARD_ERRORS.notFinite });
  });

  it('a body that is not JSON is a missing-field error', async () => {
    const res = await standard(ctx.emu, undefined, { raw: 'voice=ja-JP-Wavenet-B&text=a' });
    expect(res.status).toBe(400);
    expect(res.json.error).toMatch(/^voice parameter is required|^Please set/);
  });

  it('500 Internal server error when synthesis fails, and nothing is charged', async () => {
    // The tones need nothing outside the process; espeak-ng's reading is encoded by ffmpeg, and a
    // missing ffmpeg fails the request rather than falling back to the tones.
    const emu = await startEmulator(fastOptions(new FakeClock(), { speech: 'espeak' }));
    const saved = process.env.FFMPEG_PATH;
    process.env.FFMPEG_PATH = '/nonexistent/ffmpeg';
    try {
      const res = await standard(emu, { ...okStandard, text: 'ffmpeg is missing for this one' });
      expect(res.status).toBe(500);
      expect(res.json).toEqual({ error: STANDARD_ERRORS.internal });
      expect(emu.stats().charactersCharged).toBe(0);
    } finally {
      if (saved === undefined) delete process.env.FFMPEG_PATH;
      else process.env.FFMPEG_PATH = saved;
      await emu.close();
    }
  });

  it('500 Internal server error by fault injection, then service resumes', async () => {
    ctx.emu.injectFault({ target: 'standard', count: 1, status: 500 });
    const first = await standard(ctx.emu, okStandard);
    expect(first.status).toBe(500);
    expect(first.json).toEqual({ error: 'Internal server error' });
    expect((await standard(ctx.emu, okStandard)).status).toBe(200);
  });

  it('405 for a method other than POST', async () => {
    const res = await call(ctx.emu, 'GET', STD, { headers: { token: DEFAULT_TOKEN } });
    expect(res.status).toBe(405);
    expect(res.text).toBe('');
  });
});

describe('standard endpoint: success', () => {
  it('answers {text, url, pk, share} with a query-free 56-hex media URL that downloads an MP3', async () => {
    const res = await standard(ctx.emu, okStandard);
    expect(res.status).toBe(200);
    expect(Object.keys(res.json).sort()).toEqual(['pk', 'share', 'text', 'url']);
    expect(res.json.text).toBe(okStandard.text);
    expect(res.json.share).toBe(1);
    expect(typeof res.json.pk).toBe('number');
    expect(res.json.url).toMatch(new RegExp(`^${ctx.emu.baseUrl}/media/[0-9a-f]{56}\\.mp3$`));
    const audio = await fetch(res.json.url);
    expect(audio.status).toBe(200);
    expect(audio.headers.get('content-type')).toBe('audio/mpeg');
    expect((await audio.arrayBuffer()).byteLength).toBeGreaterThan(1000);
  });

  it('no CORS: no Access-Control-Allow-Origin, and a preflight is refused', async () => {
    const res = await standard(ctx.emu, okStandard);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    const pre = await call(ctx.emu, 'OPTIONS', STD, { headers: { origin: 'https://example.com' } });
    expect(pre.status).toBe(405);
  });

  it('out-of-range speed and pitch are replaced by 1.0 and 0: same audio URL as the defaults', async () => {
    const base = await standard(ctx.emu, { ...okStandard, text: '範囲外の値' });
    const wild = await standard(ctx.emu, { ...okStandard, text: '範囲外の値', speed: 9, pitch: -50 });
    const slow = await standard(ctx.emu, { ...okStandard, text: '範囲外の値', speed: 0.3 });
    expect(wild.status).toBe(200);
    expect(wild.json.url).toBe(base.json.url);
    expect(slow.json.url).not.toBe(base.json.url);
  });

  it('the same text and voice give the same URL, for any account', async () => {
    const a = await standard(ctx.emu, okStandard);
    const b = await standard(ctx.emu, okStandard, { token: PAID_TOKEN });
    const c = await standard(ctx.emu, { ...okStandard, voice: 'ja-JP-Wavenet-C' });
    expect(b.json.url).toBe(a.json.url);
    expect(c.json.url).not.toBe(a.json.url);
  });

  it('characters are counted in code points and charged once per text and settings (history)', async () => {
    ctx.emu.setRemaining(DEFAULT_TOKEN, 100);
    const text = '𠮷野家で😀'; // 5 code points, 7 UTF-16 units
    const first = await standard(ctx.emu, { ...okStandard, text });
    expect(ctx.emu.stats().charactersCharged).toBe(5);
    const again = await standard(ctx.emu, { ...okStandard, text });
    expect(again.json.pk).toBe(first.json.pk);
    expect(ctx.emu.stats().charactersCharged).toBe(5);
    // Other settings are another history entry and are charged.
    await standard(ctx.emu, { ...okStandard, text, speed: 1.5 });
    expect(ctx.emu.stats().charactersCharged).toBe(10);
  });
});

describe('standard endpoint: notice audio (allowance insufficient)', () => {
  it('200 with share 0, a Japanese notice text and notice audio; nothing charged', async () => {
    ctx.emu.setRemaining(DEFAULT_TOKEN, 4);
    const res = await standard(ctx.emu, { ...okStandard, text: 'あいうえお' });
    expect(res.status).toBe(200);
    expect(res.json.share).toBe(0);
    expect(res.json.text).toBe(NOTICE_TEXT);
    expect(res.json.text).not.toBe('あいうえお');
    expect(res.json.url).toMatch(/\/media\/[0-9a-f]{56}\.mp3$/);
    expect((await fetch(res.json.url)).status).toBe(200);
    expect(ctx.emu.stats()).toMatchObject({ charactersCharged: 0, notices: 1 });
    // Exactly enough is fine: 4 code points with 4 remaining.
    const fits = await standard(ctx.emu, { ...okStandard, text: 'あいうえ' });
    expect(fits.json).toMatchObject({ text: 'あいうえ', share: 1 });
  });
});

describe('standard endpoint: rate limit 30 / 60 s per client IP', () => {
  it('the 31st request in the window gets 429 with reset_in >= 1; another IP is unaffected', async () => {
    // Alternate tokens: the budget is per IP, shared across tokens.
    for (let i = 0; i < 30; i++) {
      const res = await standard(ctx.emu, okStandard, { ip: '192.0.2.1', token: i % 2 ? PAID_TOKEN : DEFAULT_TOKEN });
      expect(res.status).toBe(200);
    }
    const over = await standard(ctx.emu, okStandard, { ip: '192.0.2.1', token: OTHER_TOKEN });
    expect(over.status).toBe(429);
    expect(over.json.error).toBe('Rate limit exceeded');
    expect(over.json.reset_in).toBeGreaterThanOrEqual(1);
    expect(over.json.reset_in).toBeLessThanOrEqual(60);

    const elsewhere = await standard(ctx.emu, okStandard, { ip: '192.0.2.2' });
    expect(elsewhere.status).toBe(200);
  });

  it('reset_in counts down to when the oldest request leaves the window (sliding)', async () => {
    // One request at t0, 29 more at t0 + 1 s; invalid requests count too.
    expect((await standard(ctx.emu, {}, { ip: '192.0.2.3' })).status).toBe(400);
    await ctx.clock.advance(1_000);
    for (let i = 0; i < 29; i++) expect((await standard(ctx.emu, {}, { ip: '192.0.2.3' })).status).toBe(400);
    await ctx.clock.advance(44_500);
    const over = await standard(ctx.emu, okStandard, { ip: '192.0.2.3' });
    expect(over.status).toBe(429);
    expect(over.json.reset_in).toBe(15);
    await ctx.clock.advance(14_500);
    expect((await standard(ctx.emu, okStandard, { ip: '192.0.2.3' })).status).toBe(200);
    // Only the t0 slot freed: the next is refused again; the t0 + 1 s ones leave in 1 s.
    const again = await standard(ctx.emu, okStandard, { ip: '192.0.2.3' });
    expect(again.status).toBe(429);
    expect(again.json.reset_in).toBe(1);
  });
});
