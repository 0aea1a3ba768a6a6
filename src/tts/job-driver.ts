/**
 * The advanced job state machine (spec: States and transitions, Advanced retry guidance, Notes 1):
 * create a job (unless resuming one), poll it to its end, and submit a new one after a transient
 * failure or when it is stuck, with a fresh seed unless the caller fixed one. Each HTTP call goes
 * through the client, so creation and polling keep their own retry rules (retry.ts).
 */
import { randomInt } from 'node:crypto';
import type { Clock } from '../util/clock.ts';
import type { LogSink } from '../util/log.ts';
import { TRANSIENT_JOB_CODES, TtsJobFailedError, TtsJobStuckError, type TtsErrorContext } from './errors.ts';
import { pause } from './retry.ts';
import type {
  CallOptions,
  CreatedJob,
  CreatedJobRecord,
  JobPoll,
  JobStatus,
  NarrateOptions,
  NarrateProgress,
  NarrateResult,
  ResumableJob,
} from './types.ts';
import { LIMITS, type AdvancedRequest } from './validation.ts';

/** Advanced job handling (spec: States and transitions, GET /api/advanced-tts/jobs/{job_id}/). */
export interface JobPolicy {
  /** Wait between polls when `poll_after_ms` is absent (spec: 3 to 5 s). */
  defaultPollMs: number;
  /** Floor under the service's `poll_after_ms`, so a bad value cannot make us hammer the service. */
  minPollMs: number;
  /** A job still pending after this long may be stuck; submit a new one (spec: Notes 1). */
  stuckPendingMs: number;
  /** A job not finished after this long (any state) is given up on like a stuck one. */
  maxJobAgeMs: number;
  /** New jobs submitted after a transient failure or a stuck job, at most. */
  maxResubmits: number;
}

export const JOB_DEFAULTS = {
  defaultPollMs: 4000,
  minPollMs: 250,
  stuckPendingMs: 5 * 60_000,
  maxJobAgeMs: 15 * 60_000,
  maxResubmits: 2,
} as const satisfies JobPolicy;

/** What the driver needs from the client. */
export interface JobDriverDeps {
  clock: Clock;
  policy: JobPolicy;
  logger: Pick<LogSink, 'warn'>;
  /** Creates one job (already validated), under the creation retry rules. */
  create(request: AdvancedRequest, opts: CallOptions): Promise<CreatedJob>;
  /** Polls a job once, under the polling retry rules. */
  poll(jobId: string, jobToken: string, opts: CallOptions): Promise<JobPoll>;
  /** Service text with every secret (this job's token included) removed. */
  scrub(text: string, jobToken: string): string;
}

type Followed =
  | { kind: 'succeeded'; result: NarrateResult }
  | { kind: 'failed'; error: TtsJobFailedError; seed?: number }
  | { kind: 'stuck'; seed?: number };

/** Creates (unless resuming `existing`) and follows jobs until one succeeds or a final answer comes. */
export async function driveJob(
  deps: JobDriverDeps,
  request: AdvancedRequest,
  existing: ResumableJob | undefined,
  opts: NarrateOptions,
): Promise<NarrateResult> {
  const { clock, policy, logger } = deps;
  const seedFixed = request.seed !== undefined;
  const usedSeeds = new Set<number>();
  let job: ResumableJob | undefined = existing;
  let status: JobStatus | undefined;
  let firstWaitMs = 0;
  let replaces: string | undefined;
  for (let attempt = 1; ; attempt++) {
    if (!job) {
      // Spec: "on a failed job check code and retry with a different seed" - unless the caller
      // fixed the seed (it wants that timbre), then the same seed is sent again. A seed is always
      // sent, so the result can say which one was used and a good result can be repeated.
      const seed = seedFixed ? request.seed : freshSeed(usedSeeds);
      opts.onProgress?.({ state: 'queued', attempt, seed });
      const created = await deps.create(seed === undefined ? request : { ...request, seed }, opts);
      if (seed !== undefined) usedSeeds.add(seed);
      job = { jobId: created.jobId, jobToken: created.jobToken, createdAt: clock.now(), request };
      const record: CreatedJobRecord = { ...job, attempt };
      if (seed !== undefined) record.seed = seed;
      if (replaces !== undefined) record.replaces = replaces;
      await opts.onJobCreated?.(record);
      status = created.status;
      firstWaitMs = created.minPollAfterMs;
    }
    const outcome = await follow(deps, job, status, firstWaitMs, attempt, opts);
    if (outcome.kind === 'succeeded') return outcome.result;
    if (outcome.seed !== undefined) usedSeeds.add(outcome.seed);
    const canResubmit = attempt <= policy.maxResubmits;
    if (outcome.kind === 'failed') {
      if (!TRANSIENT_JOB_CODES.includes(outcome.error.code) || !canResubmit) throw outcome.error;
      logger.warn({ jobId: job.jobId, code: outcome.error.code, attempt }, 'tts job failed, resubmitting');
    } else {
      if (!canResubmit) throw new TtsJobStuckError({ endpoint: 'poll', jobId: job.jobId, attempts: attempt });
      logger.warn({ jobId: job.jobId, attempt }, 'tts job stuck, submitting a new one');
    }
    replaces = job.jobId;
    job = undefined;
    status = undefined;
  }
}

/** Polls one job until it ends or is judged stuck (spec: polling timing, Notes 1). */
async function follow(
  deps: JobDriverDeps,
  job: ResumableJob,
  initial: JobStatus | undefined,
  firstWaitMs: number,
  attempt: number,
  opts: NarrateOptions,
): Promise<Followed> {
  const { clock, policy } = deps;
  const context: TtsErrorContext = { endpoint: 'poll', jobId: job.jobId, attempts: attempt };
  let last = initial;
  let seed: number | undefined;
  if (last !== undefined) opts.onProgress?.({ state: last === 'running' ? 'running' : 'pending', jobId: job.jobId, attempt });
  let waitMs = firstWaitMs;
  for (;;) {
    const age = clock.now() - job.createdAt;
    if ((last === 'pending' && age >= policy.stuckPendingMs) || age >= policy.maxJobAgeMs) {
      return seed === undefined ? { kind: 'stuck' } : { kind: 'stuck', seed };
    }
    if (waitMs > 0) await pause(clock, waitMs, opts.signal, context);
    const p = await deps.poll(job.jobId, job.jobToken, opts);
    if (p.seed !== undefined) seed = p.seed;
    if (p.status !== last) {
      const e: NarrateProgress = { state: p.status, jobId: job.jobId, attempt };
      if (p.seed !== undefined) e.seed = p.seed;
      if (p.code !== undefined) e.code = p.code;
      opts.onProgress?.(e);
      last = p.status;
    }
    if (p.status === 'succeeded') {
      const result: NarrateResult = { url: p.url!, pk: p.pk!, jobId: job.jobId };
      if (p.seed !== undefined) result.seed = p.seed;
      return { kind: 'succeeded', result };
    }
    if (p.status === 'failed') {
      // The service gives a failed job's characters back (docs/operating.md, "Characters are money").
      opts.billing?.onEvent?.({ kind: 'job_refunded', jobId: job.jobId });
      const error = failedJobError(deps, job, p, context);
      return seed === undefined ? { kind: 'failed', error } : { kind: 'failed', error, seed };
    }
    waitMs = Math.max(policy.minPollMs, p.pollAfterMs ?? policy.defaultPollMs);
  }
}

/** The error for a job that ended `failed`, carrying the service's code and text, scrubbed. */
function failedJobError(deps: JobDriverDeps, job: ResumableJob, p: JobPoll, context: TtsErrorContext): TtsJobFailedError {
  const ctx: TtsErrorContext = { ...context, status: 200 };
  if (p.serviceCode !== undefined) ctx.serviceCode = deps.scrub(p.serviceCode, job.jobToken);
  if (p.error !== undefined) ctx.serviceMessage = deps.scrub(p.error, job.jobToken);
  const code = p.code ?? 'unknown';
  if (code !== 'unknown') return new TtsJobFailedError(code, ctx);
  return new TtsJobFailedError(code, { ...ctx, message: `The job failed with an unknown code: ${ctx.serviceCode ?? '(none)'}` });
}

function freshSeed(used: ReadonlySet<number>): number {
  for (;;) {
    const s = randomInt(LIMITS.int32.min, LIMITS.int32.max);
    if (!used.has(s)) return s;
  }
}
