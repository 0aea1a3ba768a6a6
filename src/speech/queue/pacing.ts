import type { GrantingLimiter } from '../../tts/limiter/limiter.ts';
import type { Clock } from '../../util/clock.ts';
import { keepUp, MAX_SPEED_UP, readMs, SPEED_STEP, type KeepUp } from './batching/keeping-up.ts';
import type { BatchRules } from './batching/merging.ts';
import type { Freshness, SchedulerPolicy } from './options.ts';
import type { Utterance } from './utterance.ts';

// The scheduler's pacing: what it learns (a request's latency, the speech rate), whether requests
// are scarce, and whether each voice audience is behind (bound by playback) and how far its speech
// is sped up: the state batching/keeping-up.ts `keepUp` decides from. One object for every audience's queue
// (audience-queue.ts `AudienceQueue`), which asks it at each decision.

/** How the expected request latency and speech rate follow what was measured (weight of the newest sample). */
const LEARN = 0.2;

/** What pacing asks of an audience's queue (audience-queue.ts `AudienceQueue`). */
export interface PacedAudience {
  readonly guildId: string;
  readonly audience: string;
  /** How much speech it has waiting, in ms: what plays, is delivered next, ready, synthesising and (when `queued`) queued, not set aside. */
  backlogMs(now: number, queued: ((u: Utterance) => number) | null): number;
}

/**
 * What the scheduler learns and judges for every audience: the expected latency and speech rate,
 * whether requests are scarce, and how each voice audience keeps up (the cut, the speed-up).
 */
export class Pacing {
  readonly #clock: Clock;
  readonly #rules: BatchRules;
  readonly #limiter: GrantingLimiter | undefined;
  readonly #freshness: (guildId: string) => Freshness;
  readonly #policy: SchedulerPolicy;
  /** Whether each voice audience is behind, and its speed-up. */
  readonly #keepUps = new KeepUpTracker();
  /** When each audience last had an auto message, for `scarce`. */
  readonly #lastWritten: WrittenLately;
  /** When each grant a batch waited for came lately (oldest first), for `scarce`. */
  readonly #granted: number[] = [];
  #latencyMs = 1_000;
  #msPerChar = 120;

  constructor(o: {
    clock: Clock;
    rules: BatchRules;
    limiter: GrantingLimiter | undefined;
    freshness: (guildId: string) => Freshness;
    policy: SchedulerPolicy;
  }) {
    this.#clock = o.clock;
    this.#rules = o.rules;
    this.#limiter = o.limiter;
    this.#freshness = o.freshness;
    this.#policy = o.policy;
    this.#lastWritten = new WrittenLately(o.policy.activeMs);
  }

  /** Expected time from a batch's grant to its audio (ms), learnt from requests. */
  get latencyMs(): number {
    return this.#latencyMs;
  }

  /** Expected speech per character at speed 1 (ms), learnt from the audio made; a line's own speed divides it (batching/keeping-up.ts `readMs`). */
  get msPerChar(): number {
    return this.#msPerChar;
  }

  /** A batch's requests took `ms` from its grant to its audio. */
  learnLatency(ms: number): void {
    this.#latencyMs += LEARN * (ms - this.#latencyMs);
  }

  /** A paid request of `chars` characters made `ms` of audio at speed 1. */
  learnRate(chars: number, ms: number): void {
    this.#msPerChar += LEARN * (ms / Math.max(1, chars) - this.#msPerChar);
  }

  /** `u` was queued for `audience`: speech offered to a voice audience, and an audience written to. */
  offered(audience: string, u: Utterance): void {
    if (audience.startsWith('voice:')) this.#keepUps.offer(audience, u.enqueuedAt, readMs(u, 0, this.#msPerChar, this.#rules));
    if (u.kind === 'auto') this.#lastWritten.wrote(audience, u.enqueuedAt);
  }

  /** A grant came for a request an audience waited for (counted by `scarce`). */
  granted(): void {
    this.#granted.push(this.#clock.now());
  }

  /** Forgets `audience` (its queue was retired). */
  forget(audience: string): void {
    this.#keepUps.forget(audience);
  }

  /** Its server's freshness horizon (ms): what a grant buys is the speech still within it. */
  horizonMs(guildId: string): number {
    return this.#freshness(guildId).horizonMs;
  }

  /**
   * Whether requests are scarce: the limiter says so (someone waits, or the window is full), or they
   * are about to be: `scarceAudiences` audiences were written to within `activeMs` and `scarceGrants`
   * grants came within it (policy.ts) (a rate past half the budget). So many talking at once want a request every
   * few seconds each: a run waits for company from the start instead of the window's first half going
   * to single lines. A few servers (the quiet case) or chat read from the cache never wait.
   */
  scarce(): boolean {
    if (this.#limiter?.pressured('standard')) return true;
    if (!this.#limiter) return false;
    const { activeMs, scarceGrants, scarceAudiences } = this.#policy;
    const since = this.#clock.now() - activeMs;
    while (this.#granted.length > 0 && this.#granted[0]! <= since) this.#granted.shift();
    if (this.#granted.length < scarceGrants) return false;
    return this.#lastWritten.since(since) >= scarceAudiences;
  }

  /**
   * How a voice audience keeps up now (batching/keeping-up.ts `keepUp`): the cut its clips are held to when
   * they play (the slot's `paidCutMs`). Other audiences (audio posted in a text channel) are not
   * listened to as it plays: the hard limit only.
   */
  judged(q: PacedAudience): KeepUp {
    const max = this.#rules.maxAutoAgeMs;
    if (!q.audience.startsWith('voice:')) return { cutMs: max, speed: 1 };
    const now = this.#clock.now();
    // Queued messages count while requests are to be had: then it is playback that holds them back, not the rate.
    const scarce = this.scarce();
    const queued = scarce ? null : (u: Utterance) => readMs(u, 0, this.#msPerChar, this.#rules);
    const o = { scarce, catchUpShare: this.#policy.catchUpShare };
    return this.#keepUps.judge(q.audience, now, q.backlogMs(now, queued), this.#freshness(q.guildId), max, o);
  }

  /**
   * The cut and speed a batch is formed under: `judged`, through `formingCut` (two horizons for a
   * voice channel still talking while requests are scarce, less a margin).
   */
  keepUp(q: PacedAudience): KeepUp {
    const horizonMs = Math.min(this.#freshness(q.guildId).horizonMs, this.#rules.maxAutoAgeMs);
    const scarceTalking = q.audience.startsWith('voice:') && this.scarce() && this.talking(q);
    return formingCut(this.judged(q), scarceTalking ? this.#policy.scarceCutHorizons * horizonMs : Number.POSITIVE_INFINITY, this.#policy);
  }

  /** Whether voice audience `q` was written to within its horizon: its conversation goes on. */
  talking(q: PacedAudience): boolean {
    return this.#keepUps.talking(q.audience, this.#clock.now(), Math.min(this.#freshness(q.guildId).horizonMs, this.#rules.maxAutoAgeMs));
  }

  /** The oldest of `audience` had to be set aside to catch up: its next requests a step faster. */
  stepUp(audience: string, keep: KeepUp): void {
    this.#keepUps.stepUp(audience, keep);
  }
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
function formingCut(keep: KeepUp, scarceCutMs: number, margin: Pick<SchedulerPolicy, 'payMarginMs' | 'payMarginShare'>): KeepUp {
  const cutMs = Math.min(keep.cutMs, scarceCutMs);
  return { ...keep, cutMs, payMarginMs: Math.min(margin.payMarginMs, margin.payMarginShare * cutMs) };
}

/** Per voice audience: the speech offered lately, until when it counts as behind, and its speed-up step. */
class KeepUpTracker {
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
class WrittenLately {
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
