// TtsClient advanced jobs (createJob, pollJob, narrate, resumeJob) over real HTTP against the
// emulator; job progress follows the shared virtual clock, so 5-minute thresholds cost no time.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TtsClient } from '../../src/tts/client.ts';
import type { CreatedJobRecord, NarrateProgress } from '../../src/tts/types.ts';
import { TtsJobFailedError, TtsJobStuckError, TtsServiceError } from '../../src/tts/errors.ts';
import { DEFAULT_TOKEN, emulatorFixture, rejection } from './helpers.ts';

let fx: Awaited<ReturnType<typeof emulatorFixture>>;
beforeAll(async () => {
  fx = await emulatorFixture({ jobs: { pendingMs: 2000, runningMs: 4000, minPollAfterMs: 1500, pollAfterMs: 3000 } });
});
afterAll(() => fx.emulator.close());

const REQ = { text: 'これは高度な読み上げのテストです。', voice: 'Luna', model: 'flash' } as const;

function creations() {
  return fx.seen('advanced').map((r) => r.body as Record<string, unknown>);
}

describe('createJob retries (spec: Advanced retry guidance)', () => {
  it('GIVEN two 500s THEN 3 attempts waiting 2 s and 4 s', async () => {
    const { client, clock, limiter } = fx.fresh();
    fx.emulator.injectFault({ target: 'advanced', count: 2, status: 500 });
    const job = await client.createJob(REQ);
    expect(job.status).toBe('pending');
    expect(job.minPollAfterMs).toBe(1500);
    expect(clock.sleeps).toEqual([2000, 4000]);
    expect(fx.seen('advanced')).toHaveLength(3);
    expect(limiter.acquires).toEqual(['advanced', 'advanced', 'advanced']);
  });

  it('GIVEN four 500s THEN internal_error after 4 attempts (2, 4, 8 s)', async () => {
    const { client, clock } = fx.fresh();
    fx.emulator.injectFault({ target: 'advanced', count: 4, status: 500 });
    const e = await rejection(client.createJob(REQ));
    expect(e.code).toBe('internal_error');
    expect(e.context.attempts).toBe(4);
    expect(clock.sleeps).toEqual([2000, 4000, 8000]);
    expect(fx.seen('advanced')).toHaveLength(4);
  });

  it('GIVEN 429 rate_limited with retry_after 7 THEN waits 7 s, blocks the limiter, then succeeds', async () => {
    const { client, clock, limiter } = fx.fresh();
    fx.emulator.injectFault({
      target: 'advanced',
      count: 1,
      status: 429,
      body: { code: 'rate_limited', error: '多すぎます', retry_after: 7 },
    });
    await client.createJob(REQ);
    expect(clock.sleeps).toEqual([7000]);
    expect(limiter.blocks).toEqual([['advanced', 7000]]);
  });

  it('GIVEN 429 with only a Retry-After header of 9 THEN waits 9 s', async () => {
    const { client, clock } = fx.fresh();
    fx.emulator.injectFault({
      target: 'advanced',
      count: 1,
      status: 429,
      body: { code: 'rate_limited', error: '多すぎます' },
      headers: { 'Retry-After': '9' },
    });
    await client.createJob(REQ);
    expect(clock.sleeps).toEqual([9000]);
  });

  it('GIVEN 429 with retry_after 2 THEN waits at least 5 s', async () => {
    const { client, clock } = fx.fresh();
    fx.emulator.injectFault({
      target: 'advanced',
      count: 1,
      status: 429,
      body: { code: 'rate_limited', error: '多すぎます', retry_after: 2 },
    });
    await client.createJob(REQ);
    expect(clock.sleeps).toEqual([5000]);
  });

  it("GIVEN the emulator's real 10/min limit THEN the 11th creation waits and succeeds", async () => {
    const { client, clock } = fx.fresh();
    for (let i = 0; i < 10; i++) await client.createJob(REQ);
    expect(clock.sleeps).toEqual([]);
    await client.createJob(REQ);
    expect(clock.sleeps).toHaveLength(1);
    expect(clock.sleeps[0]).toBeGreaterThanOrEqual(5000);
  });

  it('GIVEN quota_exceeded THEN no retry; code and available characters reported', async () => {
    const { client, clock } = fx.fresh();
    fx.emulator.setRemaining(DEFAULT_TOKEN, 3);
    const e = await rejection(client.createJob(REQ));
    expect(e.code).toBe('quota_exceeded');
    expect(e.kind).toBe('limited');
    expect(e.context.available).toBe(3);
    expect(fx.seen('advanced')).toHaveLength(1);
    expect(clock.sleeps).toEqual([]);
  });

  it('GIVEN a wrong token THEN invalid_token with one attempt', async () => {
    const { client } = fx.fresh({ token: 'e'.repeat(64) });
    const e = await rejection(client.createJob(REQ));
    expect(e.code).toBe('invalid_token');
    expect(fx.seen('advanced')).toHaveLength(1);
  });

  it('GIVEN blocked words THEN content_policy_violation with one attempt', async () => {
    const { client } = fx.fresh();
    const e = await rejection(client.createJob({ text: 'この文章には禁止ワードが入っています' }));
    expect(e.code).toBe('content_policy_violation');
    expect(fx.seen('advanced')).toHaveLength(1);
  });
});

describe('every advanced creation error is a distinct typed error', () => {
  const rows: [number, unknown, string, number][] = [
    // [status, body (undefined = emulator's default for the status), expected code, attempts]
    [400, { code: 'invalid_token', error: 'x' }, 'invalid_token', 1],
    [400, { code: 'invalid_json', error: 'x' }, 'invalid_json', 1],
    [400, { code: 'validation_error', error: 'x' }, 'validation_error', 1],
    [400, { code: 'invalid_speed', error: 'x' }, 'invalid_speed', 1],
    [400, { code: 'invalid_pitch', error: 'x' }, 'invalid_pitch', 1],
    [400, { code: 'invalid_temperature', error: 'x' }, 'invalid_temperature', 1],
    [400, { code: 'invalid_seed', error: 'x' }, 'invalid_seed', 1],
    [400, { code: 'invalid_model', error: 'x' }, 'invalid_model', 1],
    [400, { code: 'client_ip_unresolved', error: 'x' }, 'client_ip_unresolved', 1],
    [400, { code: 'text_too_long', error: 'x' }, 'text_too_long', 1],
    [400, { code: 'invalid_voice', error: 'x' }, 'invalid_voice', 1],
    [400, { code: 'content_policy_violation', error: 'x' }, 'content_policy_violation', 1],
    [400, { code: 'invalid_request', error: 'x' }, 'invalid_request', 1],
    [403, undefined, 'forbidden', 1],
    [405, null, 'method_not_allowed', 1],
    [429, { code: 'quota_exceeded', error: 'x', available: 0 }, 'quota_exceeded', 1],
    [500, { code: 'service_not_configured', error: 'x' }, 'service_not_configured', 4],
    [500, { code: 'internal_error', error: 'x' }, 'internal_error', 4],
    [503, { code: 'unsupported_location', error: 'x', error_code: 'UNSUPPORTED_LOCATION' }, 'unsupported_location', 4],
    [503, { code: 'tts_retry_exhausted', error: 'x' }, 'tts_retry_exhausted', 4],
    [400, { code: 'brand_new_code', error: 'x' }, 'unknown', 1],
  ];
  const seen = new Set<string>();
  for (const [status, body, code, attempts] of rows) {
    it(`HTTP ${status} ${code}: ${attempts} attempt(s)`, async () => {
      const { client } = fx.fresh();
      fx.emulator.injectFault({ target: 'advanced', count: attempts, status, ...(body !== undefined ? { body } : {}) });
      const e = await rejection(client.createJob(REQ));
      expect(e).toBeInstanceOf(TtsServiceError);
      expect(e.code).toBe(code);
      expect(e.context.status).toBe(status);
      expect(fx.seen('advanced')).toHaveLength(attempts);
      const key = `${e.code}/${e.context.serviceCode ?? ''}`;
      expect(seen.has(key)).toBe(false);
      seen.add(key);
      if (code === 'unknown') expect(e.context.serviceCode).toBe('brand_new_code');
    });
  }
});

describe('polling (spec: GET /api/advanced-tts/jobs/{job_id}/)', () => {
  it('GIVEN a job THEN waits min_poll_after_ms, then poll_after_ms, and never spends the creation budget', async () => {
    const { client, clock, limiter } = fx.fresh();
    const events: NarrateProgress[] = [];
    const r = await client.narrate(REQ, { onProgress: (e) => events.push(e) });
    expect(clock.sleeps).toEqual([1500, 3000, 3000]);
    expect(limiter.acquires).toEqual(['advanced']);
    expect(fx.seen('poll')).toHaveLength(3);
    expect(events.map((e) => e.state)).toEqual(['queued', 'pending', 'running', 'succeeded']);
    expect(r.url).toMatch(/\/signed\/[0-9a-f]{56}\.mp3\?expires=\d+&sig=/);
    expect(r.pk).toBeGreaterThan(0);
    const audio = await client.download(r.url);
    expect(audio.length).toBeGreaterThan(100);
  });

  it('GIVEN poll_after_ms absent THEN the next poll waits 4 s', async () => {
    const { client, clock } = fx.fresh();
    fx.emulator.injectFault({ target: 'poll', count: 1, status: 200, body: { job_id: 'x', status: 'pending' } });
    await client.narrate(REQ);
    expect(clock.sleeps).toEqual([1500, 4000, 3000]);
  });

  it('GIVEN poll 500s and a 429 THEN polls are retried (2, 4 s; at least 5 s) without the limiter', async () => {
    const { client, clock, limiter } = fx.fresh();
    fx.emulator.injectFault({ target: 'poll', count: 2, status: 500 });
    await client.narrate(REQ);
    expect(clock.sleeps.slice(0, 3)).toEqual([1500, 2000, 4000]);
    fx.emulator.injectFault({ target: 'poll', count: 1, status: 429 });
    clock.sleeps.length = 0;
    await client.narrate(REQ);
    expect(clock.sleeps.slice(0, 2)).toEqual([1500, 5000]);
    expect(limiter.acquires).toEqual(['advanced', 'advanced']);
  });

  it('GIVEN a wrong job token THEN forbidden; an unknown job THEN not_found', async () => {
    const { client } = fx.fresh();
    const job = await client.createJob(REQ);
    const e1 = await rejection(client.pollJob(job.jobId, 'not-the-token'));
    expect(e1.code).toBe('forbidden');
    expect(e1.context.status).toBe(403);
    const e2 = await rejection(client.pollJob('00000000-0000-4000-8000-000000000000', job.jobToken));
    expect(e2.code).toBe('not_found');
    expect(fx.seen('poll')).toHaveLength(2);
  });

  it('GIVEN a fixed seed THEN the result and the succeeded event carry it', async () => {
    const { client } = fx.fresh();
    const events: NarrateProgress[] = [];
    const r = await client.narrate({ ...REQ, seed: 12345 }, { onProgress: (e) => events.push(e) });
    expect(r.seed).toBe(12345);
    expect(events.at(-1)).toMatchObject({ state: 'succeeded', seed: 12345 });
    expect(creations()[0]).toMatchObject({ seed: 12345 });
  });

  it('GIVEN no seed THEN one is chosen, sent, and reported so the result can be repeated', async () => {
    const { client } = fx.fresh();
    const r = await client.narrate({ ...REQ });
    const sent = creations()[0]!.seed;
    expect(Number.isInteger(sent)).toBe(true);
    expect(r.seed).toBe(sent);
  });
});

describe('job failures (spec: Job failure codes)', () => {
  const finalCodes = ['content_policy_violation', 'unsupported_location', 'invalid_request', 'user_unavailable'];
  const transient = ['tts_retry_exhausted', 'job_timeout', 'enqueue_failed', 'internal_error'];

  it('GIVEN each failure code THEN a distinct TtsJobFailedError; final codes are not resubmitted', async () => {
    const codes = new Set<string>();
    for (const code of [...finalCodes, ...transient]) {
      const { client } = fx.fresh({ jobs: { maxResubmits: 0 } });
      fx.emulator.nextJobs({ outcome: 'fail', code });
      const e = await rejection(client.narrate(REQ));
      expect(e).toBeInstanceOf(TtsJobFailedError);
      expect(e.code).toBe(code);
      expect(e.context).toMatchObject({ endpoint: 'poll', status: 200, serviceCode: code });
      expect(e.context.jobId).toMatch(/^[0-9a-f-]{36}$/);
      codes.add(e.code);
    }
    expect(codes.size).toBe(8);
    for (const code of finalCodes) {
      const { client } = fx.fresh();
      fx.emulator.nextJobs({ outcome: 'fail', code });
      await rejection(client.narrate(REQ));
      expect(creations()).toHaveLength(1);
    }
  });

  it('GIVEN an unknown failure code THEN a failure carrying the raw code, not resubmitted', async () => {
    const { client } = fx.fresh();
    fx.emulator.nextJobs({ outcome: 'fail', code: 'cosmic_rays' });
    const e = await rejection(client.narrate(REQ));
    expect(e.code).toBe('unknown');
    expect(e.context.serviceCode).toBe('cosmic_rays');
    expect(e.message).toContain('cosmic_rays');
    expect(creations()).toHaveLength(1);
  });

  for (const code of transient) {
    it(`GIVEN a transient ${code} THEN resubmitted with a new seed, which succeeds`, async () => {
      const { client } = fx.fresh();
      fx.emulator.nextJobs(code === 'job_timeout' ? { outcome: 'timeout' } : { outcome: 'fail', code });
      const jobs: CreatedJobRecord[] = [];
      const events: NarrateProgress[] = [];
      const r = await client.narrate(REQ, { onJobCreated: (j) => void jobs.push(j), onProgress: (e) => events.push(e) });
      const bodies = creations();
      expect(bodies).toHaveLength(2);
      expect(Number.isInteger(bodies[0]!.seed)).toBe(true);
      expect(Number.isInteger(bodies[1]!.seed)).toBe(true);
      expect(bodies[1]!.seed).not.toBe(bodies[0]!.seed);
      expect(jobs).toHaveLength(2);
      expect(jobs[1]!.replaces).toBe(jobs[0]!.jobId);
      expect(jobs[1]!.seed).toBe(bodies[1]!.seed);
      expect(r.jobId).toBe(jobs[1]!.jobId);
      expect(r.seed).toBe(bodies[1]!.seed);
      expect(events.filter((e) => e.state === 'failed')).toEqual([expect.objectContaining({ code, attempt: 1 })]);
    });
  }

  it('GIVEN a transient failure with a fixed seed THEN resubmitted with that same seed', async () => {
    const { client } = fx.fresh();
    fx.emulator.nextJobs({ outcome: 'fail', code: 'tts_retry_exhausted' });
    await client.narrate({ ...REQ, seed: -77 });
    expect(creations().map((b) => b.seed)).toEqual([-77, -77]);
  });

  it('GIVEN transient failures that persist THEN the last failure after 1 + 2 resubmits, each with a different seed', async () => {
    const { client } = fx.fresh();
    fx.emulator.nextJobs({ outcome: 'fail', code: 'tts_retry_exhausted', count: 5 });
    const e = await rejection(client.narrate(REQ));
    expect(e.code).toBe('tts_retry_exhausted');
    const seeds = creations().map((b) => b.seed);
    expect(seeds).toHaveLength(3);
    expect(new Set(seeds).size).toBe(3);
  });
});

describe('stuck jobs (spec: States and transitions, Notes 1)', () => {
  it('GIVEN a job held pending past 5 minutes THEN a new job replaces it and succeeds', async () => {
    const { client, clock } = fx.fresh();
    fx.emulator.nextJobs({ outcome: 'stay_pending' });
    const jobs: CreatedJobRecord[] = [];
    const start = clock.now();
    const r = await client.narrate(REQ, { onJobCreated: (j) => void jobs.push(j) });
    expect(jobs).toHaveLength(2);
    expect(jobs[1]!.replaces).toBe(jobs[0]!.jobId);
    expect(jobs[1]!.createdAt - start).toBeGreaterThanOrEqual(5 * 60_000);
    expect(jobs[1]!.createdAt - start).toBeLessThan(5 * 60_000 + 4000);
    expect(r.jobId).toBe(jobs[1]!.jobId);
    expect(creations()).toHaveLength(2);
  });

  it('GIVEN every job stuck THEN job_stuck once the resubmits are used up', async () => {
    const { client } = fx.fresh({ jobs: { maxResubmits: 1 } });
    fx.emulator.nextJobs({ outcome: 'stay_pending', count: 2 });
    const e = await rejection(client.narrate(REQ));
    expect(e).toBeInstanceOf(TtsJobStuckError);
    expect(e.code).toBe('job_stuck');
    expect(creations()).toHaveLength(2);
  });
});

describe('resumeJob (after a restart)', () => {
  it('GIVEN a job created by an earlier process THEN polling continues to success without a new job', async () => {
    const { client } = fx.fresh();
    let stored: CreatedJobRecord | undefined;
    const ac = new AbortController();
    // The "previous process" stops right after persisting the job.
    const first = client.narrate(REQ, {
      signal: ac.signal,
      onJobCreated: (j) => {
        stored = j;
        ac.abort();
      },
    });
    expect((await rejection(first)).code).toBe('aborted');
    // A new client (a new process) against the same emulator state.
    const next = new TtsClient({ token: DEFAULT_TOKEN, baseUrl: fx.emulator.baseUrl, clock: fx.clock });
    fx.emulator.clearRequests();
    const r = await next.resumeJob({
      jobId: stored!.jobId,
      jobToken: stored!.jobToken,
      createdAt: stored!.createdAt,
      request: stored!.request,
    });
    expect(r.jobId).toBe(stored!.jobId);
    expect(creations()).toHaveLength(0);
  });

  it('GIVEN a stored job pending for over 5 minutes THEN it is replaced by a new job', async () => {
    const { client, clock } = fx.fresh();
    fx.emulator.nextJobs({ outcome: 'stay_pending' });
    const job = await client.createJob(REQ);
    await clock.advance(6 * 60_000);
    const jobs: CreatedJobRecord[] = [];
    const r = await client.resumeJob(
      { jobId: job.jobId, jobToken: job.jobToken, createdAt: clock.now() - 6 * 60_000, request: REQ },
      { onJobCreated: (j) => void jobs.push(j) },
    );
    expect(jobs).toHaveLength(1);
    expect(jobs[0]!.replaces).toBe(job.jobId);
    expect(r.jobId).toBe(jobs[0]!.jobId);
  });
});
