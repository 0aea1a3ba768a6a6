import type { Repositories } from '../db/repositories.ts';
import type { PendingUtteranceStore } from '../speech/queue-store.ts';
import { SpeechError, type NarrateFn } from '../speech/synthesize.ts';
import type { AdvancedJobs } from '../tts/jobs.ts';
import type { Logger } from '../util/log.ts';

/** Whether an utterance's audio reached someone (played, or posted). */
export interface DeliveryOutcome {
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
        guildId: o.key, userId: ctx.userId, channelId: ctx.channelId, delivery: ctx.meta ?? null, signal: o.signal,
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
        ...(o.billing ? { billing: o.billing } : {}),
      })
      .finally(() => this.#withJob.delete(id));
    // The scheduler delivers it from here on, in this process.
    await this.#jobs.markDelivered(result.jobId);
    return result;
  };

  /** After delivery (nothing to do: the job was marked delivered when it succeeded). */
  async settle(_outcomes: readonly DeliveryOutcome[]): Promise<void> {}

  /** /clear, /leave (nothing to do: the job was marked delivered when it succeeded). */
  async discard(_ids: readonly string[]): Promise<void> {}
}
