/**
 * Advanced job lifecycle across restarts (spec: States and transitions). Every job is written to
 * SQLite the moment the service creates it (before the first poll), its state follows the polls,
 * and at start-up `resumeUnfinished` finishes what a previous process left: polls pending/running
 * jobs to their end and delivers results that were never delivered. Job tokens are secrets (spec:
 * GET /api/advanced-tts/jobs/{job_id}/ X-Job-Token): they are stored, never logged.
 */
import type { JobsRepo, StoredJob } from '../db/repositories.ts';
import { systemClock, type Clock } from '../util/clock.ts';
import type { AdvancedRequest, CreatedJobRecord, JobPoll, NarrateOptions, NarrateProgress, NarrateResult, StoredJob as ClientJob } from './client.ts';
import { isTtsError, type TtsErrorCode } from './errors.ts';

/** The parts of TtsClient this module uses (the real client fits). */
export interface JobsClient {
  narrate(req: AdvancedRequest, opts?: NarrateOptions): Promise<NarrateResult>;
  resumeJob(job: ClientJob, opts?: NarrateOptions): Promise<NarrateResult>;
  pollJob(jobId: string, jobToken: string, opts?: { signal?: AbortSignal }): Promise<JobPoll>;
  download(url: string, opts?: { signal?: AbortSignal }): Promise<Buffer>;
}

/** The subset of pino used here. */
export interface JobsLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

export interface AdvancedJobsOptions {
  client: JobsClient;
  repos: { jobs: JobsRepo };
  clock?: Clock;
  logger?: JobsLogger;
  /** Unfinished jobs older than this are given up at resume, not resubmitted (a result that late is unwanted). */
  maxResumeAgeMs?: number;
}

const SILENT: JobsLogger = { info() {}, warn() {} };

export const ADVANCED_JOBS_DEFAULTS = {
  clock: systemClock,
  logger: SILENT,
  // Advanced URLs expire after about 24 h (service-facts.md: Audio); past that, tell the author.
  maxResumeAgeMs: 24 * 60 * 60_000,
} as const satisfies Omit<Required<AdvancedJobsOptions>, 'client' | 'repos'>;

/** Who asked, and where the result goes. `delivery` is opaque JSON, handed back to `deliver`. */
export interface JobContext {
  guildId: string;
  userId: string;
  channelId: string;
  delivery: unknown;
  signal?: AbortSignal;
  onProgress?: (e: NarrateProgress) => void;
  /** When given, `run` delivers the result itself and marks the job delivered. */
  deliver?: DeliverFn;
  /**
   * An abort whose reason this accepts (a shutdown) leaves the job unfinished in the store, so the
   * next process resumes it instead of it being recorded as failed.
   */
  resumeAfterAbort?: (reason: unknown) => boolean;
}

export interface JobResult {
  mp3: Buffer;
  url: string;
  pk: number;
  seed?: number;
}

export type DeliverFn = (job: StoredJob, result: JobResult) => Promise<void>;
/** Told about a job that ended without audio, so its author can be told why (nothing silently lost). */
export type FailFn = (job: StoredJob, error: { code: string; message: string }) => Promise<void>;

export interface ResumeSummary {
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
  /** Jobs this process is already following, so a resume does not poll them twice. */
  readonly #active = new Set<string>();

  constructor(options: AdvancedJobsOptions) {
    this.#client = options.client;
    this.#jobs = options.repos.jobs;
    this.#clock = options.clock ?? ADVANCED_JOBS_DEFAULTS.clock;
    this.#logger = options.logger ?? ADVANCED_JOBS_DEFAULTS.logger;
    this.#maxResumeAgeMs = options.maxResumeAgeMs ?? ADVANCED_JOBS_DEFAULTS.maxResumeAgeMs;
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
      tracker.fail(err);
      throw err;
    } finally {
      tracker.done();
    }
    const stored = this.#succeeded(result);
    const mp3 = await this.#client.download(result.url, ctx.signal ? { signal: ctx.signal } : {});
    const out = { mp3, url: result.url, pk: result.pk, jobId: result.jobId, ...(result.seed !== undefined ? { seed: result.seed } : {}) };
    if (ctx.deliver && stored) {
      await ctx.deliver(stored, out);
      this.markDelivered(result.jobId);
    }
    return out;
  }

  /** The result reached its destination: the job is finished for good. */
  markDelivered(jobId: string): void {
    this.#jobs.markDelivered(jobId);
  }

  /**
   * At start-up: follows every job a previous process left pending or running to its end and
   * delivers every result not yet delivered. Failures are recorded with their code and reported
   * to `onFailed`. Jobs are resumed concurrently; resolves when all are settled.
   */
  async resumeUnfinished(deliver: DeliverFn, onFailed?: FailFn, opts: { signal?: AbortSignal } = {}): Promise<ResumeSummary> {
    const summary: ResumeSummary = { delivered: [], failed: [] };
    const jobs = this.#jobs.listUnfinished().filter((j) => !this.#active.has(j.jobId));
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
          if (latest.state === 'failed') await onFailed?.(latest, { code: outcome.code, message: outcome.message }).catch(() => {});
        }
      }),
    );
    return summary;
  }

  async #resumeOne(
    job: StoredJob,
    deliver: DeliverFn,
    signal: AbortSignal | undefined,
  ): Promise<{ ok: true; jobId: string } | { ok: false; jobId: string; code: string; message: string }> {
    let current = job;
    if (this.#clock.now() - job.createdAt > this.#maxResumeAgeMs) {
      this.#end(job.jobId, 'failed', 'job_stuck');
      return { ok: false, jobId: job.jobId, code: 'job_stuck', message: 'the job is too old to resume' };
    }
    try {
      if (current.state !== 'succeeded' || current.url === null) {
        if (current.request.text === null) {
          // Cannot happen for an unfinished job (text is cleared only at the end); refuse to guess.
          this.#jobs.updateState(current.jobId, 'failed', { errorCode: 'invalid_request' });
          return { ok: false, jobId: current.jobId, code: 'invalid_request', message: 'the stored job has no text to resume with' };
        }
        const tracker = this.#tracker({ ...current, ...(signal ? { signal } : {}) }, current);
        let result: NarrateResult;
        try {
          result = await this.#client.resumeJob(
            { jobId: current.jobId, jobToken: current.jobToken, createdAt: current.createdAt, request: toClientRequest(current) },
            tracker.options,
          );
        } catch (err) {
          tracker.fail(err);
          throw err;
        } finally {
          tracker.done();
        }
        current = this.#succeeded(result) ?? current;
      }
      const mp3 = await this.#downloadFresh(current, signal);
      const result: JobResult = { mp3, url: current.url!, pk: current.pk!, ...(current.seed !== null ? { seed: current.seed } : {}) };
      try {
        await deliver(current, result);
      } catch (err) {
        this.#logger.warn({ jobId: current.jobId, err: describe(err) }, 'advanced job delivery failed; will retry at next start');
        return { ok: false, jobId: current.jobId, code: 'delivery_failed', message: describe(err).message };
      }
      this.markDelivered(current.jobId);
      this.#logger.info({ jobId: current.jobId }, 'advanced job delivered after resume');
      return { ok: true, jobId: current.jobId };
    } catch (err) {
      const d = describe(err);
      this.#logger.warn({ jobId: current.jobId, code: d.code }, 'advanced job could not be resumed');
      return { ok: false, jobId: current.jobId, code: d.code, message: d.message };
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
      this.#jobs.updateState(job.jobId, 'succeeded', { url: poll.url, ...(poll.pk !== undefined ? { pk: poll.pk } : {}) });
      job.url = poll.url;
      return this.#client.download(poll.url, o);
    }
  }

  /** Records success: the url/pk/seed, and the text is dropped (no longer needed to resubmit). */
  #succeeded(result: NarrateResult): StoredJob | undefined {
    this.#jobs.updateState(result.jobId, 'succeeded', { url: result.url, pk: result.pk, ...(result.seed !== undefined ? { seed: result.seed } : {}) });
    this.#jobs.clearText(result.jobId);
    return this.#jobs.get(result.jobId);
  }

  /**
   * The callbacks that keep SQLite in step with the client: insert on creation (a resubmit marks
   * the job it replaces failed), state on progress, failure with its code.
   */
  #tracker(ctx: Pick<JobContext, 'guildId' | 'userId' | 'channelId' | 'delivery' | 'signal' | 'onProgress' | 'resumeAfterAbort'>, resumed: StoredJob | undefined) {
    let currentId = resumed?.jobId;
    if (currentId) this.#active.add(currentId);
    const failures = new Map<string, TtsErrorCode>();
    const options: NarrateOptions = {
      key: ctx.guildId,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
      onJobCreated: (job: CreatedJobRecord) => {
        if (job.replaces !== undefined) this.#end(job.replaces, 'failed', failures.get(job.replaces) ?? 'job_stuck');
        this.#jobs.insert({
          jobId: job.jobId,
          jobToken: job.jobToken,
          guildId: ctx.guildId,
          userId: ctx.userId,
          channelId: ctx.channelId,
          delivery: ctx.delivery,
          // The caller's request as given (its seed only if the caller fixed one); the seed the client
          // picked for a resubmit goes to the seed column, so a resume does not mistake it for fixed.
          request: job.request,
          ...(job.seed !== undefined ? { seed: job.seed } : {}),
          attempt: job.attempt + (resumed ? resumed.attempt - 1 : 0),
          createdAt: job.createdAt,
        });
        if (currentId) this.#active.delete(currentId);
        currentId = job.jobId;
        this.#active.add(job.jobId);
        this.#logger.info({ jobId: job.jobId, attempt: job.attempt, replaces: job.replaces }, 'advanced job persisted');
      },
      onProgress: (e: NarrateProgress) => {
        if (e.jobId !== undefined) {
          if (e.state === 'running') this.#jobs.updateState(e.jobId, 'running');
          if (e.state === 'failed' && e.code !== undefined) failures.set(e.jobId, e.code);
        }
        ctx.onProgress?.(e);
      },
    };
    return {
      options,
      fail: (err: unknown) => {
        if (currentId === undefined) return; // nothing was created: nothing to record
        if (ctx.signal?.aborted && ctx.resumeAfterAbort?.(ctx.signal.reason)) return; // the next process resumes it
        const d = describe(err);
        this.#end(currentId, 'failed', d.code);
      },
      done: () => {
        if (currentId) this.#active.delete(currentId);
      },
    };
  }

  #end(jobId: string, state: 'failed', code: string): void {
    this.#jobs.updateState(jobId, state, { errorCode: code });
    this.#jobs.clearText(jobId);
  }
}

function toClientRequest(job: StoredJob): AdvancedRequest {
  const { text, ...rest } = job.request;
  return { ...(rest as Omit<AdvancedRequest, 'text'>), text: text ?? '' };
}

/** Code and message of any thrown value, without its cause chain (which could hold headers). */
function describe(err: unknown): { code: string; message: string } {
  if (isTtsError(err)) return { code: err.code, message: err.message };
  if (err instanceof Error) return { code: 'error', message: err.message };
  return { code: 'error', message: String(err) };
}
