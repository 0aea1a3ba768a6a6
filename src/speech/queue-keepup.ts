import { keepUp, MAX_SPEED_UP, SPEED_STEP, type KeepUp } from './batching.ts';
import type { AudienceQueue } from './queue-slot.ts';
import type { SchedulerPolicy } from './policy.ts';
import type { Freshness, Utterance } from './queue-types.ts';

// Whether each voice audience is behind (bound by playback) and how far its speech is sped up: the
// state batching.ts `keepUp` decides from, kept for the scheduler (queue.ts), which asks at each
// decision.

/** How much speech an audience has waiting, in ms: what plays, is delivered next, ready, synthesising and (when `pending`) queued, not set aside. */
export function backlogMs(g: AudienceQueue, now: number, pending: ((u: Utterance) => number) | null): number {
  const current = g.current;
  let backlog = current ? Math.max(0, current.until - now) : 0;
  for (const s of g.slots) {
    const st = s.state;
    if (st.status === 'ready') backlog += st.results.reduce((ms, r) => ms + (r.audio?.durationMs ?? 0), 0);
    else if (st.status === 'synthesizing') backlog += st.estimateMs;
    else if (st.status === 'playing') backlog += st.upcoming.reduce((ms, r) => ms + (r.audio?.durationMs ?? 0), 0);
  }
  // Lines set aside to catch up are read only in a lull: not what keeps the channel behind.
  if (pending) for (const u of g.waiting) backlog += pending(u);
  return backlog;
}

/**
 * The cut a batch is formed under, from keeping up's (`keep`, which its clips are held to when they
 * play): requests scarce and the channel still talking, a grant is not spent on what would be heard
 * long after the conversation moved on, so at most `scarceCutMs` (policy.ts `scarceCutHorizons`
 * horizons; Infinity otherwise); a channel that has not written since has not moved on, its last
 * lines are still what was said last and keep the hard limit. With the margin a batch's later
 * messages keep inside it for a slow request (policy.ts `payMarginMs`): a waiting line is not
 * dropped for the margin, only a batch is not made longer into it.
 */
export function formingCut(keep: KeepUp, scarceCutMs: number, margin: Pick<SchedulerPolicy, 'payMarginMs' | 'payMarginShare'>): KeepUp {
  const cutMs = Math.min(keep.cutMs, scarceCutMs);
  return { ...keep, cutMs, payMarginMs: Math.min(margin.payMarginMs, margin.payMarginShare * cutMs) };
}

/** Per voice audience: the speech offered lately, until when it counts as behind, and its speed-up step. */
export class KeepUpTracker {
  /** [when it arrived, its expected length (ms)], oldest first. */
  readonly #offered = new Map<string, Array<[number, number]>>();
  readonly #behindUntil = new Map<string, number>();
  readonly #pace = new Map<string, number>();

  /** Forgets `audience` (its queue was retired). */
  forget(audience: string): void {
    this.#offered.delete(audience);
    this.#behindUntil.delete(audience);
    this.#pace.delete(audience);
  }

  /** A message of `ms` expected speech arrived for `audience` at `at`. */
  offer(audience: string, at: number, ms: number): void {
    const offered = this.#offered.get(audience) ?? [];
    offered.push([at, ms]);
    this.#offered.set(audience, offered);
  }

  /**
   * How `audience` keeps up at `now` with `backlog` ms waiting: behind while it is bound by playback
   * (more speech was offered over the last two horizons than they hold: sustained, not one burst;
   * or, while requests are to be had, its backlog cannot be heard within the horizon), and for one
   * horizon after. While requests are `scarce` a long backlog is audio paid for by a grant that
   * came: it does not make the audience behind (the next grant is far off anyway).
   */
  judge(
    audience: string,
    now: number,
    backlog: number,
    freshness: Freshness,
    maxAutoAgeMs: number,
    o: { scarce: boolean; catchUpShare: number } = { scarce: false, catchUpShare: 0.25 },
  ): KeepUp {
    const { scarce, catchUpShare } = o;
    const horizon = Math.min(freshness.horizonMs, maxAutoAgeMs);
    const offered = this.#offered.get(audience) ?? [];
    while (offered.length > 0 && offered[0]![0] < now - 2 * horizon) offered.shift();
    if (offered.length === 0) this.#offered.delete(audience);
    const offeredMs = offered.reduce((ms, [, m]) => ms + m, 0);
    if ((!scarce && backlog > horizon) || offeredMs > 2 * horizon) this.#behindUntil.set(audience, now + horizon);
    const behind = (this.#behindUntil.get(audience) ?? 0) > now;
    if (!behind) {
      this.#behindUntil.delete(audience);
      this.#pace.delete(audience);
    }
    // Requests scarce, the wait for a grant, not the playback ahead, decides when the newest is
    // heard: dropping older lines would not bring it sooner, only lose them. Only what can no
    // longer be heard within the horizon goes.
    return keepUp(backlog, behind, freshness, maxAutoAgeMs, this.#pace.get(audience), scarce ? 1 : catchUpShare);
  }

  /** Whether `audience` was offered a message within `horizonMs` of `now`: its conversation goes on. */
  talking(audience: string, now: number, horizonMs: number): boolean {
    const last = this.#offered.get(audience)?.at(-1)?.[0];
    return last !== undefined && now - last <= horizonMs;
  }

  /** The oldest had to be dropped to catch up: the next requests a step faster (to MAX_SPEED_UP). */
  stepUp(audience: string, keep: KeepUp): void {
    this.#pace.set(audience, Math.min(MAX_SPEED_UP, keep.speed + SPEED_STEP));
  }
}

/** Audiences remembered as written to before the ones not written to lately are forgotten. */
const MAX_TRACKED_AUDIENCES = 1_024;

/** When each audience last had an auto message (the scheduler's `#scarce`: how many talk at once). */
export class WrittenLately {
  /** Insertion order is recency order, the oldest first. */
  readonly #at = new Map<string, number>();
  readonly #activeMs: number;

  constructor(activeMs: number) {
    this.#activeMs = activeMs;
  }

  /** `audience` had an auto message at `at`; what is no longer recent goes once the map grows large. */
  wrote(audience: string, at: number): void {
    this.#at.delete(audience);
    this.#at.set(audience, at);
    if (this.#at.size > MAX_TRACKED_AUDIENCES) this.since(at - this.#activeMs);
  }

  /** How many audiences were written to after `since` (the ones before are forgotten). */
  since(since: number): number {
    for (const [audience, at] of this.#at) {
      if (at > since) break;
      this.#at.delete(audience);
    }
    return this.#at.size;
  }
}
