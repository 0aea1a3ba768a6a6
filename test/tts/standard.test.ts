// TtsClient.speak over real HTTP against the emulator, with injected faults and a virtual clock.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TtsAllowanceError, TtsServiceError } from '../../src/tts/errors.ts';
import { DEFAULT_TOKEN, emulatorFixture, rejection } from './helpers.ts';

let fx: Awaited<ReturnType<typeof emulatorFixture>>;
beforeAll(async () => {
  fx = await emulatorFixture();
});
afterAll(() => fx.emulator.close());

const REQ = { voice: 'ja-JP-Wavenet-B', text: 'こんにちは', speed: 1, pitch: 0 };

describe('speak: success', () => {
  it('GIVEN a valid request THEN returns url and pk, and the URL downloads as MP3', async () => {
    const { client, limiter } = fx.fresh();
    const r = await client.speak(REQ);
    expect(r.text).toBe(REQ.text);
    expect(r.url).toMatch(/\/media\/[0-9a-f]{56}\.mp3$/);
    expect(r.substituted).toEqual({});
    expect(limiter.acquires).toEqual(['standard']);
    const audio = await client.download(r.url);
    expect(audio.length).toBeGreaterThan(100);
  });

  it('GIVEN out-of-range speed and pitch THEN not an error; the substitution is reported', async () => {
    const { client } = fx.fresh();
    const r = await client.speak({ ...REQ, speed: 9, pitch: -25 });
    expect(r.substituted).toEqual({ speed: { requested: 9, used: 1 }, pitch: { requested: -25, used: 0 } });
    expect(fx.seen('standard')).toHaveLength(1);
  });
});

describe('speak: retries (spec: Errors / Standard endpoint, retry guidance)', () => {
  it('GIVEN two 500s THEN exactly 3 attempts, waiting 1 s then 2 s', async () => {
    const { client, clock, limiter } = fx.fresh();
    fx.emulator.injectFault({ target: 'standard', count: 2, status: 500 });
    const r = await client.speak(REQ);
    expect(r.pk).toBeGreaterThan(0);
    expect(fx.seen('standard')).toHaveLength(3);
    expect(clock.sleeps).toEqual([1000, 2000]);
    expect(limiter.acquires).toEqual(['standard', 'standard', 'standard']);
  });

  it('GIVEN four 500s THEN fails with internal_error after 4 attempts (1, 2, 4 s)', async () => {
    const { client, clock } = fx.fresh();
    fx.emulator.injectFault({ target: 'standard', count: 4, status: 500 });
    const e = await rejection(client.speak(REQ));
    expect(e).toBeInstanceOf(TtsServiceError);
    expect(e.code).toBe('internal_error');
    expect(e.context).toMatchObject({ endpoint: 'standard', status: 500, attempts: 4 });
    expect(fx.seen('standard')).toHaveLength(4);
    expect(clock.sleeps).toEqual([1000, 2000, 4000]);
  });

  it('GIVEN a 429 with reset_in 7 THEN the next attempt waits 7 s and the limiter is blocked 7 s', async () => {
    const { client, clock, limiter } = fx.fresh();
    fx.emulator.injectFault({ target: 'standard', count: 1, status: 429, body: { error: 'Rate limit exceeded', reset_in: 7 } });
    await client.speak(REQ);
    expect(clock.sleeps).toEqual([7000]);
    expect(limiter.blocks).toEqual([['standard', 7000]]);
    expect(fx.seen('standard')).toHaveLength(2);
  });

  it('GIVEN a 429 with reset_in 1 THEN waits at least 2 s', async () => {
    const { client, clock } = fx.fresh();
    fx.emulator.injectFault({ target: 'standard', count: 1, status: 429, body: { error: 'Rate limit exceeded', reset_in: 1 } });
    await client.speak(REQ);
    expect(clock.sleeps).toEqual([2000]);
  });

  it('GIVEN 429s that do not stop THEN rate_limited after the bounded retries', async () => {
    const { client } = fx.fresh();
    fx.emulator.injectFault({ target: 'standard', count: 10, status: 429, body: { error: 'Rate limit exceeded', reset_in: 3 } });
    const e = await rejection(client.speak(REQ));
    expect(e.code).toBe('rate_limited');
    expect(e.kind).toBe('limited');
    expect(fx.seen('standard')).toHaveLength(4);
  });

  it('GIVEN the real rate limit of the emulator THEN the client waits reset_in and then succeeds', async () => {
    const { client, clock } = fx.fresh();
    // The same text each time: served from history (cheap), but every request counts against the rate.
    for (let i = 0; i < 30; i++) await client.speak(REQ);
    expect(clock.sleeps).toEqual([]);
    const r = await client.speak(REQ);
    expect(r.text).toBe(REQ.text);
    expect(fx.emulator.stats().statuses.standard[429]).toBe(1);
    expect(clock.sleeps).toHaveLength(1);
    expect(clock.sleeps[0]).toBeGreaterThanOrEqual(2000);
  });

  const final: [string, Record<string, unknown>, string][] = [
    ['Token does not match', { error: 'Token does not match' }, 'token_mismatch'],
    ['Token does not exists', { error: 'Token does not exists' }, 'token_missing'],
    ['Unsupported voice requested.', { error: 'Unsupported voice requested.' }, 'unsupported_voice'],
    ['an unknown message', { error: 'Something new' }, 'unknown'],
  ];
  for (const [name, body, code] of final) {
    it(`GIVEN a 400 "${name}" THEN exactly one attempt and code ${code}`, async () => {
      const { client, clock } = fx.fresh();
      fx.emulator.injectFault({ target: 'standard', count: 1, status: 400, body });
      const e = await rejection(client.speak(REQ));
      expect(e.code).toBe(code);
      expect(e.context.status).toBe(400);
      expect(fx.seen('standard')).toHaveLength(1);
      expect(clock.sleeps).toEqual([]);
    });
  }

  it('GIVEN a wrong (well-formed) token THEN token_mismatch from the service, one attempt', async () => {
    const { client } = fx.fresh({ token: 'f'.repeat(64) });
    const e = await rejection(client.speak(REQ));
    expect(e.code).toBe('token_mismatch');
    expect(e.kind).toBe('refused');
    expect(fx.seen('standard')).toHaveLength(1);
  });

  it('GIVEN a voice the service does not know THEN unsupported_voice (the service is the authority)', async () => {
    const { client } = fx.fresh();
    const e = await rejection(client.speak({ ...REQ, voice: 'xx-XX-Nobody' }));
    expect(e.code).toBe('unsupported_voice');
    expect(fx.seen('standard')).toHaveLength(1);
  });

  it('GIVEN network timeouts THEN retried twice, then a timeout error', async () => {
    const { client } = fx.fresh({ requestTimeoutMs: 150 });
    fx.emulator.injectFault({ target: 'standard', count: 3, status: 500, delayMs: 1500 });
    const e = await rejection(client.speak(REQ));
    expect(e.code).toBe('timeout');
    expect(e.context.attempts).toBe(3);
    expect(fx.seen('standard')).toHaveLength(3);
  });

  it('GIVEN one network timeout THEN the retry succeeds', async () => {
    const { client } = fx.fresh({ requestTimeoutMs: 150 });
    fx.emulator.injectFault({ target: 'standard', count: 1, status: 500, delayMs: 1500 });
    const r = await client.speak(REQ);
    expect(r.text).toBe(REQ.text);
  });

  it('GIVEN nothing listens THEN a network error after the retries', async () => {
    const { client } = fx.fresh({ baseUrl: 'http://127.0.0.1:1' });
    const e = await rejection(client.speak(REQ));
    expect(e.code).toBe('network');
    expect(e.context.attempts).toBe(3);
  });

  it('GIVEN an aborted signal THEN aborted, and nothing is sent', async () => {
    const { client } = fx.fresh();
    const ac = new AbortController();
    ac.abort();
    const e = await rejection(client.speak(REQ, { signal: ac.signal }));
    expect(e.code).toBe('aborted');
    expect(fx.seen('standard')).toHaveLength(0);
  });

  it('GIVEN an abort during a backoff wait THEN aborted without further attempts', async () => {
    const { client } = fx.fresh();
    fx.emulator.injectFault({ target: 'standard', count: 4, status: 500 });
    const ac = new AbortController();
    const p = client.speak(REQ, { signal: ac.signal });
    // Abort as soon as the first failure has been answered.
    while (fx.emulator.requests().filter((r) => r.target === 'standard' && r.status === 500).length < 1)
      await new Promise((r) => setImmediate(r));
    ac.abort();
    const e = await rejection(p);
    expect(e.code).toBe('aborted');
    expect(fx.seen('standard').length).toBeLessThan(4);
  });
});

describe('speak: notice audio (spec: Notice responses)', () => {
  it('GIVEN an exhausted allowance THEN allowance_exhausted and no audio', async () => {
    const { client } = fx.fresh();
    fx.emulator.setRemaining(DEFAULT_TOKEN, 0);
    const e = await rejection(client.speak(REQ));
    expect(e).toBeInstanceOf(TtsAllowanceError);
    expect(e.code).toBe('allowance_exhausted');
    expect(e.kind).toBe('limited');
    expect(e.message).toMatch(/allowance/i);
    expect(JSON.stringify(e)).not.toContain('/media/');
    expect(fx.emulator.stats().notices).toBe(1);
    expect(fx.seen('standard')).toHaveLength(1);
  });

  it('GIVEN share 1 but a different text THEN still notice audio', async () => {
    const { client } = fx.fresh();
    fx.emulator.injectFault({
      target: 'standard',
      count: 1,
      status: 200,
      body: { text: 'ご案内', url: `${fx.emulator.baseUrl}/media/${'a'.repeat(56)}.mp3`, pk: 9, share: 1 },
    });
    const e = await rejection(client.speak(REQ));
    expect(e.code).toBe('allowance_exhausted');
  });

  it('GIVEN a 200 with a malformed body THEN bad_response', async () => {
    const { client } = fx.fresh();
    fx.emulator.injectFault({ target: 'standard', count: 1, status: 200, body: { hello: 1 } });
    const e = await rejection(client.speak(REQ));
    expect(e.code).toBe('bad_response');
  });
});
