import type { Pacing } from './pacing.ts';
import type { AudienceQueue } from './audience-queue.ts';

/** An audience with no work for this long has its queue retired (more than the 5 minutes fairness looks back). */
export const RETIRE_IDLE_MS = 10 * 60_000;
/** Queues kept before the first look for idle ones; after a look, twice as many as were left. */
const FIRST_SWEEP_AT = 256;

/**
 * The scheduler's queues of audiences that went quiet: a voice channel read once, a text channel that
 * had a /say outside voice. Without this the scheduler kept one queue per channel it ever served, for
 * the life of the process. A queue idle for RETIRE_IDLE_MS is dropped when queues are next made (the
 * cost of looking spread over the queues made since the last look); what it counted is kept per guild.
 */
export class IdleQueues {
  /** When each audience last had a message queued. */
  readonly #touched = new Map<string, number>();
  /** What retired queues counted, per guild (`dropped`: auto-read messages too old when their turn came). */
  readonly #retired = new Map<string, { delivered: number; dropped: number }>();
  #sweepAt = FIRST_SWEEP_AT;

  touch(audience: string, now: number): void {
    this.#touched.set(audience, now);
  }

  /** What the retired queues of `guildId` counted. */
  retired(guildId: string): { delivered: number; dropped: number } {
    return this.#retired.get(guildId) ?? { delivered: 0, dropped: 0 };
  }

  /**
   * With `queues` grown past the mark, retires those idle for RETIRE_IDLE_MS: each is forgotten by
   * the scheduler everywhere (nothing of it is pending, planned or playing), and its counts are kept.
   */
  sweep(
    from: { queues: Map<string, AudienceQueue>; byGuild: Map<string, Set<string>>; dirty: Set<string>; pacing: Pacing },
    now: number,
  ): void {
    const { queues, byGuild } = from;
    if (queues.size < this.#sweepAt) return;
    for (const g of [...queues.values()]) {
      const since = g.idleSince(this.#touched.get(g.audience) ?? Number.NEGATIVE_INFINITY);
      if (since === undefined || now - since < RETIRE_IDLE_MS) continue;
      const kept = this.retired(g.guildId);
      this.#retired.set(g.guildId, { delivered: kept.delivered + g.stats.delivered, dropped: kept.dropped + g.stats.dropped });
      this.#touched.delete(g.audience);
      queues.delete(g.audience);
      from.dirty.delete(g.audience);
      from.pacing.forget(g.audience);
      const mine = byGuild.get(g.guildId);
      mine?.delete(g.audience);
      if (mine?.size === 0) byGuild.delete(g.guildId);
    }
    this.#sweepAt = Math.max(FIRST_SWEEP_AT, 2 * queues.size);
  }
}
