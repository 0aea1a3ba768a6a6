import type { Repositories } from '../db/repositories.ts';
import type { PendingUtteranceStore } from '../speech/queue/journal.ts';
import { SpeechError } from '../speech/errors.ts';
import type { NarrateFn } from '../speech/synthesis/synthesize.ts';
import type { AdvancedJobs } from '../tts/jobs.ts';
import type { Logger } from '../util/log.ts';

/** Whether an utterance's audio reached someone (played, or posted). */
interface DeliveryOutcome {
  id: string;
  delivered: boolean;
}

/**
 * Bookkeeping of the advanced jobs behind /narrate, next to delivery. Once the service holds a job,
 * the queue's own copy of the utterance is dropped: a restart resumes the job instead of submitting
 * a second one. The job stays this process's (its lease held) until its audio was delivered, and
 * only then is it marked delivered; a job whose delivery failed is left to AdvancedJobs, which
 * delivers it again once the lease runs out or at the next start. One nobody wants any more
 * (/clear, /leave) is ended without delivery.
 */
export class NarrateJobs {
  readonly #jobs: AdvancedJobs;
  readonly #repos: Repositories;
  readonly #store: PendingUtteranceStore;
  readonly #logger: Logger;
  /** Utterances whose job exists at the service. */
  readonly #withJob = new Set<string>();
  /** Utterances whose job succeeded and whose audio is not delivered yet. */
  readonly #undelivered = new Map<string, { jobId: string; release: () => void }>();

  constructor(options: { jobs: AdvancedJobs; repos: Repositories; store: PendingUtteranceStore; logger: Logger }) {
    this.#jobs = options.jobs;
    this.#repos = options.repos;
    this.#store = options.store;
    this.#logger = options.logger;
  }

  /** The synthesizer's way to narrate: runs the job persisted (src/tts/jobs.ts). */
  readonly narrate: NarrateFn = async (request, o) => {
    const ctx = o.context ?? { utteranceId: '', userId: 'unknown', channelId: 'unknown', meta: null };
    const id = ctx.utteranceId;
    const result = await this.#jobs
      .run(request, {
        guildId: o.key,
        userId: ctx.userId,
        channelId: ctx.channelId,
        delivery: ctx.meta ?? null,
        signal: o.signal,
        onProgress: (p) => {
          if (p.jobId && !this.#withJob.has(id)) {
            this.#withJob.add(id);
            // The job is persisted now and resumes after a restart (jobs.ts); the queue's own
            // copy would submit a second one.
            this.#store.remove([id]);
          }
          o.onProgress(p);
        },
        resumeAfterAbort: (reason) => reason instanceof SpeechError && reason.code === 'closed',
        billing: o.billing,
      })
      .finally(() => this.#withJob.delete(id));
    // Ours to deliver from here on, in this process: held until delivery settles.
    this.#undelivered.set(id, { jobId: result.jobId, release: this.#jobs.hold(result.jobId) });
    return result;
  };

  /** After delivery: a job whose audio reached someone is finished for good; the others are let go, to be delivered again. */
  async settle(outcomes: readonly DeliveryOutcome[]): Promise<void> {
    for (const { id, delivered } of outcomes) {
      const job = this.#undelivered.get(id);
      if (!job) continue;
      this.#undelivered.delete(id);
      if (delivered)
        await this.#jobs
          .markDelivered(job.jobId)
          .catch((err: unknown) => this.#logger.warn({ err, jobId: job.jobId }, 'could not mark an advanced job delivered'));
      else this.#logger.warn({ jobId: job.jobId }, 'narrated audio was not delivered; the job will be delivered again');
      job.release();
    }
  }

  /** /clear, /leave: the finished jobs of dropped utterances end without delivery (never resumed). */
  async discard(ids: readonly string[]): Promise<void> {
    for (const id of ids) {
      const job = this.#undelivered.get(id);
      if (!job) continue;
      this.#undelivered.delete(id);
      // As AdvancedJobs ends a succeeded job nobody wants: failed, 'discarded'.
      await this.#repos.jobs
        .updateState(job.jobId, 'failed', { errorCode: 'discarded' })
        .catch((err: unknown) => this.#logger.warn({ err, jobId: job.jobId }, 'could not end a discarded advanced job'));
      job.release();
    }
  }
}
