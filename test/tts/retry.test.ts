// The retry rules as pure functions (spec: Errors / Standard endpoint retry guidance, Advanced
// retry guidance), GIVEN a failure and the retries already spent THEN the verdict; and the one
// loop that runs them, on a virtual clock.
import { describe, expect, it } from 'vitest';
import { TtsError, TtsNetworkError, TtsServiceError, type TtsErrorCode } from '../../src/tts/errors.ts';
import {
  RETRY_DEFAULTS,
  downloadRetryRule,
  serviceRetryRule,
  withRetries,
  type Attempt,
  type Failure,
  type RetriesSpent,
  type RetryVerdict,
  type ServiceCall,
} from '../../src/tts/retry.ts';
import { FakeClock } from '../support/clock.ts';

const NONE: RetriesSpent = { server: 0, rate: 0, network: 0 };

function answer(code: TtsErrorCode, status: number, retryAfterMs?: number): Failure {
  return {
    ok: false,
    answered: true,
    error: new TtsServiceError(code, { status, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) }),
  };
}
function broken(code: 'network' | 'timeout', causeCode?: string): Failure {
  return {
    ok: false,
    answered: false,
    error: new TtsNetworkError(code, causeCode ? { causeInfo: { name: 'Error', code: causeCode } } : {}),
  };
}

describe('serviceRetryRule', () => {
  const rows: [string, ServiceCall, Failure, Partial<RetriesSpent>, RetryVerdict][] = [
    ['standard 500, nothing spent: 1 s', 'standard', answer('internal_error', 500), {}, { retry: { reason: 'server', waitMs: 1000 } }],
    ['standard 500, 2 spent: 4 s', 'standard', answer('internal_error', 500), { server: 2 }, { retry: { reason: 'server', waitMs: 4000 } }],
    ['standard 500, 3 spent: final', 'standard', answer('internal_error', 500), { server: 3 }, {}],
    [
      'advanced 503, 1 spent: 4 s',
      'advanced',
      answer('tts_retry_exhausted', 503),
      { server: 1 },
      { retry: { reason: 'server', waitMs: 4000 } },
    ],
    ['poll 500, nothing spent: 2 s', 'poll', answer('internal_error', 500), {}, { retry: { reason: 'server', waitMs: 2000 } }],
    [
      'standard 429 reset_in 7: wait 7 s, hold the budget',
      'standard',
      answer('rate_limited', 429, 7000),
      {},
      { rateLimitedMs: 7000, retry: { reason: 'rate', waitMs: 7000 } },
    ],
    [
      'standard 429 without a wait: at least 2 s',
      'standard',
      answer('rate_limited', 429),
      {},
      { rateLimitedMs: 2000, retry: { reason: 'rate', waitMs: 2000 } },
    ],
    [
      'advanced 429 without a wait: at least 5 s',
      'advanced',
      answer('rate_limited', 429),
      {},
      { rateLimitedMs: 5000, retry: { reason: 'rate', waitMs: 5000 } },
    ],
    ['429, 3 spent: final, the budget still held', 'advanced', answer('rate_limited', 429, 9000), { rate: 3 }, { rateLimitedMs: 9000 }],
    ['429 quota_exceeded: final, not a rate limit', 'advanced', answer('quota_exceeded', 429), {}, {}],
    ['400 token_mismatch: final', 'standard', answer('token_mismatch', 400), {}, {}],
    ['403 forbidden poll: final', 'poll', answer('forbidden', 403), {}, {}],
    ['standard timeout: retried', 'standard', broken('timeout'), {}, { retry: { reason: 'network', waitMs: 1000 } }],
    ['standard network, 2 spent: final', 'standard', broken('network', 'ECONNRESET'), { network: 2 }, {}],
    ['poll network: retried', 'poll', broken('network', 'ECONNRESET'), { network: 1 }, { retry: { reason: 'network', waitMs: 4000 } }],
    ['creation reset after sending: final (a retry could charge twice)', 'advanced', broken('network', 'ECONNRESET'), {}, {}],
    ['creation timed out waiting for headers: final', 'advanced', broken('timeout', 'HEADERS_TIMEOUT'), {}, {}],
    [
      'creation refused before connecting: retried',
      'advanced',
      broken('network', 'ECONNREFUSED'),
      {},
      { retry: { reason: 'network', waitMs: 2000 } },
    ],
    [
      'creation connect timeout: retried',
      'advanced',
      broken('timeout', 'CONNECT_TIMEOUT'),
      {},
      { retry: { reason: 'network', waitMs: 2000 } },
    ],
    [
      'a refused redirect: final',
      'standard',
      { ok: false, answered: false, error: new TtsServiceError('redirect_refused', { status: 302 }) },
      {},
      {},
    ],
  ];
  for (const [name, call, failure, spent, verdict] of rows) {
    it(`GIVEN ${name}`, () => {
      expect(serviceRetryRule(call, RETRY_DEFAULTS)(failure, { ...NONE, ...spent })).toEqual(verdict);
    });
  }
});

describe('downloadRetryRule (2 retries)', () => {
  const rule = downloadRetryRule(2);
  const failed = (status?: number): Failure => ({
    ok: false,
    answered: status !== undefined,
    error: new TtsError('download_failed', status !== undefined ? { status } : {}),
  });
  it('GIVEN a 503 THEN 1 s, then 2 s, then final', () => {
    expect(rule(failed(503), NONE)).toEqual({ retry: { reason: 'server', waitMs: 1000 } });
    expect(rule(failed(503), { ...NONE, server: 1 })).toEqual({ retry: { reason: 'server', waitMs: 2000 } });
    expect(rule(failed(503), { ...NONE, server: 1, network: 1 })).toEqual({});
  });
  it('GIVEN a 404 or a refusal THEN final at once', () => {
    expect(rule(failed(404), NONE)).toEqual({});
    expect(rule({ ok: false, answered: false, error: new TtsError('download_refused') }, NONE)).toEqual({});
  });
  it('GIVEN a network failure THEN retried', () => {
    expect(rule(broken('network'), NONE)).toEqual({ retry: { reason: 'network', waitMs: 1000 } });
  });
});

describe('withRetries', () => {
  it('GIVEN failures then a success THEN waits what the rule says, counts attempts, tells the rate limit', async () => {
    const clock = new FakeClock({ autoAdvance: true });
    const outcomes: Attempt<string>[] = [answer('rate_limited', 429, 6000), answer('internal_error', 500), { ok: true, value: 'done' }];
    const limited: number[] = [];
    const retried: number[] = [];
    const result = await withRetries(
      {
        rule: serviceRetryRule('standard', RETRY_DEFAULTS),
        clock,
        context: { endpoint: 'standard' },
        onRateLimited: (ms) => limited.push(ms),
        onRetry: (_f, _r, n) => retried.push(n),
      },
      async (n) => outcomes[n - 1]!,
    );
    expect(result).toEqual({ value: 'done', attempts: 3 });
    expect(clock.sleeps).toEqual([6000, 1000]);
    expect(limited).toEqual([6000]);
    expect(retried).toEqual([1, 2]);
  });

  it('GIVEN the rule gives up THEN the last failure is thrown as it is', async () => {
    const last = answer('token_mismatch', 400);
    const p = withRetries(
      { rule: serviceRetryRule('standard', RETRY_DEFAULTS), clock: new FakeClock({ autoAdvance: true }), context: {} },
      async () => last,
    );
    await expect(p).rejects.toBe(last.error);
  });

  it('GIVEN an abort during a wait THEN aborted, with the context and attempt, and no further attempt', async () => {
    const ac = new AbortController();
    let calls = 0;
    const p = withRetries(
      {
        rule: serviceRetryRule('poll', RETRY_DEFAULTS),
        clock: new FakeClock({ autoAdvance: true }),
        signal: ac.signal,
        context: { endpoint: 'poll', jobId: 'j1' },
      },
      async () => {
        calls++;
        queueMicrotask(() => ac.abort());
        return answer('internal_error', 500);
      },
    );
    await expect(p).rejects.toMatchObject({ code: 'aborted', context: { endpoint: 'poll', jobId: 'j1', attempts: 1 } });
    expect(calls).toBe(1);
  });
});
