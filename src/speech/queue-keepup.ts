import { keepUp, MAX_SPEED_UP, SPEED_STEP, type KeepUp } from './batching.ts';
import type { AudienceQueue } from './queue-slot.ts';
import type { Freshness } from './queue-types.ts';

// Whether each voice audience is behind (bound by playback) and how far its speech is sped up: the
// state batching.ts `keepUp` decides from, kept for the scheduler (queue.ts), which asks at each
// decision.

/** How much speech an audience has waiting, in ms: what plays, is delivered next, ready, synthesising and (when `pending`) queued. */
export function backlogMs(g: AudienceQueue, now: number, pending: ((text: string) => number) | null): number {
  const current = g.current;
  let backlog = current ? Math.max(0, current.until - now) : 0;
  for (const s of g.slots) {
    const st = s.state;
    if (st.status === 'ready') backlog += st.results.reduce((ms, r) => ms + (r.audio?.durationMs ?? 0), 0);
    else if (st.status === 'synthesizing') backlog += st.estimateMs;
    else if (st.status === 'playing') backlog += st.upcoming.reduce((ms, r) => ms + (r.audio?.durationMs ?? 0), 0);
  }
  if (pending) for (const u of g.pending) backlog += pending(u.text);
  return backlog;
}

/** Per voice audience: the speech offered lately, until when it counts as behind, and its speed-up step. */
export class KeepUpTracker {
  /** [when it arrived, its expected length (ms)], oldest first. */
  readonly #offered = new Map<string, Array<[number, number]>>();
  readonly #behindUntil = new Map<string, number>();
  readonly #pace = new Map<string, number>();

  /** A message of `ms` expected speech arrived for `audience` at `at`. */
  offer(audience: string, at: number, ms: number): void {
    const offered = this.#offered.get(audience) ?? [];
    offered.push([at, ms]);
    this.#offered.set(audience, offered);
  }

  /**
   * How `audience` keeps up at `now` with `backlog` ms waiting: behind while it is bound by playback
   * (more speech was offered over the last two horizons than they hold: sustained, not one burst;
   * or its backlog cannot be heard within the horizon), and for one horizon after.
   */
  judge(audience: string, now: number, backlog: number, freshness: Freshness, maxAutoAgeMs: number): KeepUp {
    const horizon = Math.min(freshness.horizonMs, maxAutoAgeMs);
    const offered = this.#offered.get(audience) ?? [];
    while (offered.length > 0 && offered[0]![0] < now - 2 * horizon) offered.shift();
    if (offered.length === 0) this.#offered.delete(audience);
    const offeredMs = offered.reduce((ms, [, m]) => ms + m, 0);
    if (backlog > horizon || offeredMs > 2 * horizon) this.#behindUntil.set(audience, now + horizon);
    const behind = (this.#behindUntil.get(audience) ?? 0) > now;
    if (!behind) {
      this.#behindUntil.delete(audience);
      this.#pace.delete(audience);
    }
    return keepUp(backlog, behind, freshness, maxAutoAgeMs, this.#pace.get(audience));
  }

  /** When `audience` was last offered a message, if it was within the two horizons it is judged over. */
  lastOffered(audience: string): number | undefined {
    return this.#offered.get(audience)?.at(-1)?.[0];
  }

  /** The oldest had to be dropped to catch up: the next requests a step faster (to MAX_SPEED_UP). */
  stepUp(audience: string, keep: KeepUp): void {
    this.#pace.set(audience, Math.min(MAX_SPEED_UP, keep.speed + SPEED_STEP));
  }
}
