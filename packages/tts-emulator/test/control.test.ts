import { describe, expect, it } from 'vitest';
import { startEmulator } from '../src/index.ts';
import { DEFAULT_TOKEN, SESSION, advanced, call, okAdvanced, okStandard, poll, sessionHeaders, standard, useEmulator } from './support.ts';

const ctx = useEmulator();

function control(method: string, path: string, body?: unknown) {
  return call(ctx.emu, method, `/__emulator/${path}`, body === undefined ? {} : { body });
}

describe('control API over HTTP', () => {
  it('is absent unless enabled', async () => {
    const off = await startEmulator();
    try {
      expect((await call(off, 'GET', '/__emulator/stats')).status).toBe(404);
    } finally {
      await off.close();
    }
  });

  it('POST /__emulator/faults: the next `count` requests to the target get the fault, then normal service', async () => {
    expect(
      (
        await control('POST', 'faults', {
          target: 'standard',
          count: 2,
          status: 503,
          body: { error: 'maintenance' },
          headers: { 'x-fault': 'yes' },
        })
      ).status,
    ).toBe(200);
    for (let i = 0; i < 2; i++) {
      const res = await standard(ctx.emu, okStandard);
      expect(res.status).toBe(503);
      expect(res.json).toEqual({ error: 'maintenance' });
      expect(res.headers.get('x-fault')).toBe('yes');
    }
    expect((await standard(ctx.emu, okStandard)).status).toBe(200);
  });

  it('fault bodies: undefined = the spec body, null = none, a string = HTML', async () => {
    ctx.emu.injectFault({ target: 'advanced', count: 1, status: 429 });
    const limited = await advanced(ctx.emu, okAdvanced);
    expect(limited.json).toMatchObject({ code: 'rate_limited', retry_after: 1 });
    expect(limited.headers.get('retry-after')).toBe('1');

    ctx.emu.injectFault({ target: 'poll', count: 1, status: 502, body: null });
    const job = await advanced(ctx.emu, okAdvanced);
    const bare = await poll(ctx.emu, job.json.poll_url, { jobToken: job.json.job_token });
    expect(bare.status).toBe(502);
    expect(bare.text).toBe('');

    ctx.emu.injectFault({ target: 'audio', count: 1, status: 502, body: '<html>Bad Gateway</html>' });
    const std = await standard(ctx.emu, okStandard);
    const audio = await fetch(std.json.url);
    expect(audio.status).toBe(502);
    expect(audio.headers.get('content-type')).toMatch(/text\/html/);
    expect((await fetch(std.json.url)).status).toBe(200);
  });

  it('a chargeFirst fault charges (and records history, creates the job) and then answers 5xx; the per-account counter follows', async () => {
    expect(ctx.emu.charged(DEFAULT_TOKEN)).toBe(0);
    expect((await control('POST', 'faults', { target: 'standard', count: 1, status: 500, chargeFirst: true })).status).toBe(200);
    const lost = await standard(ctx.emu, okStandard);
    expect(lost.status).toBe(500);
    const chars = [...okStandard.text].length;
    expect(ctx.emu.charged(DEFAULT_TOKEN)).toBe(chars);
    // The history kept it: the same request again is served free with the first pk.
    const again = await standard(ctx.emu, okStandard);
    expect(again.status).toBe(200);
    expect(ctx.emu.charged(DEFAULT_TOKEN)).toBe(chars);

    ctx.emu.injectFault({ target: 'advanced', count: 1, status: 503, chargeFirst: true });
    expect((await advanced(ctx.emu, okAdvanced)).status).toBe(503);
    expect(ctx.emu.stats().jobsCreated).toBe(1);
    const advChars = [...okAdvanced.text].length;
    expect(ctx.emu.charged(DEFAULT_TOKEN)).toBe(chars + advChars);
    // A plain fault replaces the request: nothing charged.
    ctx.emu.injectFault({ target: 'advanced', count: 1, status: 503 });
    expect((await advanced(ctx.emu, okAdvanced)).status).toBe(503);
    expect(ctx.emu.charged(DEFAULT_TOKEN)).toBe(chars + advChars);
    const listed = (await control('GET', 'accounts')).json as { userId: string; charged: number }[];
    expect(listed.find((a) => a.userId === 'free-user')).toMatchObject({ charged: chars + advChars });
    expect(JSON.stringify(listed)).not.toContain(DEFAULT_TOKEN);
    expect(listed.find((a) => a.userId === 'paid-user')).toMatchObject({ charged: 0 });
  });

  it('the per-account counter is net of refunds of failed jobs and comes back to 0 on reset', async () => {
    ctx.emu.nextJobs({ outcome: 'fail', code: 'tts_retry_exhausted' });
    const job = await advanced(ctx.emu, okAdvanced);
    expect(ctx.emu.charged(DEFAULT_TOKEN)).toBe([...okAdvanced.text].length);
    await ctx.clock.advance(10_000);
    expect((await poll(ctx.emu, job.json.poll_url, { jobToken: job.json.job_token })).json).toMatchObject({ status: 'failed' });
    expect(ctx.emu.charged(DEFAULT_TOKEN)).toBe(0);
    await standard(ctx.emu, okStandard);
    ctx.emu.reset();
    expect(ctx.emu.charged(DEFAULT_TOKEN)).toBe(0);
  });

  it('a fault with delayMs answers no sooner than the delay', async () => {
    ctx.emu.injectFault({ target: 'standard', count: 1, status: 500, delayMs: 200 });
    const started = performance.now();
    const res = await standard(ctx.emu, okStandard);
    expect(res.status).toBe(500);
    expect(performance.now() - started).toBeGreaterThanOrEqual(190);
  });

  it('POST /__emulator/latency delays every request to the target', async () => {
    expect((await control('POST', 'latency', { target: 'poll', ms: 200 })).status).toBe(200);
    const started = performance.now();
    await poll(ctx.emu, '/api/advanced-tts/jobs/x/');
    expect(performance.now() - started).toBeGreaterThanOrEqual(190);
    await control('POST', 'latency', { target: 'all', ms: 0 });
  });

  it('POST /__emulator/jobs queues job outcomes', async () => {
    expect((await control('POST', 'jobs', { outcome: 'fail', code: 'user_unavailable' })).status).toBe(200);
    const job = await advanced(ctx.emu, okAdvanced);
    await ctx.clock.advance(10_000);
    expect((await poll(ctx.emu, job.json.poll_url, { jobToken: job.json.job_token })).json).toMatchObject({
      status: 'failed',
      code: 'user_unavailable',
    });
  });

  it('PUT /__emulator/accounts sets remaining characters and plan, and can add an account', async () => {
    expect((await control('PUT', 'accounts', { token: DEFAULT_TOKEN, remaining: 3 })).json).toMatchObject({ remaining: 3 });
    expect((await standard(ctx.emu, { ...okStandard, text: 'あいうえ' })).json.share).toBe(0);

    await control('PUT', 'accounts', { token: DEFAULT_TOKEN, remaining: 10_000, plan: 'paid' });
    expect((await advanced(ctx.emu, { text: 'あいうえおかきくけこ'.repeat(41) })).status).toBe(202);

    const fresh = 'n'.repeat(64);
    expect((await standard(ctx.emu, okStandard, { token: fresh })).json.error).toBe('Token does not match');
    await control('PUT', 'accounts', { token: fresh, remaining: 50 });
    expect((await standard(ctx.emu, okStandard, { token: fresh })).status).toBe(200);
  });

  it('GET /__emulator/stats and POST /__emulator/reset', async () => {
    await standard(ctx.emu, okStandard);
    await standard(ctx.emu, {}, { token: null });
    const stats = (await control('GET', 'stats')).json;
    expect(stats.requests.standard).toBe(2);
    expect(stats.statuses.standard).toEqual({ 200: 1, 400: 1 });
    expect(stats.planned.jobCreationsPerUserMinute.limit).toBe(30);
    // Both requests count against the per-IP window, the refused one too (spec: Limits).
    expect(stats.rate.standard).toEqual({ limit: 30, windowMs: 60_000, current: 2, retryInMs: 0 });
    expect(stats.rate.advanced).toMatchObject({ limit: 10, current: 0 });
    await control('POST', 'reset');
    expect((await control('GET', 'stats')).json.requests.standard).toBe(0);
  });

  it('rejects malformed control bodies with 400 and unknown routes with 404', async () => {
    expect((await control('POST', 'faults', { target: 'nowhere', count: 1, status: 500 })).status).toBe(400);
    expect((await control('POST', 'jobs', { outcome: 'explode' })).status).toBe(400);
    expect((await control('GET', 'nothing')).status).toBe(404);
  });
});

describe('request log', () => {
  it('records requests with target, status, code, client IP and parsed body; masks every secret', async () => {
    await standard(ctx.emu, okStandard, { ip: '192.0.2.44' });
    await standard(ctx.emu, okStandard, { token: 'z'.repeat(64) });
    const job = await advanced(ctx.emu, okAdvanced, { token: null, headers: sessionHeaders(ctx.emu) });
    await poll(ctx.emu, job.json.poll_url, { jobToken: job.json.job_token });
    await call(ctx.emu, 'GET', '/elsewhere');
    await control('GET', 'stats'); // control requests are not logged

    const log = (await control('GET', 'requests')).json as any[];
    expect(log.map((e) => [e.target, e.status])).toEqual([
      ['standard', 200],
      ['standard', 400],
      ['advanced', 202],
      ['poll', 200],
      ['other', 404],
    ]);
    expect(log[0]).toMatchObject({ method: 'POST', path: '/text_to_speech_api/', ip: '192.0.2.44', body: okStandard });
    expect(log[1].code).toBe('Token does not match');
    expect(log[0].headers.token).toBe('***');
    expect(log[2].headers).toMatchObject({ cookie: '***', 'x-csrftoken': '***' });
    expect(log[3].headers['x-job-token']).toBe('***');
    const dump = JSON.stringify(log);
    for (const secret of [DEFAULT_TOKEN, 'z'.repeat(64), SESSION.sessionid, SESSION.csrftoken, job.json.job_token]) {
      expect(dump).not.toContain(secret);
    }
    expect(ctx.emu.requests()).toHaveLength(5);

    await control('DELETE', 'requests');
    expect(ctx.emu.requests()).toEqual([]);
  });

  it('client IP is the socket address unless trustProxy', async () => {
    const plain = await startEmulator({ control: true });
    try {
      await call(plain, 'POST', '/text_to_speech_api/', { body: okStandard, headers: { 'x-forwarded-for': '203.0.113.9' } });
      expect(plain.requests()[0]!.ip).toBe('127.0.0.1');
    } finally {
      await plain.close();
    }
  });
});
