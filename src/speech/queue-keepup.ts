import { keepUp, MAX_SPEED_UP, SPEED_STEP, type KeepUp } from './batching.ts';
import type { AudienceQueue } from './queue-slot.ts';
import type { Freshness, Utterance } from './queue-types.ts';

// Whether each voice audience is behind (bound by playback) and how far its speech is sped up: the
// state batching.ts `keepUp` decides from, kept for the scheduler (queue.ts), which asks at each
// decision.

/** How much speech an audience has waiting, in ms: what plays, is delivered next, ready, synthesising and (when `pending`) queued. */
export function backlogMs(g: AudienceQueue, now: number, pending: ((u: Utterance) => number) | null): number {
  const current = g.current;
  let backlog = current ? Math.max(0, current.until - now) : 0;
  for (const s of g.slots) {
    const st = s.state;
    if (st.status === 'ready') backlog += st.results.reduce((ms, r) => ms + (r.audio?.durationMs ?? 0), 0);
    else if (st.status === 'synthesizing') backlog += st.estimateMs;
    else if (st.status === 'playing') backlog += st.upcoming.reduce((ms, r) => ms + (r.audio?.durationMs ?? 0), 0);
  }
  if (pending) for (const u of g.pending) backlog += pending(u);
  return backlog;
}

/** While requests are scarce, auto-read heard later than this many horizons after it was written is dropped (`formingCut`). */
const SCARCE_CUT_HORIZONS = 2;
/**
 * A batch is formed so its words would start this much within the cut it is held to when it plays,
 * at most PAY_MARGIN_SHARE of the cut: a request a little slower than expected does not get its
 * audio, already paid for, thrown away for being a moment late.
 */
const PAY_MARGIN_MS = 2_000;
const PAY_MARGIN_SHARE = 0.1;

/**
 * The cut a batch is formed under, from keeping up's (`keep`, which its clips are held to when they
 * play): requests scarce and the channel still talking (`scarceTalking`), a grant is not spent on
 * what would be heard long after the conversation moved on, so at most two horizons; a channel that
 * has not written since has not moved on, its last lines are still what was said last and keep the
 * hard limit. Less the margin for a slow request.
 */
export function formingCut(keep: KeepUp, scarceTalking: boolean, horizonMs: number): KeepUp {
  const cutMs = scarceTalking ? Math.min(keep.cutMs, SCARCE_CUT_HORIZONS * horizonMs) : keep.cutMs;
  return { ...keep, cutMs: cutMs - Math.min(PAY_MARGIN_MS, PAY_MARGIN_SHARE * cutMs) };
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
