/**
 * The leases on advanced jobs. Several processes may share the database (shards, or
 * a restart overlapping the old process); the one following a job holds a lease on it (owner,
 * expiry) so exactly one process resumes each. A lease is renewed every third of its length
 * while this process follows the job; a dead owner's lease runs out and another process takes
 * the job over, and a job whose lease another process took is stopped here.
 */
import type { JobsRepo } from '../db/advanced-jobs.ts';
import type { Clock } from '../util/clock.ts';
import type { LogSink } from '../util/log.ts';

interface JobLeasesOptions {
  jobs: JobsRepo;
  clock: Clock;
  logger: Pick<LogSink, 'warn'>;
  /** Who this process is in the lease columns; unique per process. */
  owner: string;
  /** How long a lease lasts without renewal. */
  leaseMs: number;
}

/** What following one job gives: a signal that fires if the lease is lost, and the end of following. */
interface Following {
  signal: AbortSignal;
  done: () => void;
}

/** The leases this process holds, and the renewal that keeps them. */
export class JobLeases {
  readonly owner: string;
  readonly leaseMs: number;
  readonly #jobs: JobsRepo;
  readonly #clock: Clock;
  readonly #logger: Pick<LogSink, 'warn'>;
  /** Jobs this process is following, with what stops them when their lease is lost. */
  readonly #active = new Map<string, AbortController>();
  #renewTimer: NodeJS.Timeout | undefined;

  constructor(options: JobLeasesOptions) {
    this.owner = options.owner;
    this.leaseMs = options.leaseMs;
    this.#jobs = options.jobs;
    this.#clock = options.clock;
    this.#logger = options.logger;
  }

  /** When a lease taken or renewed now runs out. */
  expiry(): number {
    return this.#clock.now() + this.leaseMs;
  }

  /** Is this process following `jobId` right now? */
  isFollowing(jobId: string): boolean {
    return this.#active.has(jobId);
  }

  /** Takes the job if no live process holds it; exactly one process wins (one statement reads and writes). */
  claim(jobId: string): Promise<boolean> {
    return this.#jobs.claim(jobId, this.owner, this.expiry());
  }

  /** Extends this process's lease to `until`; false when another process holds the job now. */
  renew(jobId: string, until = this.expiry()): Promise<boolean> {
    return this.#jobs.renew(jobId, this.owner, until);
  }

  /** Gives back every lease this process holds, so the next process takes those jobs at once. */
  releaseAll(): Promise<number> {
    return this.#jobs.releaseAll(this.owner);
  }

  /**
   * Marks `jobId` followed by this process and keeps its lease renewed; the returned signal
   * aborts if the lease is lost (another process took the job over).
   */
  follow(jobId: string): Following {
    // The latest follower of a job owns its entry; an earlier one's done() leaves it alone.
    const controller = new AbortController();
    this.#active.set(jobId, controller);
    this.#ensureRenewing();
    return {
      signal: controller.signal,
      done: () => {
        if (this.#active.get(jobId) === controller) this.#active.delete(jobId);
      },
    };
  }

  #ensureRenewing(): void {
    if (this.#renewTimer) return;
    this.#renewTimer = setInterval(() => {
      if (this.#active.size === 0) {
        clearInterval(this.#renewTimer);
        this.#renewTimer = undefined;
        return;
      }
      for (const [jobId, controller] of this.#active) {
        this.renew(jobId)
          .then((held) => {
            const job = held ? undefined : this.#jobs.get(jobId);
            // Lost only if another process holds it now (an ended job has nothing left to lose).
            if (job && job.leaseOwner !== null && job.leaseOwner !== this.owner) {
              this.#logger.warn({ jobId }, 'advanced job lease lost; another process follows it now');
              controller.abort(new Error('lease lost'));
            }
          })
          .catch(() => {});
      }
    }, this.leaseMs / 3);
    this.#renewTimer.unref();
  }
}
