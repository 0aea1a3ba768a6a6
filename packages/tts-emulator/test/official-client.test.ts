// The service's official client (WordPress plugin "text-to-speech Ondoku" 1.0.21) against the
// emulator: its exact request shapes over a raw HTTP/1.0 socket, and the choices they led to
// (locale-prefixed path, numeric strings). Sources: official-client.ts next to this file.
import { describe, expect, it } from 'vitest';
import { STANDARD_ERRORS } from '../src/index.ts';
import { PLUGIN_PATH, pluginBody, pluginHeaders, pluginPublish, pluginTokenCheck, rawHttp10 } from './official-client.ts';
import { ADV, DEFAULT_TOKEN, STD, call, okAdvanced, okStandard, standard, useEmulator } from './support.ts';

const ctx = useEmulator();
const saved = { pitch: '0', speed: '1.2', voice: 'ja-JP-Wavenet-B' };

describe('the official client, replayed over HTTP/1.0', () => {
  it('token check: "Hi" with string settings at /ja/ answers 200 {text, url, pk, share}, and the URL is an MP3', async () => {
    const res = await pluginTokenCheck(ctx.emu.baseUrl, DEFAULT_TOKEN, saved);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.json).toMatchObject({ text: 'Hi', share: 1 });
    expect(res.json.url).toMatch(/\/media\/[0-9a-f]{56}\.mp3$/);
    // The plugin stores the URL and plays it in an <audio> element: it must serve audio.
    const audio = await fetch(res.json.url);
    expect(audio.headers.get('content-type')).toBe('audio/mpeg');
    // Two characters charged: the standard endpoint has no minimum length.
    expect(ctx.emu.stats().charactersCharged).toBe(2);
    const [entry] = ctx.emu.requests();
    expect(entry).toMatchObject({ target: 'standard', path: PLUGIN_PATH, status: 200, body: { pitch: '0', speed: '1.2', text: 'Hi' } });
    expect(entry!.headers.token).toBe('***');
    expect(entry!.headers['content-type']).toBe('application/json;');
  });

  it('HTTP/1.0, content-Type with a semicolon and the 2-character "Hi" at the spec path, numbers: 200 (accepted before the locale and string changes too)', async () => {
    const body = JSON.stringify({ pitch: 0, speed: 1, text: 'Hi', voice: saved.voice });
    const res = await rawHttp10(ctx.emu.baseUrl, 'POST', STD, pluginHeaders(DEFAULT_TOKEN), body);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ text: 'Hi', share: 1 });
    expect(ctx.emu.stats().charactersCharged).toBe(2);
  });

  it('token check with a wrong token answers 400 (the plugin reads any 400 as an invalid token)', async () => {
    const res = await pluginTokenCheck(ctx.emu.baseUrl, 'w'.repeat(64), saved);
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error: STANDARD_ERRORS.tokenMismatch });
  });

  it('token check before the first save sends the integers 1 and 0: also 200', async () => {
    const res = await pluginTokenCheck(ctx.emu.baseUrl, DEFAULT_TOKEN, { pitch: 0, speed: 1, voice: 'en-US-Wavenet-A' });
    expect(res.status).toBe(200);
    expect(res.json.text).toBe('Hi');
  });

  it('publishing a post: \\u-escaped Japanese, tags and newlines stripped; same audio and history entry as the spec-shaped request', async () => {
    const post = '<p>こんにちは、<strong>世界</strong>。</p>\n<p>https://example.com/a を見てね</p>';
    const text = 'こんにちは、世界。https://example.com/a を見てね';
    const res = await pluginPublish(ctx.emu.baseUrl, DEFAULT_TOKEN, post, saved);
    expect(res.status).toBe(200);
    expect(res.json.text).toBe(text);
    // Strings "1.2" and "0" mean the numbers 1.2 and 0: our client's request at the spec's path
    // gets the same URL and the same history entry (pk), and is not charged again.
    const charged = ctx.emu.stats().charactersCharged;
    const spec = await standard(ctx.emu, { voice: saved.voice, text, speed: 1.2, pitch: 0 }, { ip: '127.0.0.1' });
    expect(spec.status).toBe(200);
    expect(spec.json.url).toBe(res.json.url);
    expect(spec.json.pk).toBe(res.json.pk);
    expect(ctx.emu.stats().charactersCharged).toBe(charged);
  });

  it('the body really is what PHP json_encode writes', () => {
    expect(pluginBody({ pitch: '0', speed: '1.2', text: 'あ/b', voice: 'v' })).toBe(
      '{"pitch":"0","speed":"1.2","text":"\\u3042\\/b","voice":"v"}',
    );
  });

  it('out-of-range strings are replaced by the defaults like numbers are', async () => {
    const a = await rawHttp10(
      ctx.emu.baseUrl,
      'POST',
      PLUGIN_PATH,
      pluginHeaders(DEFAULT_TOKEN),
      pluginBody({ pitch: '25', speed: '9', text: 'はい', voice: saved.voice }),
    );
    const b = await standard(ctx.emu, { voice: saved.voice, text: 'はい', speed: 1, pitch: 0 }, { ip: '127.0.0.1' });
    expect(a.status).toBe(200);
    expect(a.json.url).toBe(b.json.url);
  });
});

describe('numeric strings for speed and pitch', () => {
  // Spec: "Must be finite". A float parse takes "inf" and "nan" too; the finite check refuses them.
  it.each([
    ['speed "inf"', { speed: 'inf' }],
    ['speed "-Infinity"', { speed: '-Infinity' }],
    ['pitch "nan"', { pitch: 'nan' }],
    ['pitch "NaN"', { pitch: 'NaN' }],
    ['speed "1e999"', { speed: '1e999' }],
    ['speed "fast"', { speed: 'fast' }],
    ['speed "0x10"', { speed: '0x10' }],
    ['pitch ""', { pitch: '' }],
    ['speed true', { speed: true }],
  ])('%s: 400 "speed" and "pitch" must be finite numbers', async (_name, over) => {
    const res = await standard(ctx.emu, { ...okStandard, ...over });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error: STANDARD_ERRORS.notFinite });
    expect(ctx.emu.stats().charactersCharged).toBe(0);
  });

  it.each([
    ['"1.2" and "0"', '1.2', '0'],
    ['" 2 " and "-3.5"', ' 2 ', '-3.5'],
    ['"1e0" and "+1"', '1e0', '+1'],
  ])('%s are accepted at the spec path too', async (_name, speed, pitch) => {
    const res = await standard(ctx.emu, { ...okStandard, speed, pitch });
    expect(res.status).toBe(200);
  });

  it('the advanced endpoint still wants numbers (spec: invalid_speed "speed not a number")', async () => {
    const res = await call(ctx.emu, 'POST', ADV, {
      headers: { token: DEFAULT_TOKEN },
      body: { ...okAdvanced, speed: '1.0' },
      ip: '10.0.0.1',
    });
    expect(res.status).toBe(400);
    expect(res.json.code).toBe('invalid_speed');
  });
});

describe('locale-prefixed standard path', () => {
  const post = (path: string) => call(ctx.emu, 'POST', path, { headers: { token: DEFAULT_TOKEN }, body: okStandard, ip: '10.0.0.1' });

  it.each([
    STD,
    '/ja/text_to_speech_api/',
    '/en/text_to_speech_api/',
    '/ko/text_to_speech_api/',
    '/zh-hans/text_to_speech_api/',
    '/zh-hant/text_to_speech_api/',
    '/pt-br/text_to_speech_api/',
    '/es-419/text_to_speech_api/',
  ])('%s is the standard endpoint', async (path) => {
    const res = await post(path);
    expect(res.status).toBe(200);
    expect(res.json.text).toBe(okStandard.text);
    expect(ctx.emu.requests().at(-1)).toMatchObject({ path, target: 'standard' });
  });

  it.each([
    ['upper case', '/JA/text_to_speech_api/'],
    ['a BCP 47 region in upper case', '/ja-JP/text_to_speech_api/'],
    ['three letters (not a locale the site uses)', '/api/text_to_speech_api/'],
    ['two prefixes', '/ja/en/text_to_speech_api/'],
    ['an underscore', '/zh_cn/text_to_speech_api/'],
    ['no trailing slash', '/ja/text_to_speech_api'],
  ])('%s: 404, not the endpoint', async (_name, path) => {
    const res = await post(path);
    expect(res.status).toBe(404);
    expect(ctx.emu.stats().charactersCharged).toBe(0);
  });

  it('the rate window is one for all paths (the limit is per client IP)', async () => {
    const emu = ctx.emu;
    // 30 requests alternating between the two paths fill the window; the 31st is refused.
    for (let i = 0; i < 30; i++) expect((await post(i % 2 ? STD : PLUGIN_PATH)).status).toBe(200);
    const res = await post(PLUGIN_PATH);
    expect(res.status).toBe(429);
    expect(emu.stats().requests.standard).toBe(31);
  });

  it('the advanced endpoints keep their exact paths: /ja/api/advanced-tts/ is 404', async () => {
    const res = await call(ctx.emu, 'POST', `/ja${ADV}`, { headers: { token: DEFAULT_TOKEN }, body: okAdvanced, ip: '10.0.0.1' });
    expect(res.status).toBe(404);
  });
});
