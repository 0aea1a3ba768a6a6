/**
 * Advanced job lifecycle across restarts and processes (spec: States and transitions). Every job
 * is written to SQLite the moment the service creates it (before the first poll), its state
 * follows the polls, and `resumeUnfinished` finishes what a previous process left: polls
 * pending/running jobs to their end and delivers results that were never delivered.
 *
 * Exactly one process follows each job (leases: job-leases.ts); a dead owner's lease runs out and
 * `watch` takes the job over. The writes that follow a narration are job-tracker.ts.
 * Ended jobs are deleted after a retention period, job tokens and interaction tokens with them.
 * Job tokens are secrets (the service's interface: X-Job-Token on GET /api/advanced-tts/jobs/{job_id}/):
 * they are stored, never logged.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { JobsRepo, StoredJob } from '../db/advanced-jobs.ts';
import { systemClock, type Clock } from '../util/clock.ts';
import type { LogSink } from '../util/log.ts';
import type { BillingHooks } from '../billing/attempts.ts';
import { JOB_DEFAULTS } from './job-driver.ts';
import { JobLeases } from './job-leases.ts';
import { codeAndMessage, trackJob, type JobRequester, type Tracker } from './job-tracker.ts';
import type { JobPoll, NarrateOptions, NarrateResult, ResumableJob } from './types.ts';
import type { AdvancedRequest } from './validation.ts';

/** The parts of TtsClient this module uses (the real client fits). */
interface JobsClient {
  narrate(req: AdvancedRequest, opts?: NarrateOptions): Promise<NarrateResult>;
  resumeJob(job: ResumableJob, opts?: NarrateOptions): Promise<NarrateResult>;
  pollJob(jobId: string, jobToken: string, opts?: { signal?: AbortSignal }): Promise<JobPoll>;
  download(url: string, opts?: { signal?: AbortSignal }): Promise<Buffer>;
}

/** The part of a logger used here. */
type JobsLogger = Pick<LogSink, 'info' | 'warn'>;

/** Keeps the character ledger in step with jobs this process did not create (resumes, discards). */
export interface JobCharging {
  /** Hooks for following a stored job: a resubmit holds characters first, a failed job is refunded. */
  forJob(job: StoredJob): BillingHooks & { close(): Promise<void> };
  /** The job exists at the service, so it was charged: record it if its creator died before it could. */
  ensureCharged(job: StoredJob): Promise<void>;
  /** The job failed: the service gave its characters back. */
  refund(jobId: string): Promise<void>;
}

interface AdvancedJobsOptions {
  client: JobsClient;
  repos: { jobs: JobsRepo };
  clock?: Clock;
  logger?: JobsLogger;
  /** Unfinished jobs older than this are given up at resume, not resubmitted (a result that late is unwanted). */
  maxResumeAgeMs?: number;
  /** Who this process is in the lease columns; unique per process. */
  owner?: string;
  /** How long a lease lasts without renewal; it is renewed every third of it. */
  leaseMs?: number | undefined;
  /** Ended jobs (failed, delivered) are deleted this long after they ended. */
  retentionMs?: number;
  /** A delivery that failed is tried again after this long (or at the next clean restart). */
  deliveryRetryMs?: number;
  charging?: JobCharging;
}

const SILENT: JobsLogger = { info() {}, warn() {} };

const ADVANCED_JOBS_DEFAULTS = {
  clock: systemClock,
  logger: SILENT,
  // Advanced URLs expire after about 24 h (the service's documented behaviour); past that, tell the author.
  maxResumeAgeMs: 24 * 60 * 60_000,
  // Long enough to ride out a busy event loop, short enough that a crashed shard's jobs are
  // taken over within a minute.
  leaseMs: 60_000,
  // Job tokens and interaction tokens are not kept longer than needed.
  retentionMs: 7 * 24 * 60 * 60_000,
  // Discord refusing a post (channel gone, permissions) rarely heals within minutes.
  deliveryRetryMs: 60 * 60_000,
} as const satisfies Omit<Required<AdvancedJobsOptions>, 'client' | 'repos' | 'owner' | 'charging'>;

/** Who asked, where the result goes, and how to follow the narration (job-tracker.ts). */
interface JobContext extends JobRequester {
  /** When given, `run` delivers the result itself and marks the job delivered. */
  deliver?: DeliverFn;
}

export interface JobResult {
  mp3: Buffer;
  url: string;
  pk: number;
  seed?: number;
}

type DeliverFn = (job: StoredJob, result: JobResult) => Promise<void>;
/** Told about a job that ended without audio, so its author can be told why (nothing silently lost). */
type FailFn = (job: StoredJob, error: { code: string; message: string }) => Promise<void>;

interface JobResumeSummary {
  delivered: string[];
  failed: { jobId: string; code: string }[];
}

/** Persistent advanced jobs: run new ones, resume unfinished ones after a restart. */
export class AdvancedJobs {
  readonly #client: JobsClient;
  readonly #jobs: JobsRepo;
  readonly #clock: Clock;
  readonly #logger: JobsLogger;
  readonly #maxResumeAgeMs: number;
  readonly #retentionMs: number;
  readonly #deliveryRetryMs: number;
  readonly #charging: JobCharging | undefined;
  readonly #leases: JobLeases;

  constructor(options: AdvancedJobsOptions) {
    this.#client = options.client;
    this.#jobs = options.repos.jobs;
    this.#clock = options.clock ?? ADVANCED_JOBS_DEFAULTS.clock;
    this.#logger = options.logger ?? ADVANCED_JOBS_DEFAULTS.logger;
    this.#maxResumeAgeMs = options.maxResumeAgeMs ?? ADVANCED_JOBS_DEFAULTS.maxResumeAgeMs;
    this.#retentionMs = options.retentionMs ?? ADVANCED_JOBS_DEFAULTS.retentionMs;
    this.#deliveryRetryMs = options.deliveryRetryMs ?? ADVANCED_JOBS_DEFAULTS.deliveryRetryMs;
    this.#charging = options.charging;
    this.#leases = new JobLeases({
      jobs: this.#jobs,
      clock: this.#clock,
      logger: this.#logger,
      owner: options.owner ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`,
      leaseMs: options.leaseMs ?? ADVANCED_JOBS_DEFAULTS.leaseMs,
    });
  }

  /** This process in the lease columns. */
  get owner(): string {
    return this.#leases.owner;
  }

  /**
   * Narrates `request`, persisting each job the service creates; returns the audio with the job
   * left `succeeded` (call `markDelivered` once delivered), or delivered when `ctx.deliver` is given.
   */
  async run(request: AdvancedRequest, ctx: JobContext): Promise<JobResult & { jobId: string }> {
    const tracker = this.#tracker(ctx, undefined);
    let result: NarrateResult;
    try {
      result = await this.#client.narrate(request, tracker.options);
    } catch (err) {
      await tracker.fail(err);
      throw err;
    } finally {
      await tracker.done();
    }
    const stored = await this.#succeeded(result);
    const mp3 = await this.#client.download(result.url, ctx.signal ? { signal: ctx.signal } : {});
    const out = { mp3, url: result.url, pk: result.pk, jobId: result.jobId, ...(result.seed !== undefined ? { seed: result.seed } : {}) };
    if (ctx.deliver && stored) {
      await ctx.deliver(stored, out);
      await this.markDelivered(result.jobId);
    }
    return out;
  }

  /** The result reached its destination: the job is finished for good. */
  async markDelivered(jobId: string): Promise<void> {
    await this.#jobs.markDelivered(jobId);
  }

  /**
   * Keeps the lease of a job `run` returned while its caller still delivers the result, so no
   * process (this one's `watch` included) delivers it a second time; call the returned function
   * once it is delivered or given up (the lease then runs out and the job is resumed).
   */
  hold(jobId: string): () => void {
    return this.#leases.follow(jobId).done;
  }

  /**
   * Follows every unfinished job no live process holds (a previous process left it, or its owner
   * died and the lease ran out) to its end and delivers every result not yet delivered. Failures
   * are recorded with their code and reported to `onFailed`. Jobs are resumed concurrently;
   * resolves when all are settled.
   */
  async resumeUnfinished(deliver: DeliverFn, onFailed?: FailFn, opts: { signal?: AbortSignal } = {}): Promise<JobResumeSummary> {
    const summary: JobResumeSummary = { delivered: [], failed: [] };
    const candidates = this.#jobs.listUnfinished().filter((j) => !this.#leases.isFollowing(j.jobId));
    const jobs: StoredJob[] = [];
    for (const job of candidates) {
      if (await this.#leases.claim(job.jobId)) jobs.push(job);
    }
    if (jobs.length > 0) this.#logger.info({ count: jobs.length }, 'resuming unfinished advanced jobs');
    await Promise.all(
      jobs.map(async (job) => {
        const outcome = await this.#resumeOne(job, deliver, opts.signal);
        if (outcome.ok) summary.delivered.push(outcome.jobId);
        else {
          summary.failed.push({ jobId: outcome.jobId, code: outcome.code });
          const latest = this.#jobs.get(outcome.jobId) ?? job;
          // A delivery that failed stays `succeeded` and is retried at the next start; only jobs
          // that ended without audio are reported as failed.
          if (latest.state === 'failed' && !latest.discard)
            await onFailed?.(latest, { code: outcome.code, message: outcome.message }).catch(() => {});
        }
      }),
    );
    return summary;
  }

  /**
   * Looks for jobs whose owner died (lease expired) every `intervalMs` and resumes them like a
   * restart would. Returns a function that stops watching.
   */
  watch(deliver: DeliverFn, onFailed?: FailFn, intervalMs = this.#leases.leaseMs / 2): () => void {
    let running = false;
    const timer = setInterval(() => {
      if (running) return;
      running = true;
      this.resumeUnfinished(deliver, onFailed)
        .then((s) => {
          if (s.delivered.length || s.failed.length)
            this.#logger.info({ delivered: s.delivered.length, failed: s.failed.length }, 'took over advanced jobs of a stopped process');
        })
        .catch((err: unknown) => this.#logger.warn({ err: codeAndMessage(err) }, 'taking over advanced jobs failed'))
        .finally(() => (running = false));
    }, intervalMs);
    timer.unref();
    return () => clearInterval(timer);
  }

  /** Gives back the leases of every job this process holds, so the next process takes them at once. */
  async releaseLeases(): Promise<number> {
    return this.#leases.releaseAll();
  }

  /** Deletes jobs that ended more than the retention period ago (tokens included); resolves with how many. */
  async prune(): Promise<number> {
    const n = await this.#jobs.deleteEndedBefore(this.#clock.now() - this.#retentionMs);
    if (n > 0) this.#logger.info({ count: n }, 'pruned ended advanced jobs');
    return n;
  }

  async #resumeOne(
    job: StoredJob,
    deliver: DeliverFn,
    signal: AbortSignal | undefined,
  ): Promise<{ ok: true; jobId: string } | { ok: false; jobId: string; code: string; message: string }> {
    let current = job;
    const follow = this.#leases.follow(job.jobId);
    try {
      await this.#charging?.ensureCharged(current);
      if (current.discard) return await this.#settleDiscarded(current, signal);
      if (this.#clock.now() - job.createdAt > this.#maxResumeAgeMs) {
        await this.#endFailed(job.jobId, 'job_stuck');
        return { ok: false, jobId: job.jobId, code: 'job_stuck', message: 'the job is too old to resume' };
      }
      const jobSignal = signal ? AbortSignal.any([signal, follow.signal]) : follow.signal;
      if (current.state !== 'succeeded' || current.url === null) {
        if (current.request.text === null) {
          // Cannot happen for an unfinished job (text is cleared only at the end); refuse to guess.
          await this.#jobs.updateState(current.jobId, 'failed', { errorCode: 'invalid_request' });
          return { ok: false, jobId: current.jobId, code: 'invalid_request', message: 'the stored job has no text to resume with' };
        }
        const billing = this.#charging?.forJob(current);
        const tracker = this.#tracker({ ...current, signal: jobSignal, billing }, current);
        let result: NarrateResult;
        try {
          result = await this.#client.resumeJob(
            { jobId: current.jobId, jobToken: current.jobToken, createdAt: current.createdAt, request: toClientRequest(current) },
            tracker.options,
          );
        } catch (err) {
          await tracker.fail(err);
          throw err;
        } finally {
          await tracker.done();
          await billing?.close();
        }
        current = (await this.#succeeded(result)) ?? current;
      }
      const mp3 = await this.#downloadFresh(current, jobSignal);
      const result: JobResult = { mp3, url: current.url!, pk: current.pk!, ...(current.seed !== null ? { seed: current.seed } : {}) };
      // Another process took the job over while we were slow: it delivers, not us.
      if (!(await this.#leases.renew(current.jobId))) {
        return { ok: false, jobId: current.jobId, code: 'lease_lost', message: 'another process took the job over' };
      }
      try {
        await deliver(current, result);
      } catch (err) {
        // Held (not followed) until the retry time, so no process retries it in a tight loop.
        await this.#leases.renew(current.jobId, this.#clock.now() + this.#deliveryRetryMs).catch(() => false);
        this.#logger.warn(
          { jobId: current.jobId, err: codeAndMessage(err) },
          'advanced job delivery failed; will retry later or at the next start',
        );
        return { ok: false, jobId: current.jobId, code: 'delivery_failed', message: codeAndMessage(err).message };
      }
      await this.markDelivered(current.jobId);
      this.#logger.info({ jobId: current.jobId }, 'advanced job delivered after resume');
      return { ok: true, jobId: current.jobId };
    } catch (err) {
      const d = codeAndMessage(err);
      this.#logger.warn({ jobId: current.jobId, code: d.code }, 'advanced job could not be resumed');
      return { ok: false, jobId: current.jobId, code: d.code, message: d.message };
    } finally {
      follow.done();
    }
  }

  /**
   * A job nobody wants any more: polled to its end without resubmitting or delivering, so a
   * failed job's refund reaches the ledger (docs/operating.md, "Characters are money").
   */
  async #settleDiscarded(
    job: StoredJob,
    signal: AbortSignal | undefined,
  ): Promise<{ ok: false; jobId: string; code: string; message: string }> {
    const ended = (code: string) => ({ ok: false as const, jobId: job.jobId, code, message: 'the result was not wanted any more' });
    const follow = this.#leases.follow(job.jobId);
    const s = signal ? AbortSignal.any([signal, follow.signal]) : follow.signal;
    try {
      for (;;) {
        if (this.#clock.now() - job.createdAt > this.#maxResumeAgeMs) {
          await this.#endFailed(job.jobId, 'discarded');
          return ended('discarded');
        }
        const p = await this.#client.pollJob(job.jobId, job.jobToken, { signal: s });
        if (p.status === 'failed') {
          await this.#charging?.refund(job.jobId);
          await this.#endFailed(job.jobId, 'discarded');
          return ended('discarded');
        }
        if (p.status === 'succeeded') {
          await this.#endFailed(job.jobId, 'discarded');
          return ended('discarded');
        }
        await this.#clock.sleep(Math.max(JOB_DEFAULTS.minPollMs, p.pollAfterMs ?? JOB_DEFAULTS.defaultPollMs), s);
      }
    } finally {
      follow.done();
    }
  }

  /** Downloads a succeeded job's audio; a signed URL expires (~24 h), so on failure ask the service for a fresh one. */
  async #downloadFresh(job: StoredJob, signal: AbortSignal | undefined): Promise<Buffer> {
    const o = signal ? { signal } : {};
    try {
      return await this.#client.download(job.url!, o);
    } catch (err) {
      const poll = await this.#client.pollJob(job.jobId, job.jobToken, o).catch(() => undefined);
      if (poll?.status !== 'succeeded' || !poll.url || poll.url === job.url) throw err;
      await this.#jobs.updateState(job.jobId, 'succeeded', { url: poll.url, pk: poll.pk });
      job.url = poll.url;
      return this.#client.download(poll.url, o);
    }
  }

  /** Records success: the url/pk/seed, and the text is dropped (no longer needed to resubmit). */
  async #succeeded(result: NarrateResult): Promise<StoredJob | undefined> {
    await this.#jobs.updateState(result.jobId, 'succeeded', {
      url: result.url,
      pk: result.pk,
      ...(result.seed !== undefined ? { seed: result.seed } : {}),
    });
    await this.#jobs.clearText(result.jobId);
    return this.#jobs.get(result.jobId);
  }

  #tracker(requester: JobRequester, resumed: StoredJob | undefined): Tracker {
    return trackJob(
      {
        jobs: this.#jobs,
        leases: this.#leases,
        logger: this.#logger,
        endFailed: (jobId, code) => this.#endFailed(jobId, code),
        settleDiscarded: (job) => this.#settleDiscarded(job, undefined),
      },
      requester,
      resumed,
    );
  }

  /** The job ended without audio: its code is kept, its text (no longer needed to resubmit) is not. */
  async #endFailed(jobId: string, code: string): Promise<void> {
    await this.#jobs.updateState(jobId, 'failed', { errorCode: code });
    await this.#jobs.clearText(jobId);
  }
}

function toClientRequest(job: StoredJob): AdvancedRequest {
  const { text, ...rest } = job.request;
  return { ...(rest as Omit<AdvancedRequest, 'text'>), text: text ?? '' };
}
