// The access token and job tokens never appear in errors (message, stack, JSON, inspected form,
// causes) nor in logs, on any error path.
import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TtsClient } from '../../src/tts/client.ts';
import { emulatorFixture, recordingLogger, routeServer } from './helpers.ts';
import { FakeClock } from '../support/clock.ts';

const SECRET = 'S3cr3tT0k3n'.repeat(6).slice(0, 60) + 'ZZZZ'; // 64 characters
const WRONG = 'Wr0ngT0k3n'.repeat(7).slice(0, 64);

let fx: Awaited<ReturnType<typeof emulatorFixture>>;
let html: Awaited<ReturnType<typeof routeServer>>;
beforeAll(async () => {
  fx = await emulatorFixture({
    accounts: [{ token: SECRET, plan: 'free', allowance: 100_000 }],
    jobs: { pendingMs: 1000, runningMs: 1000, minPollAfterMs: 1000, pollAfterMs: 1000 },
  });
  html = await routeServer({ '/x.mp3': (_q, r) => r.end('<html>nope</html>'), '/big.mp3': (_q, r) => r.end(Buffer.alloc(4096, 0xff)) });
});
afterAll(async () => {
  await fx.emulator.close();
  await html.close();
});

/** Everything an error could leak through. */
function surfaces(e: unknown): string {
  const parts: string[] = [String(e), inspect(e, { depth: Infinity, showHidden: true })];
  try {
    parts.push(JSON.stringify(e));
  } catch {
    parts.push('(unserialisable)');
  }
  let c: unknown = e;
  for (let i = 0; i < 10 && c instanceof Error; i++) {
    parts.push(c.message, c.stack ?? '', inspect(c, { depth: Infinity, showHidden: true }));
    c = (c as { cause?: unknown }).cause;
  }
  return parts.join('\n');
}

describe('no secret in any error path', () => {
  it('walks every error path', async () => {
    const STD = { voice: 'ja-JP-Wavenet-B', text: 'こんにちは', speed: 1, pitch: 0 };
    const ADV = { text: 'これは秘密を漏らさないテストです。' };
    const errors: unknown[] = [];
    const jobTokens: string[] = [];
    const logger = recordingLogger();
    const make = (over: Partial<ConstructorParameters<typeof TtsClient>[0]> = {}) => {
      // A deadline only where a timeout is the path under test (100 ms below): elsewhere a loaded
      // machine's slow answer must not turn an expected refusal into a timeout.
      const { client } = fx.fresh({ token: SECRET, logger, ...over });
      return client;
    };
    const catching = async (f: () => Promise<unknown>, expectCode?: string) => {
      try {
        await f();
      } catch (e) {
        errors.push(e);
        if (expectCode) expect((e as { code: string }).code).toBe(expectCode);
        return;
      }
      throw new Error('expected a failure');
    };
    const em = fx.emulator;

    // Local refusals.
    await catching(() => make().speak({ ...STD, text: '' }), 'invalid_input');
    await catching(() => make().narrate({ text: 'x' }), 'invalid_input');
    await catching(() => make({ token: SECRET.slice(0, 63) }).speak(STD), 'invalid_input');
    await catching(() => make({ token: `${SECRET.slice(0, 63)}\n` }).narrate(ADV), 'invalid_input');
    // Standard endpoint.
    await catching(() => make({ token: WRONG }).speak(STD), 'token_mismatch');
    for (const body of [{ error: 'Token does not exists' }, { error: `token ${SECRET} is bad` }, { nope: 1 }]) {
      let c = make();
      em.injectFault({ target: 'standard', count: 1, status: 400, body });
      await catching(() => c.speak(STD));
      c = make();
    }
    let c = make();
    em.injectFault({ target: 'standard', count: 4, status: 500, body: { error: `boom ${SECRET}` } });
    await catching(() => c.speak(STD), 'internal_error');
    c = make();
    em.injectFault({ target: 'standard', count: 4, status: 429 });
    await catching(() => c.speak(STD), 'rate_limited');
    c = make();
    em.injectFault({ target: 'standard', count: 1, status: 200, body: { bad: true } });
    await catching(() => c.speak(STD), 'bad_response');
    c = make();
    em.setRemaining(SECRET, 0);
    await catching(() => c.speak(STD), 'allowance_exhausted');
    // Timeouts are real time: a short deadline keeps the three attempts quick.
    c = make({ requestTimeoutMs: 100 });
    em.injectFault({ target: 'standard', count: 3, status: 500, delayMs: 1200 });
    await catching(() => c.speak(STD), 'timeout');
    await catching(() => make({ baseUrl: 'http://127.0.0.1:1' }).speak(STD), 'network');
    await catching(() => make({ baseUrl: 'http://127.0.0.1:1' }).narrate(ADV), 'network');
    const ac = new AbortController();
    ac.abort();
    await catching(() => make().speak(STD, { signal: ac.signal }), 'aborted');
    // Redirects: refused ones name the Location, which must not carry a secret back out.
    for (const [status, location] of [
      [302, `/ja/${SECRET}/text_to_speech_api/`],
      [307, `https://elsewhere.example/${SECRET}/?token=${SECRET}`],
      [301, `/text_to_speech_api/?token=${SECRET}`],
    ] as const) {
      c = make();
      em.injectFault({ target: 'standard', count: 1, status, body: null, headers: { Location: location } });
      await catching(() => c.speak(STD), 'redirect_refused');
    }
    c = make();
    em.injectFault({ target: 'standard', count: 1, status: 307, body: null, headers: { Location: '/ja/text_to_speech_api/' } });
    await c.speak(STD); // followed: logged, the token kept out of the log
    // Advanced creation.
    await catching(() => make({ token: WRONG }).createJob(ADV), 'invalid_token');
    for (const [status, body] of [
      [400, { code: 'invalid_request', error: `echo ${SECRET}` }],
      [400, { code: `weird_${SECRET}`, error: 'x' }],
      [403, undefined],
      [405, null],
      [429, { code: 'quota_exceeded', error: 'x', available: 1 }],
    ] as const) {
      c = make();
      em.injectFault({ target: 'advanced', count: 1, status, ...(body !== undefined ? { body } : {}) });
      await catching(() => c.createJob(ADV));
    }
    c = make();
    em.injectFault({ target: 'advanced', count: 4, status: 503 });
    await catching(() => c.createJob(ADV), 'tts_retry_exhausted');
    c = make();
    em.injectFault({ target: 'advanced', count: 4, status: 429 });
    await catching(() => c.createJob(ADV), 'rate_limited');
    // Polling and jobs.
    c = make();
    const job = await c.createJob(ADV);
    jobTokens.push(job.jobToken);
    await catching(() => c.pollJob(job.jobId, 'wrong-job-token'), 'forbidden');
    await catching(() => c.pollJob('00000000-0000-4000-8000-000000000000', job.jobToken), 'not_found');
    em.injectFault({ target: 'poll', count: 4, status: 500, body: { code: 'internal_error', error: `e ${job.jobToken}` } });
    await catching(() => c.pollJob(job.jobId, job.jobToken), 'internal_error');
    em.injectFault({ target: 'poll', count: 3, status: 500, delayMs: 1200 });
    const quick = new TtsClient({ token: SECRET, baseUrl: em.baseUrl, clock: fx.clock, logger, requestTimeoutMs: 100 });
    await catching(() => quick.pollJob(job.jobId, job.jobToken), 'timeout');
    em.injectFault({
      target: 'poll',
      count: 1,
      status: 302,
      body: null,
      headers: { Location: `/ja/api/advanced-tts/jobs/${job.jobToken}/` },
    });
    await catching(() => c.pollJob(job.jobId, job.jobToken), 'redirect_refused');
    for (const o of [
      { outcome: 'fail', code: 'content_policy_violation' },
      { outcome: 'fail', code: 'tts_retry_exhausted', count: 3 },
      { outcome: 'fail', code: 'mystery' },
      { outcome: 'stay_pending', count: 3 },
    ] as const) {
      c = make();
      em.nextJobs(o);
      await catching(() => c.narrate(ADV, { onJobCreated: (j) => void jobTokens.push(j.jobToken) }));
    }
    // Downloads.
    c = make({ download: { allowLoopback: true, maxBytes: 1024 } });
    await catching(() => c.download('https://evil.example.com/a.mp3'), 'download_refused');
    await catching(() => c.download(`${html.url}/x.mp3`), 'download_refused');
    await catching(() => c.download(`${html.url}/big.mp3`), 'download_refused');
    await catching(() => c.download(`${html.url}/missing.mp3`), 'download_failed');

    expect(errors.length).toBeGreaterThan(35);
    expect(jobTokens.length).toBeGreaterThan(5);
    for (const e of errors) {
      const text = surfaces(e);
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain(SECRET.slice(0, 20));
      expect(text).not.toContain(WRONG);
      for (const t of jobTokens) expect(text).not.toContain(t);
    }
    const logs = logger.lines.join('\n');
    expect(logs.length).toBeGreaterThan(0);
    expect(logs).not.toContain(SECRET);
    expect(logs).not.toContain(WRONG);
    for (const t of jobTokens) expect(logs).not.toContain(t);
  });

  it('the client itself does not show its token when inspected or serialised', () => {
    const client = new TtsClient({ token: SECRET, clock: new FakeClock({ autoAdvance: true }) });
    expect(inspect(client, { depth: Infinity, showHidden: true })).not.toContain(SECRET);
    expect(JSON.stringify(client)).not.toContain(SECRET);
  });
});
