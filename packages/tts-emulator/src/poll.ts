/** GET /api/advanced-tts/jobs/{job_id}/ (spec: Advanced polling, States and transitions, Authentication 4). */
import { header, parseCookies, safeEqual, type Reply, type RequestContext } from './http.ts';
import type { Job } from './jobs.ts';
import { jobFailureMessage } from './messages.ts';
import { pollError } from './replies.ts';
import type { ServiceState } from './service.ts';

export async function pollJob(service: ServiceState, ctx: RequestContext, jobId: string): Promise<Reply> {
  if (ctx.method !== 'GET') return { status: 405, headers: { Allow: 'GET' } };
  const now = service.now();
  const badKey = ctx.ip ?? 'unresolved';
  const job = service.jobs.get(jobId);
  if (!job) {
    service.planned.badJobChecksPerIpMinute.record(badKey, now);
    return pollError('not_found');
  }
  // Only the X-Job-Token header or the owner's session authorise; `?token=` is ignored (spec: Authentication 4).
  const jobToken = header(ctx.req, 'x-job-token');
  const sessionid = parseCookies(header(ctx.req, 'cookie')).sessionid;
  const session = sessionid === undefined ? undefined : service.accounts.bySession(sessionid);
  let principal: string | undefined;
  if (jobToken !== undefined) {
    if (safeEqual(jobToken, job.token) && (!session || session.userId === job.userId)) principal = `token:${jobToken}`;
  } else if (session && session.userId === job.userId) {
    principal = `user:${session.userId}`;
  }
  if (principal === undefined) {
    service.planned.badJobChecksPerIpMinute.record(badKey, now);
    return pollError('forbidden');
  }
  service.planned.statusChecksPerJobMinute.record(`${principal}|${job.id}`, now);
  service.planned.statusChecksTotalMinute.record(principal, now);

  await advanceJob(service, job, now);
  const state = job.state;
  switch (state.status) {
    case 'pending':
    case 'running':
      return { status: 200, json: { job_id: job.id, status: state.status, poll_after_ms: service.options.jobs.pollAfterMs } };
    case 'succeeded': {
      const body: Record<string, unknown> = { job_id: job.id, status: 'succeeded', url: signedUrl(service, state.hash, now), pk: state.pk };
      if (job.audio.seed !== undefined) body.seed = job.audio.seed;
      return { status: 200, json: body };
    }
    case 'failed':
      // A failed job is still HTTP 200 (spec: Job poll response).
      return {
        status: 200,
        json: { job_id: job.id, status: 'failed', code: state.code, error: jobFailureMessage(state.code) },
        code: state.code,
      };
  }
}

/** Moves `job` through the transitions the clock has reached, generating its audio at the end. */
async function advanceJob(service: ServiceState, job: Job, now: number): Promise<void> {
  const phase = service.jobs.phase(job, now);
  if (phase === 'pending' || job.state.status === 'succeeded' || job.state.status === 'failed') return;
  service.jobs.setState(job, { status: 'running' });
  if (phase === 'running') return;
  if (job.outcome.outcome !== 'succeed') {
    failJob(service, job, job.outcome.code);
    return;
  }
  try {
    await service.audio.bytes(job.audio);
  } catch {
    failJob(service, job, 'internal_error');
    return;
  }
  if (job.state.status !== 'running') return; // a concurrent poll finished it first
  const hash = service.audio.register(job.audio);
  service.jobs.setState(job, { status: 'succeeded', pk: service.nextPk(), hash });
}

/** Ends a running job as failed and gives its characters back. */
function failJob(service: ServiceState, job: Job, code: string): void {
  if (job.state.status !== 'running') return;
  service.jobs.setState(job, { status: 'failed', code });
  const account = service.accounts.byToken(job.accountToken);
  if (account) service.refund(account, job.chars);
}

/** A signed URL valid for signedUrlTtlMs from this poll (spec: the signed URL expires). */
function signedUrl(service: ServiceState, hash: string, now: number): string {
  const expires = Math.floor((now + service.options.signedUrlTtlMs) / 1000);
  return `${service.publicBase}/signed/${hash}.mp3?expires=${expires}&sig=${service.sign(hash, expires)}`;
}
