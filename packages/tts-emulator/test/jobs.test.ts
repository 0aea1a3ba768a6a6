import { describe, expect, it } from 'vitest';
import { JOB_FAILURES } from '../src/index.ts';
import {
  DEFAULT_TOKEN,
  OTHER_SESSION,
  OTHER_TOKEN,
  SESSION,
  advanced,
  call,
  okAdvanced,
  poll,
  sessionHeaders,
  useEmulator,
} from './support.ts';

// Job timings from support.ts: pending 1000 ms, running 2000 ms, poll_after_ms 700.
const ctx = useEmulator();
const JAPANESE = /[\u3040-\u30ff\u4e00-\u9fff]/;

async function createJob(body: Record<string, unknown> = okAdvanced, headers: Record<string, string> = {}) {
  const res = await advanced(ctx.emu, body, Object.keys(headers).length ? { token: null, headers } : {});
  expect(res.status).toBe(202);
  return res.json as { job_id: string; job_token: string; poll_url: string };
}

describe('job state machine', () => {
  it('(creation) -> pending -> running -> succeeded, with poll_after_ms while in progress', async () => {
    const job = await createJob({ ...okAdvanced, seed: 1234 });
    const p0 = await poll(ctx.emu, job.poll_url, { jobToken: job.job_token });
    expect(p0.status).toBe(200);
    expect(p0.json).toEqual({ job_id: job.job_id, status: 'pending', poll_after_ms: 700 });

    await ctx.clock.advance(1_000);
    const p1 = await poll(ctx.emu, job.poll_url, { jobToken: job.job_token });
    expect(p1.json).toEqual({ job_id: job.job_id, status: 'running', poll_after_ms: 700 });

    await ctx.clock.advance(1_999);
    expect((await poll(ctx.emu, job.poll_url, { jobToken: job.job_token })).json.status).toBe('running');

    await ctx.clock.advance(1);
    const done = await poll(ctx.emu, job.poll_url, { jobToken: job.job_token });
    expect(done.status).toBe(200);
    expect(Object.keys(done.json).sort()).toEqual(['job_id', 'pk', 'seed', 'status', 'url']);
    expect(done.json).toMatchObject({ job_id: job.job_id, status: 'succeeded', seed: 1234 });
    expect(typeof done.json.pk).toBe('number');
    expect(done.json.url).toMatch(new RegExp(`^${ctx.emu.baseUrl}/signed/[0-9a-f]{56}\\.mp3\\?expires=\\d+&sig=[0-9a-f]{64}$`));
    const audio = await fetch(done.json.url);
    expect(audio.status).toBe(200);
    expect(audio.headers.get('content-type')).toBe('audio/mpeg');

    // End states are final.
    await ctx.clock.advance(60_000);
    const later = await poll(ctx.emu, job.poll_url, { jobToken: job.job_token });
    expect(later.json).toMatchObject({ status: 'succeeded', pk: done.json.pk });
  });

  it('a job polled only after its end reports succeeded directly; no seed when none was sent', async () => {
    const job = await createJob();
    await ctx.clock.advance(10_000);
    const done = await poll(ctx.emu, job.poll_url, { jobToken: job.job_token });
    expect(done.json.status).toBe('succeeded');
    expect('seed' in done.json).toBe(false);
    expect('poll_after_ms' in done.json).toBe(false);
  });

  it('running -> failed: HTTP 200 with code and a Japanese error, characters given back', async () => {
    ctx.emu.setRemaining(DEFAULT_TOKEN, 100);
    ctx.emu.nextJobs({ outcome: 'fail', code: 'tts_retry_exhausted' });
    const job = await createJob();
    const charged = [...okAdvanced.text].length;
    expect(ctx.emu.stats().charactersCharged).toBe(charged);
    await ctx.clock.advance(1_500);
    expect((await poll(ctx.emu, job.poll_url, { jobToken: job.job_token })).json.status).toBe('running');
    await ctx.clock.advance(1_500);
    const failed = await poll(ctx.emu, job.poll_url, { jobToken: job.job_token });
    expect(failed.status).toBe(200);
    expect(failed.json).toEqual({
      job_id: job.job_id,
      status: 'failed',
      code: 'tts_retry_exhausted',
      error: expect.stringMatching(JAPANESE),
    });
    expect(ctx.emu.stats().charactersCharged).toBe(0);
    // The refund is real: exactly the balance is available again.
    ctx.emu.setRemaining(DEFAULT_TOKEN, charged);
    expect((await advanced(ctx.emu, okAdvanced)).status).toBe(202);
  });

  it.each([...Object.keys(JOB_FAILURES), 'some_future_code'])('failure code %s is reported with HTTP 200', async (code) => {
    ctx.emu.nextJobs({ outcome: 'fail', code });
    const job = await createJob();
    await ctx.clock.advance(3_000);
    const res = await poll(ctx.emu, job.poll_url, { jobToken: job.job_token });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ status: 'failed', code });
    expect(res.json.error).toMatch(JAPANESE);
    expect(res.json.url).toBeUndefined();
  });

  it("outcome 'timeout': runs, then fails with job_timeout", async () => {
    ctx.emu.nextJobs({ outcome: 'timeout' });
    const job = await createJob();
    await ctx.clock.advance(1_000);
    expect((await poll(ctx.emu, job.poll_url, { jobToken: job.job_token })).json.status).toBe('running');
    await ctx.clock.advance(2_000);
    expect((await poll(ctx.emu, job.poll_url, { jobToken: job.job_token })).json).toMatchObject({ status: 'failed', code: 'job_timeout' });
  });

  it("outcome 'stay_pending': still pending after 5 minutes (the spec's stuck job)", async () => {
    ctx.emu.nextJobs({ outcome: 'stay_pending' });
    const job = await createJob();
    await ctx.clock.advance(5 * 60_000 + 1);
    const res = await poll(ctx.emu, job.poll_url, { jobToken: job.job_token });
    expect(res.json).toEqual({ job_id: job.job_id, status: 'pending', poll_after_ms: 700 });
  });

  it('queued outcomes apply to the next `count` jobs, then jobs succeed again', async () => {
    ctx.emu.nextJobs({ outcome: 'fail', code: 'enqueue_failed', count: 2 });
    const jobs = [await createJob(), await createJob(), await createJob()];
    await ctx.clock.advance(3_000);
    const states = [];
    for (const j of jobs) states.push((await poll(ctx.emu, j.poll_url, { jobToken: j.job_token })).json.status);
    expect(states).toEqual(['failed', 'failed', 'succeeded']);
  });
});

describe('polling: errors table and authentication', () => {
  it('403 forbidden when X-Job-Token does not match', async () => {
    const a = await createJob();
    const b = await createJob();
    const res = await poll(ctx.emu, a.poll_url, { jobToken: b.job_token });
    expect(res.status).toBe(403);
    expect(res.json).toEqual({ code: 'forbidden', error: expect.stringMatching(JAPANESE) });
  });

  it('403 forbidden without X-Job-Token; ?token= is not accepted', async () => {
    const job = await createJob();
    expect((await poll(ctx.emu, job.poll_url)).status).toBe(403);
    const viaQuery = await poll(ctx.emu, `${job.poll_url}?token=${job.job_token}`);
    expect(viaQuery.status).toBe(403);
    expect(viaQuery.json.code).toBe('forbidden');
    const withAccountToken = await call(ctx.emu, 'GET', job.poll_url, { headers: { token: DEFAULT_TOKEN } });
    expect(withAccountToken.status).toBe(403);
  });

  it("403 forbidden for another user's job in a logged-in session, even with the right X-Job-Token", async () => {
    const job = await createJob(); // owned by the DEFAULT_TOKEN user
    const other = { cookie: `sessionid=${OTHER_SESSION.sessionid}` };
    expect((await poll(ctx.emu, job.poll_url, { headers: other })).status).toBe(403);
    const res = await poll(ctx.emu, job.poll_url, { jobToken: job.job_token, headers: other });
    expect(res.status).toBe(403);
    expect(res.json.code).toBe('forbidden');
  });

  it("the owner's session may poll without X-Job-Token", async () => {
    const job = await createJob(okAdvanced, sessionHeaders(ctx.emu));
    const res = await poll(ctx.emu, job.poll_url, { headers: { cookie: `sessionid=${SESSION.sessionid}` } });
    expect(res.status).toBe(200);
    // A job created by token belongs to that account's user, so its session sees it too.
    const byToken = await createJob();
    expect((await poll(ctx.emu, byToken.poll_url, { headers: { cookie: `sessionid=${SESSION.sessionid}` } })).status).toBe(200);
    const notMine = await advanced(ctx.emu, okAdvanced, { token: OTHER_TOKEN });
    expect((await poll(ctx.emu, notMine.json.poll_url, { headers: { cookie: `sessionid=${SESSION.sessionid}` } })).status).toBe(403);
  });

  it.each([
    ['an unknown UUID', '/api/advanced-tts/jobs/00000000-0000-4000-8000-000000000000/'],
    ['a malformed id', '/api/advanced-tts/jobs/not-a-job/'],
  ])('404 not_found for %s', async (_name, path) => {
    const res = await poll(ctx.emu, path, { jobToken: 'x' });
    expect(res.status).toBe(404);
    expect(res.json).toEqual({ code: 'not_found', error: expect.stringMatching(JAPANESE) });
  });

  it.each(['POST', 'PUT', 'DELETE'])('405 with no body for %s', async (method) => {
    const job = await createJob();
    const res = await call(ctx.emu, method, job.poll_url, { headers: { 'x-job-token': job.job_token } });
    expect(res.status).toBe(405);
    expect(res.text).toBe('');
  });
});

describe('planned advanced limits are observed, not enforced', () => {
  it('counts creations per user, checks per job and per token, and bad checks per IP', async () => {
    const job = await createJob();
    await createJob();
    for (let i = 0; i < 130; i++) expect((await poll(ctx.emu, job.poll_url, { jobToken: job.job_token })).status).toBe(200);
    for (let i = 0; i < 3; i++) await poll(ctx.emu, '/api/advanced-tts/jobs/nope/', { ip: '203.0.113.5' });
    await poll(ctx.emu, job.poll_url, { ip: '203.0.113.5' });
    const { planned } = ctx.emu.stats();
    expect(planned.jobCreationsPerUserMinute).toEqual({ limit: 30, windowMs: 60_000, current: 2, max: 2 });
    expect(planned.jobCreationsPerUserHour).toMatchObject({ limit: 180, current: 2 });
    // 130 > 120 is only observed: every poll above was answered 200.
    expect(planned.statusChecksPerJobMinute).toMatchObject({ limit: 120, current: 130, max: 130 });
    expect(planned.statusChecksTotalMinute).toMatchObject({ limit: 600, current: 130 });
    expect(planned.badJobChecksPerIpMinute).toMatchObject({ limit: 30, current: 4, max: 4 });

    await ctx.clock.advance(60_000);
    const after = ctx.emu.stats().planned;
    expect(after.statusChecksPerJobMinute).toMatchObject({ current: 0, max: 130 });
    expect(after.jobCreationsPerUserHour.current).toBe(2);
  });
});
