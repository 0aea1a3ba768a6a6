/**
 * Keeps SQLite in step with an advanced job the client is driving: every job is written the
 * moment the service creates it (before the first poll; a resubmit marks the job it replaces
 * failed), its state follows the progress events, and a failure is recorded with its code. A job
 * whose result nobody wants any more (/clear, /leave) is handed on to be followed to its end for
 * the ledger, never delivered. Job tokens are secrets: stored, never logged.
 */
import type { JobsRepo, StoredJob } from '../db/advanced-jobs.ts';
import type { LogSink } from '../util/log.ts';
import type { BillingHooks } from '../billing/attempts.ts';
import { countChars } from './chars.ts';
import { isTtsError, type TtsErrorCode } from './errors.ts';
import type { JobLeases } from './job-leases.ts';
import type { CreatedJobRecord, NarrateOptions, NarrateProgress } from './types.ts';

/** Who asked, and where the result goes. `delivery` is opaque JSON, handed back on delivery. */
export interface JobRequester {
  guildId: string;
  userId: string;
  channelId: string;
  delivery: unknown;
  signal?: AbortSignal;
  onProgress?: (e: NarrateProgress) => void;
  /**
   * An abort whose reason this accepts (a shutdown) leaves the job unfinished in the store, so the
   * next process resumes it instead of it being recorded as failed.
   */
  resumeAfterAbort?: (reason: unknown) => boolean;
  /** The ledger's hooks for this request (src/billing/charge-session.ts). */
  billing?: BillingHooks | undefined;
}

interface TrackerDeps {
  jobs: JobsRepo;
  leases: JobLeases;
  logger: Pick<LogSink, 'info' | 'warn'>;
  /** Records that the job ended without audio, with `code`. */
  endFailed(jobId: string, code: string): Promise<void>;
  /** Follows a job nobody wants any more to its end, for its refund; never delivers it. */
  settleDiscarded(job: StoredJob): Promise<unknown>;
}

export interface Tracker {
  /** Pass these to the client's `narrate` / `resumeJob`. */
  options: NarrateOptions;
  /** The client threw: record why (or leave the job for the next process, or discard it). */
  fail(err: unknown): Promise<void>;
  /** The client returned or threw: wait for the writes, stop following. */
  done(): Promise<void>;
}

/** The callbacks for one narration; `resumed` is the stored job when continuing one. */
export function trackJob(deps: TrackerDeps, requester: JobRequester, resumed: StoredJob | undefined): Tracker {
  const { jobs, leases, logger } = deps;
  let current: { jobId: string; done: () => void } | undefined;
  if (resumed) current = { jobId: resumed.jobId, done: () => {} }; // the resume follows it itself
  const failures = new Map<string, TtsErrorCode>();
  // Progress arrives synchronously; its writes are chained so they land in order, and the first
  // attempt of a write with none before it runs at once (writeTx tries synchronously first).
  let writes: Promise<unknown> = Promise.resolve();
  let queued = 0;
  const later = (op: () => Promise<unknown>) => {
    queued++;
    const run = () =>
      op()
        .catch((err: unknown) => logger.warn({ err: codeAndMessage(err) }, 'advanced job state write failed'))
        .finally(() => queued--);
    writes = queued === 1 ? run() : writes.then(run);
  };
  const options: NarrateOptions = {
    key: requester.guildId,
    signal: requester.signal,
    billing: requester.billing,
    onJobCreated: async (job: CreatedJobRecord) => {
      await writes;
      if (job.replaces !== undefined) await deps.endFailed(job.replaces, failures.get(job.replaces) ?? 'job_stuck');
      await jobs.insert({
        jobId: job.jobId,
        jobToken: job.jobToken,
        guildId: requester.guildId,
        userId: requester.userId,
        channelId: requester.channelId,
        delivery: requester.delivery,
        // The caller's request as given (its seed only if the caller fixed one); the seed the client
        // picked for a resubmit goes to the seed column, so a resume does not mistake it for fixed.
        request: job.request,
        ...(job.seed !== undefined ? { seed: job.seed } : {}),
        attempt: job.attempt + (resumed ? resumed.attempt - 1 : 0),
        createdAt: job.createdAt,
        lease: { owner: leases.owner, expiresAt: leases.expiry() },
        chars: countChars(job.request.text),
      });
      current?.done();
      current = { jobId: job.jobId, done: leases.follow(job.jobId).done };
      logger.info({ jobId: job.jobId, attempt: job.attempt, replaces: job.replaces }, 'advanced job persisted');
    },
    onProgress: (e: NarrateProgress) => {
      if (e.jobId !== undefined) {
        const jobId = e.jobId;
        if (e.state === 'running') later(() => jobs.updateState(jobId, 'running'));
        if (e.state === 'failed' && e.code !== undefined) failures.set(jobId, e.code);
      }
      requester.onProgress?.(e);
    },
  };
  return {
    options,
    fail: async (err: unknown) => {
      await writes;
      if (current === undefined) return; // nothing was created: nothing to record
      const { signal } = requester;
      if (signal?.aborted && requester.resumeAfterAbort?.(signal.reason)) return; // the next process resumes it
      const jobId = current.jobId;
      if (signal?.aborted && !jobs.get(jobId)?.state.match(/^(succeeded|failed|delivered)$/)) {
        // Nobody wants the result (/clear, /leave), but the job runs on at the service and is
        // refunded if it fails: follow it to its end for the ledger, never deliver it.
        await jobs.markDiscard(jobId);
        const job = jobs.get(jobId);
        if (job) void deps.settleDiscarded(job).catch(() => {});
        return;
      }
      await deps.endFailed(jobId, codeAndMessage(err).code);
    },
    done: async () => {
      await writes;
      current?.done();
    },
  };
}

/** Code and message of any thrown value, without its cause chain (which could hold headers). */
export function codeAndMessage(err: unknown): { code: string; message: string } {
  if (isTtsError(err)) return { code: err.code, message: err.message };
  if (err instanceof Error) return { code: (err as { code?: unknown }).code === 'db_busy' ? 'db_busy' : 'error', message: err.message };
  return { code: 'error', message: String(err) };
}
