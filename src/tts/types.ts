/**
 * What a caller of the TTS client passes and gets back: call options, results, and the advanced
 * job's records and progress events. Types only; the client (client.ts) and the job driver
 * (job-driver.ts) implement them.
 */
import type { BillingHooks } from '../billing/attempts.ts';
import type { TtsErrorCode } from './errors.ts';
import type { RateGrant } from './limiter/limiter.ts';
import type { AdvancedRequest } from './validation.ts';

export interface CallOptions {
  /** Who the request is for (a guild id); a fair limiter rotates between keys. */
  key?: string | undefined;
  signal?: AbortSignal | undefined;
  /** Told what each attempt may have cost (docs/operating.md, "Characters are money"). */
  billing?: BillingHooks | undefined;
  /** A rate grant already in hand (the scheduler reserved it): the first attempt spends it. */
  grant?: RateGrant | undefined;
}

interface Substitution {
  requested: number;
  used: number;
}

export interface StandardResult {
  url: string;
  pk: number;
  text: string;
  /** Out-of-range speed/pitch the service replaced by its default (spec: Standard speech request). */
  substituted: { speed?: Substitution; pitch?: Substitution };
}

export type JobStatus = 'pending' | 'running' | 'succeeded' | 'failed';

export interface CreatedJob {
  jobId: string;
  jobToken: string;
  status: JobStatus;
  minPollAfterMs: number;
}

export interface JobPoll {
  jobId: string;
  status: JobStatus;
  pollAfterMs?: number;
  url?: string;
  pk?: number;
  seed?: number;
  /** Failure code mapped to ours (`unknown` when the service's code is new to us). */
  code?: TtsErrorCode;
  /** The service's raw failure code. */
  serviceCode?: string;
  error?: string;
}

/** What the client needs to follow a job it did not create in this run (after a restart). */
export interface ResumableJob {
  jobId: string;
  jobToken: string;
  /** Clock time of creation (ms); the stuck-job rule is measured from it. */
  createdAt: number;
  /** The caller's request (its `seed` set only if the caller fixed it). */
  request: AdvancedRequest;
}

/** A job the service just created, as handed to `onJobCreated` for the caller to persist. */
export interface CreatedJobRecord extends ResumableJob {
  /** Which submission this is (1 = first). */
  attempt: number;
  /** The seed sent for this job (the caller's, or a fresh one on a resubmit). */
  seed?: number;
  /** The job this one replaces (after a transient failure or a stuck job). */
  replaces?: string;
}

export interface NarrateProgress {
  state: 'queued' | 'pending' | 'running' | 'succeeded' | 'failed';
  jobId?: string;
  seed?: number | undefined;
  /** Submission number, 1-based. */
  attempt: number;
  /** Failure code, with state `failed`. */
  code?: TtsErrorCode;
}

export interface NarrateOptions extends CallOptions {
  onProgress?: (e: NarrateProgress) => void;
  /** Called (and awaited) as soon as a job exists, before any poll: persist it here. */
  onJobCreated?: (job: CreatedJobRecord) => void | Promise<void>;
}

export interface NarrateResult {
  url: string;
  pk: number;
  seed?: number;
  jobId: string;
}
