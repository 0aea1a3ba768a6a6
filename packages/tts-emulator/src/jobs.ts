import { randomBytes, randomUUID } from 'node:crypto';
import type { AudioInput } from './audio.ts';
import type { EmulatorOptions, JobOutcome } from './types.ts';

/** Spec: Job status enumeration. `succeeded` and `failed` are end states. */
type JobState =
  { status: 'pending' } | { status: 'running' } | { status: 'succeeded'; pk: number; hash: string } | { status: 'failed'; code: string };

export interface Job {
  readonly id: string;
  /** Unguessable: 32 random bytes. */
  readonly token: string;
  readonly userId: string;
  readonly accountToken: string;
  readonly createdAt: number;
  readonly outcome: { outcome: JobOutcome['outcome']; code: string };
  readonly audio: AudioInput;
  readonly chars: number;
  state: JobState;
}

/** Where the clock says a job should be; `end` = its outcome is due. */
type JobPhase = 'pending' | 'running' | 'end';

const MAX_JOBS = 50_000;

/**
 * The advanced jobs and the outcomes queued for the next ones. A job's progress is derived from
 * the injectable clock (created + pendingMs -> running, + runningMs -> end), so tests move it by
 * moving the clock instead of waiting (spec: States and transitions).
 */
export class JobStore {
  readonly #timings: EmulatorOptions['jobs'];
  readonly #jobs = new Map<string, Job>();
  #queue: { outcome: JobOutcome['outcome']; code: string; left: number }[] = [];

  constructor(timings: EmulatorOptions['jobs']) {
    this.#timings = timings;
  }

  /** Queues the outcome of the next `count` created jobs. */
  queueOutcome(o: JobOutcome): void {
    const code = o.code ?? (o.outcome === 'timeout' ? 'job_timeout' : 'internal_error');
    this.#queue.push({ outcome: o.outcome, code, left: Math.max(1, o.count ?? 1) });
  }

  /** Creates a pending job, taking the next queued outcome (default: succeed). */
  create(fields: { userId: string; accountToken: string; audio: AudioInput; chars: number; now: number }): Job {
    const next = this.#queue[0];
    let outcome: Job['outcome'] = { outcome: 'succeed', code: '' };
    if (next) {
      outcome = { outcome: next.outcome, code: next.code };
      if (--next.left === 0) this.#queue.shift();
    }
    const job: Job = {
      id: randomUUID(),
      token: randomBytes(32).toString('base64url'),
      userId: fields.userId,
      accountToken: fields.accountToken,
      createdAt: fields.now,
      outcome,
      audio: fields.audio,
      chars: fields.chars,
      state: { status: 'pending' },
    };
    this.#jobs.set(job.id, job);
    if (this.#jobs.size > MAX_JOBS) {
      const oldest = this.#jobs.keys().next().value;
      if (oldest !== undefined) this.#jobs.delete(oldest);
    }
    return job;
  }

  get(id: string): Job | undefined {
    return this.#jobs.get(id);
  }

  /** The phase the clock has reached for `job`; a `stay_pending` job never leaves pending. */
  phase(job: Job, now: number): JobPhase {
    if (job.outcome.outcome === 'stay_pending') return 'pending';
    const elapsed = now - job.createdAt;
    if (elapsed < this.#timings.pendingMs) return 'pending';
    if (elapsed < this.#timings.pendingMs + this.#timings.runningMs) return 'running';
    return 'end';
  }

  /** The one place a job changes state; end states are final. */
  setState(job: Job, state: JobState): void {
    if (job.state.status === 'succeeded' || job.state.status === 'failed') return;
    job.state = state;
  }

  clear(): void {
    this.#jobs.clear();
    this.#queue = [];
  }
}
