import { EventEmitter } from 'node:events';
import type { GrantingLimiter, RateGrant } from '../../tts/limiter/limiter.ts';
import type { Clock } from '../../util/clock.ts';
import type { ReadyAudio, Synthesizer } from '../synthesis/synthesize.ts';
import { catchUp, fitsWithin, type KeepUp, lullLookAgain } from './batching/keeping-up.ts';
import { isRipe, nextBatch, type BatchRules } from './batching/merging.ts';
import { partKey, planBatch, type BatchPlan, type PlanLimits, type ReadCounts } from './batching/reuse.ts';
import { lookupParts, releaseAll } from './clips.ts';
import { Grants } from './grants.ts';
import type { AudienceStats, SchedulerPolicy } from './options.ts';
import type { PacedAudience, Pacing } from './pacing.ts';
import { batchGroup, grantWorth } from './policy.ts';
import { Slot, type Playing, type SlotState } from './slot.ts';
import type { Utterance } from './utterance.ts';

// One audience's queue as the scheduler (scheduler.ts) keeps it, after @discordjs/voice's
// AudioPlayer: one object owns the pending list and the batches started from it (slot.ts), and the
// forming of the next batch at the moment of its grant is this object's own (it takes from the list
// it owns). What it learns and judges across audiences it asks of Pacing (pacing.ts); what it
// drops as too old and when it wants to be looked at again it emits ('dropped', 'wake').

/** What every audience's queue forms its batches with: the scheduler's collaborators and settings (no callbacks). */
export interface Forming {
  readonly clock: Clock;
  readonly rules: BatchRules;
  readonly synth: Synthesizer;
  readonly limiter: GrantingLimiter | undefined;
  readonly reusableChars: number;
  readonly pressureHoldMs: number;
  /** The policy's constants (policy.ts). */
  readonly policy: SchedulerPolicy;
  /** How often each part was read lately, across audiences; updated as batches are formed (batching/reuse.ts). */
  readonly reads: ReadCounts;
  /** Aborted when the scheduler closes: ends hold timers and formings. */
  readonly lifetime: AbortSignal;
  /** What the scheduler learns and judges (latency, speech rate, scarce requests, keeping up): pacing.ts. */
  readonly pacing: Pacing;
}

/** What an audience's queue tells the scheduler: auto-read dropped as too old (before anything was paid, or at the moment of speaking); look at it again. */
interface AudienceEvents {
  dropped: [items: Utterance[], at: 'queue' | 'speaking'];
  wake: [];
}

/** A batch taken from the queue: its utterances, its plan, the cached parts it plays and the grants its requests spend. */
interface Formed {
  items: Utterance[];
  plan: BatchPlan;
  known: Map<string, ReadyAudio>;
  grants: Grants;
}

/** One audience's queue (a voice session, or a text channel whose audio is posted): its own order, merging and pacing. */
export class AudienceQueue extends EventEmitter<AudienceEvents> implements PacedAudience {
  readonly guildId: string;
  readonly audience: string;
  readonly #forming: Forming;
  readonly #pacing: Pacing;
  #pending: Utterance[] = [];
  /** Batches started, not yet delivered, in order (at most one planning; the one playing first). */
  #slots: Slot[] = [];
  /** A held auto message has a wake-up scheduled. */
  #holdTimer = false;
  /** When each message taken into a batch lately was taken (oldest first; `#spokenLately`). */
  readonly #spokenAt: number[] = [];
  /** When each auto message was queued lately (oldest first; `#offeredLately`). */
  readonly #offeredAt: number[] = [];
  /** How it kept up when the head rules were last applied (the batch formed then is held to it, and sped up by it). */
  #keep: KeepUp | undefined;
  /**
   * The oldest lines set aside to catch up while behind: the newer ones are read first; one set aside
   * is read when nothing newer waits and the channel would fall silent, and dropped only once it
   * could no longer be heard within the cut (never to make room for nothing).
   */
  readonly #setAside = new Set<Utterance>();
  readonly stats = { delivered: 0, dropped: 0 };

  constructor(guildId: string, audience: string, forming: Forming) {
    super();
    this.guildId = guildId;
    this.audience = audience;
    this.#forming = forming;
    this.#pacing = forming.pacing;
  }

  /** How it kept up when the head rules were last applied. */
  get keep(): KeepUp {
    return this.#keep ?? { cutMs: Number.POSITIVE_INFINITY, speed: 1 };
  }

  get pending(): readonly Utterance[] {
    return this.#pending;
  }

  /** What waits to be read next, in order: the pending lines not set aside to catch up. */
  get waiting(): readonly Utterance[] {
    if (this.#setAside.size === 0) return this.#pending;
    for (const u of this.#setAside) if (!this.#pending.includes(u)) this.#setAside.delete(u);
    return this.#pending.filter((u) => !this.#setAside.has(u));
  }

  /** What the next batch reads from: what waits; when only lines set aside are left, those (the channel would fall silent otherwise). */
  #readable(): readonly Utterance[] {
    const waiting = this.waiting;
    return waiting.length > 0 ? waiting : this.#pending;
  }

  get slots(): readonly Slot[] {
    return this.#slots;
  }

  /** The batch being delivered, if any (always the first slot). */
  get playing(): (Slot & { readonly state: Extract<SlotState, { status: 'playing' }> }) | undefined {
    const head = this.#slots[0];
    return head?.state.status === 'playing' ? (head as Slot & { readonly state: Extract<SlotState, { status: 'playing' }> }) : undefined;
  }

  /**
   * When it last had work (a message queued, or taken into a batch) if it has none now: nothing
   * pending, no batch, no wake-up due; else undefined. `touched` is when a message was last queued.
   */
  idleSince(touched: number): number | undefined {
    if (this.#pending.length > 0 || this.#slots.length > 0 || this.#holdTimer) return undefined;
    return Math.max(touched, this.#spokenAt.at(-1) ?? Number.NEGATIVE_INFINITY);
  }

  /** The delivery in the sink now, if any. */
  get current(): Playing | null {
    return this.playing?.state.current ?? null;
  }

  /** Queues `u` at the end. */
  push(u: Utterance): void {
    this.#pending.push(u);
    this.#offeredAt.push(u.enqueuedAt);
  }

  /** The pending list becomes `list` (a withdrawal took from it or replaced in it). */
  replacePending(list: readonly Utterance[]): void {
    this.#pending = [...list];
  }

  /** `items` go before everything pending; a batch waiting for its grant looked at the old list: it is dropped and planned again. */
  putFirst(items: readonly Utterance[], reason: unknown): void {
    this.#pending = [...items, ...this.#pending];
    for (const slot of this.#slots.filter((s) => s.state.status === 'planning')) this.drop(slot, reason);
  }

  /** A new batch, planning. */
  start(): Slot {
    const slot = new Slot();
    this.#slots.push(slot);
    return slot;
  }

  /** Whether `slot` is still one of this queue's (not cleared, withdrawn or delivered). */
  has(slot: Slot): boolean {
    return this.#slots.includes(slot);
  }

  /** `slot` leaves the queue with nothing under way (it formed nothing, or its deliveries are done). */
  remove(slot: Slot): void {
    const i = this.#slots.indexOf(slot);
    if (i >= 0) this.#slots.splice(i, 1);
    slot.retire();
  }

  /** `slot` leaves the queue now: what it has under way is aborted with `reason`, its audio let go. */
  drop(slot: Slot, reason: unknown): void {
    slot.discard(reason);
    const i = this.#slots.indexOf(slot);
    if (i >= 0) this.#slots.splice(i, 1);
  }

  /** Empties the queue: batches aborted with `reason`, ready audio unpinned. The delivery in progress is left to finish. */
  abortAll(reason: unknown): void {
    for (const slot of this.#slots.filter((s) => s.state.status !== 'playing')) this.drop(slot, reason);
    this.#pending = [];
  }

  /** Everything not yet delivered, in order (the batch being delivered is not counted). */
  undelivered(): Utterance[] {
    const taken = this.#slots.flatMap((s) => (s.state.status === 'synthesizing' || s.state.status === 'ready' ? s.state.items : []));
    return [...taken, ...this.#pending];
  }

  /** The counters (AudienceStats). */
  snapshot(): AudienceStats {
    const count = (status: 'synthesizing' | 'ready') =>
      this.#slots.reduce((n, s) => n + (s.state.status === status ? s.state.items.length : 0), 0);
    return {
      guildId: this.guildId,
      audience: this.audience,
      queued: this.#pending.length,
      synthesizing: count('synthesizing'),
      ready: count('ready'),
      playing: this.current !== null,
      oldestAt: this.undelivered().reduce<number | null>((at, u) => (at === null || u.enqueuedAt < at ? u.enqueuedAt : at), null),
      ...this.stats,
    };
  }

  /** How much speech it has waiting, in ms: what plays, is delivered next, ready, synthesising and (when `queued`) queued, not set aside. */
  backlogMs(now: number, queued: ((u: Utterance) => number) | null): number {
    const current = this.current;
    let backlog = current ? Math.max(0, current.until - now) : 0;
    for (const s of this.#slots) {
      const st = s.state;
      if (st.status === 'ready') backlog += st.results.reduce((ms, r) => ms + (r.audio?.durationMs ?? 0), 0);
      else if (st.status === 'synthesizing') backlog += st.estimateMs;
      else if (st.status === 'playing') backlog += st.upcoming.reduce((ms, r) => ms + (r.audio?.durationMs ?? 0), 0);
    }
    // Lines set aside to catch up are read only in a lull: not what keeps the channel behind.
    if (queued) for (const u of this.waiting) backlog += queued(u);
    return backlog;
  }

  /** Auto-read dropped as too old (`at`: before anything was paid, or at the moment of speaking): counted, then told ('dropped'). */
  dropStale(items: Utterance[], at: 'queue' | 'speaking'): void {
    if (items.length === 0) return;
    // Auto-read read a minute late is no longer conversation; say/narrate are never dropped.
    this.stats.dropped += items.length;
    this.emit('dropped', items, at);
  }

  /** The earliest a batch behind `slot`'s predecessors could speak: after what plays and waits ahead of it, and a request's latency. */
  speakAt(slot: Slot | null, now: number): number {
    const current = this.current;
    let t = current ? Math.max(now, current.until) : now;
    for (const s of this.#slots) {
      if (s === slot) break;
      const st = s.state;
      if (st.status === 'ready') t += st.results.reduce((ms, r) => ms + (r.audio?.durationMs ?? 0), 0);
      else if (st.status === 'synthesizing') t += st.estimateMs;
    }
    return Math.max(t, now + this.#pacing.latencyMs);
  }

  /**
   * Applies the head rules (batching/merging.ts `nextBatch`) as the next batch would speak: drops the
   * auto-read that could not be heard within the cut by then even if read next (unpaid), sets the
   * oldest aside while behind, holds a lone message for company. Whether a batch can be formed now.
   */
  headReady(slot: Slot | null, granted = false): boolean {
    const now = this.#forming.clock.now();
    const at = this.speakAt(slot, now);
    const keep = (this.#keep = this.#pacing.keepUp(this));
    const { rules } = this.#forming;
    // Past the cut even if read next: dropped, unpaid (never to make room for nothing).
    const stale = nextBatch(this.#pending, { now, playing: false, speakAt: at, cutMs: keep.cutMs }, rules).stale;
    if (stale > 0) this.dropStale(this.#pending.splice(0, stale), 'queue');
    // Behind: the oldest are set aside so the newest is heard while it is still the conversation.
    if (keep.catchUpMs !== undefined) {
      const waiting = this.waiting;
      const behind = catchUp(waiting, at, this.#pacing.msPerChar / keep.speed, keep.catchUpMs, rules);
      if (behind > 0) {
        for (const u of waiting.slice(0, behind)) this.#setAside.add(u);
        this.#pacing.stepUp(this.audience, keep);
      }
    }
    if (this.waiting.length === 0 && this.#pending.length > 0) {
      // Only lines set aside: read while the channel would otherwise fall silent, not ahead of what plays.
      const silentAt = at - this.#pacing.latencyMs;
      if (silentAt > now) {
        this.#wakeAt(silentAt);
        return false;
      }
      // Only just in time: not paid for (a request a little slow and its audio would be dropped unheard).
      const marginMs = this.#forming.policy.lullMarginShare * this.#pacing.latencyMs;
      const again = lullLookAgain(this.#pending[0]!, at, now, keep.cutMs, marginMs);
      if (again !== undefined) {
        this.#wakeAt(again);
        return false;
      }
    }
    // With a grant in hand there is nothing more to wait for: a lone message is not held.
    const decision = nextBatch(
      this.#readable(),
      { now, playing: this.current !== null && !granted, speakAt: at, cutMs: keep.cutMs },
      rules,
    );
    if (decision.holdUntil !== undefined) this.#wakeAt(decision.holdUntil);
    return decision.take > 0;
  }

  /**
   * Requests are scarce: a run that needs one and can still grow waits for company (cached audio
   * never does), until its first message's words would start `pressureHoldMs` after it was written
   * (at most the policy's `holdShare` of the horizon, so what it waited for is still heard fresh).
   */
  #holdForCompany(slot: Slot, run: readonly Utterance[], grouped: boolean): boolean {
    const { clock, pressureHoldMs, rules, policy } = this.#forming;
    if (!this.#pacing.scarce()) return false;
    const now = clock.now();
    const due = Math.min(pressureHoldMs, policy.holdShare * this.#pacing.horizonMs(this.guildId));
    const lead = this.speakAt(slot, now) - now;
    // Grouped by voice, the run is its voice's messages: another voice after it does not stop it growing, only full or due.
    if (isRipe(grouped ? run.slice(0, rules.maxMessages) : run, now + lead, due, rules)) return false;
    this.#wakeAt(run[0]!.enqueuedAt + due - lead);
    return true;
  }

  /** Messages of this audience taken into batches within the policy's `spokenWindowMs` of `now` (what it had read lately). */
  #spokenLately(now: number): number {
    const since = now - this.#forming.policy.spokenWindowMs;
    while (this.#spokenAt.length > 0 && this.#spokenAt[0]! <= since) this.#spokenAt.shift();
    return this.#spokenAt.length;
  }

  /** Auto messages queued for this audience within the policy's window (what it was offered lately). */
  #offeredLately(now: number): number {
    const since = now - this.#forming.policy.spokenWindowMs;
    while (this.#offeredAt.length > 0 && this.#offeredAt[0]! <= since) this.#offeredAt.shift();
    return this.#offeredAt.length;
  }

  /** How its next request is chosen now: grouped by voice while requests are scarce (policy.ts `batchGroup`). */
  #groupWindow(keep: KeepUp) {
    const { policy } = this.#forming;
    return {
      horizonMs: this.#pacing.horizonMs(this.guildId),
      cutMs: keep.cutMs,
      staleWorth: this.#pacing.talking(this) ? policy.staleWorthTalking : policy.staleWorth,
      grouped: this.#pacing.scarce(),
    };
  }

  /** What a grant would buy this audience now, asked by the limiter while it waits (policy.ts `grantWorth`). */
  #grantWorth(slot: Slot): number {
    const now = this.#forming.clock.now();
    // As it keeps up now: the cut may have changed since the head rules were applied (a channel stopped talking).
    const keep = this.#pacing.keepUp(this);
    const window = { ...this.#groupWindow(keep), spokenLately: this.#spokenLately(now), offeredLately: this.#offeredLately(now) };
    return grantWorth(
      this.#readable(),
      this.speakAt(slot, now),
      this.#pacing.msPerChar / keep.speed,
      window,
      this.#forming.rules,
      this.#forming.policy,
    );
  }

  /** The queue is pumped again at `at` (one wake-up at a time). */
  #wakeAt(at: number): void {
    if (this.#holdTimer) return;
    this.#holdTimer = true;
    const { clock } = this.#forming;
    clock
      .sleep(at - clock.now(), this.#forming.lifetime)
      .then(() => {
        this.#holdTimer = false;
        this.emit('wake');
      })
      .catch(() => {});
  }

  /**
   * Forms `slot`'s batch: looks up the parts the cache has; when a request is needed, waits for a
   * grant and only then takes from what is pending at that moment (batch at the moment of the
   * grant); with grants to spare, asks for names and short lines alone. 'held': a run waits for
   * company (it is woken later); null: nothing to form (the queue emptied, a message is held, the
   * slot was cleared). Throws the signal's reason on abort, with nothing taken from the queue.
   * Grants and cached audio not used are given back.
   */
  async form(slot: Slot): Promise<Formed | 'held' | null> {
    const { rules, synth, limiter } = this.#forming;
    const state = slot.state;
    if (state.status !== 'planning') return null;
    const signal = state.controller.signal;
    const grants = new Grants();
    // Parts looked up so far (kept across the wait for a grant: only what arrived since is looked up then).
    const known = new Map<string, ReadyAudio>();
    const looked = new Set<string>();
    let formed = false;
    const live = () => !signal.aborted && !this.#forming.lifetime.aborted && this.has(slot);
    const gone = (head: Utterance) => !live() || !this.#pending.includes(head);
    try {
      for (;;) {
        if (!live() || !this.headReady(slot, grants.count > 0)) return null;
        const at = this.speakAt(slot, this.#forming.clock.now());
        const readable = this.#readable();
        const group = batchGroup(
          readable,
          at,
          this.#pacing.msPerChar / this.keep.speed,
          this.#groupWindow(this.keep),
          rules,
          this.#forming.policy,
        );
        if (!group) return null;
        const grouped = group.members.some((u, i) => readable[i] !== u);
        const candidates = group.members.slice(0, rules.maxMessages * 2);
        // As the head was judged (before the oldest were dropped to catch up): each message's words within the cut.
        const fits = fitsWithin(candidates, at, this.#pacing.msPerChar, this.keep, rules);
        const runLength = Math.max(1, Math.min(candidates.length, fits));
        const run = candidates.slice(0, runLength);
        const head = run[0]!;
        const auto = head.kind === 'auto' && !head.advanced;
        if (auto) await lookupParts(synth, this.guildId, run, known, looked);
        if (gone(head)) continue;
        const isCached = (u: Utterance, text: string) => known.has(partKey(u, text));
        const recurring = (u: Utterance, text: string) => this.#forming.reads.recurring(u, text);
        const limits = (maxRequests: number): PlanLimits => ({
          maxRequests,
          reusableChars: this.#forming.reusableChars,
          maxItems: runLength,
          recurring,
        });
        let plan: BatchPlan;
        if (grants.count > 0) {
          // Grants to spare right now mean requests are not the scarce resource: spend them on clips worth keeping.
          const wanted = planBatch(run, isCached, limits(Number.POSITIVE_INFINITY), rules).requests;
          for (let e: RateGrant | null; grants.count < wanted && (e = await limiter!.tryReserve('standard', { key: this.audience }));)
            grants.add(e);
          if (gone(head)) {
            // Cleared or closed meanwhile (or the head went): give the extras back and look again.
            grants.settle(1);
            continue;
          }
          plan = planBatch(run, isCached, limits(grants.count), rules);
        } else {
          plan = planBatch(run, isCached, limits(0), rules);
          if (plan.take === 0) {
            if (limiter && auto) {
              if (this.#holdForCompany(slot, grouped ? group.members : readable, grouped)) return 'held';
              // While it waits, the limiter asks what a grant would buy it: grants go where they buy the most fresh speech.
              grants.add(await limiter.reserve('standard', { key: this.audience, signal, worth: () => this.#grantWorth(slot) }));
              this.#pacing.granted();
              // Batch at the moment of the grant: look again at everything pending now.
              continue;
            }
            // Explicit requests and a scheduler without a limiter: the client waits for its own grant.
            plan = planBatch(run, isCached, limits(1), rules);
          }
        }
        const items = run.slice(0, plan.take);
        const taken = new Set(items);
        this.#pending = this.#pending.filter((u) => !taken.has(u));
        this.#forming.reads.count(items);
        const takenAt = this.#forming.clock.now();
        for (let i = 0; i < items.length; i++) this.#spokenAt.push(takenAt);
        const used = new Set(plan.clips.flatMap((c) => (c.cached ? [partKey(items[c.part.item]!, c.part.text)] : [])));
        releaseAll([...known].filter(([k]) => !used.has(k)).map(([, audio]) => audio));
        formed = true;
        grants.settle(plan.requests);
        return { items, plan, known, grants };
      }
    } finally {
      if (!formed) {
        grants.settle();
        releaseAll(known.values());
      }
    }
  }
}
