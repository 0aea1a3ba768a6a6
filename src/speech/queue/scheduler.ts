import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { GrantingLimiter } from '../../tts/limiter/limiter.ts';
import type { Clock } from '../../util/clock.ts';
import { SpeechError } from '../errors.ts';
import type { Synthesizer } from '../synthesis/synthesize.ts';
import { AudienceQueue, type Forming } from './audience-queue.ts';
import { admits, batchRules, mayStartBatch, type BatchRules } from './batching/merging.ts';
import { ReadCounts } from './batching/reuse.ts';
import { spedUp, synthesizePlan, type PlanRun } from './clips.ts';
import {
  SCHEDULER_DEFAULTS,
  type AudienceStats,
  type EnqueueResult,
  type Logger,
  type ProgressEvent,
  type ProgressState,
  type QueueJournal,
  type SchedulerEvents,
  type SchedulerOptions,
  type SchedulerPolicy,
} from './options.ts';
import { Pacing } from './pacing.ts';
import { POLICY_DEFAULTS } from './policy.ts';
import { IdleQueues } from './retire.ts';
import { runSink } from './sink.ts';
import type { Slot, SlotState } from './slot.ts';
import { audienceOf, type ReadyUtterance, type Sink, type Utterance, type UtteranceInput } from './utterance.ts';
import { withdraw, type Replace } from './withdraw.ts';

/**
 * The fair per-audience speech scheduler: one FIFO per audience (a voice session, or a text
 * channel whose audio is posted: `audienceOf`), K batches synthesised ahead of playback, and
 * exactly one place that advances an audience's queue (after its sink settles). Two busy voice
 * channels of one server are two queues, served as fairly as two servers; what stays per guild is
 * the member cap (`accepts`: all audiences of the guild together), and outside the scheduler the
 * budget, the dictionary and the settings.
 *
 * An audience's next batch is formed when a rate grant is in hand (`limiter.reserve`), so
 * everything that arrived while it waited rides along in the same request; parts the cache has
 * (an author's name, a common short line) play as clips of their own, and a grant to spare buys
 * such parts alone so the cache has them next time (batching/reuse.ts `planBatch`). The staleness cut
 * is judged where each message's own words would start, both before anything is paid for it and at
 * the moment of speaking: nothing is heard later than `maxAutoAgeMs` after it arrived. A voice
 * audience bound by playback keeps up (batching/keeping-up.ts `keepUp`: the cut tightened to the horizon, the
 * oldest set aside, speed-up); while requests are scarce a request reads the lines of one voice
 * together (policy.ts `batchGroup`), and one waiting for a grant tells the limiter what it buys
 * (policy.ts `grantWorth`: fresh speech, weighed by the share of what it was offered that it has
 * read). The policy's constants are in one place (policy.ts `POLICY_DEFAULTS`). The order and pacing
 * of the shared budget between audiences live in the limiter (src/tts/limiter/pacing.ts), keyed
 * by audience. Each audience's queue is an object of its own (audience-queue.ts `AudienceQueue`): it
 * owns its pending list and its batches (slot.ts `Slot`: a state union changed only through the
 * slot's own methods); what is learnt and judged across audiences is `Pacing` (pacing.ts).
 */

/** One FIFO per audience with prefetch, batch-at-grant, clip reuse and a single advancing point. */
export class SpeechScheduler extends EventEmitter<SchedulerEvents> {
  readonly #synth: Synthesizer;
  readonly #clock: Clock;
  readonly #prefetch: number;
  readonly #maxInFlight: number;
  readonly #maxCharsPerMember: number;
  readonly #rules: BatchRules;
  readonly #limiter: GrantingLimiter | undefined;
  readonly #sinkTimeoutMs: number;
  readonly #logger: Logger;
  readonly #journal: QueueJournal;
  readonly #idle = new IdleQueues();
  /** What it learns and judges for every audience: latency, speech rate, scarce requests, keeping up (pacing.ts). */
  readonly #pacing: Pacing;
  /** What every audience's queue forms its batches with (audience-queue.ts `Forming`). */
  readonly #forming: Forming;
  /** The queues by audience. */
  readonly #queues = new Map<string, AudienceQueue>();
  /** The audiences of each guild that have a queue (the member cap, clearGuild, withdraw). */
  readonly #byGuild = new Map<string, Set<string>>();
  #sink: Sink | null = null;
  /** Audiences with something to pump on the next turn. */
  readonly #dirty = new Set<string>();
  #pumpScheduled = false;
  /** Aborted by close(): cancels hold timers. */
  readonly #lifetime = new AbortController();
  #closed = false;

  constructor(options: SchedulerOptions) {
    super();
    this.#synth = options.synthesize;
    this.#clock = options.clock ?? SCHEDULER_DEFAULTS.clock;
    this.#prefetch = Math.max(1, options.prefetch ?? SCHEDULER_DEFAULTS.prefetch);
    this.#maxInFlight = Math.min(this.#prefetch, Math.max(1, options.maxInFlight ?? SCHEDULER_DEFAULTS.maxInFlight));
    this.#maxCharsPerMember = options.maxPendingCharsPerMember ?? SCHEDULER_DEFAULTS.maxPendingCharsPerMember;
    this.#rules = batchRules(options);
    this.#limiter = options.limiter;
    this.#sinkTimeoutMs = options.sinkTimeoutMs ?? SCHEDULER_DEFAULTS.sinkTimeoutMs;
    this.#logger = options.logger ?? SCHEDULER_DEFAULTS.logger;
    this.#journal = options.journal ?? SCHEDULER_DEFAULTS.journal;
    const policy: SchedulerPolicy = { ...POLICY_DEFAULTS, ...options.policy };
    const freshness = options.freshness ?? SCHEDULER_DEFAULTS.freshness;
    this.#pacing = new Pacing({ clock: this.#clock, rules: this.#rules, limiter: this.#limiter, freshness, policy });
    this.#forming = {
      policy,
      clock: this.#clock,
      rules: this.#rules,
      synth: this.#synth,
      limiter: this.#limiter,
      reusableChars: options.reusableChars ?? SCHEDULER_DEFAULTS.reusableChars,
      pressureHoldMs: options.coalesce?.pressureHoldMs ?? SCHEDULER_DEFAULTS.coalesce.pressureHoldMs,
      reads: new ReadCounts(policy.reuseAfterReads),
      lifetime: this.#lifetime.signal,
      pacing: this.#pacing,
    };
  }

  /** Queues one utterance at the end of its audience's FIFO (`audienceOf(input)`). */
  enqueue(input: UtteranceInput): EnqueueResult {
    if (this.#closed) return { ok: false, reason: 'closed' };
    if (!this.accepts(input)) return { ok: false, reason: 'member_queue_full', limit: this.#maxCharsPerMember };
    const u: Utterance = { ...input, id: randomUUID(), enqueuedAt: this.#clock.now() };
    // On disk before it is acknowledged: from here on a crash does not lose it. What the disk
    // cannot take is refused (the member is told), not read with no copy kept.
    if (!this.#journal.add(u)) return { ok: false, reason: 'not_saved' };
    const g = this.#queue(u);
    g.push(u);
    this.#pacing.offered(g.audience, u);
    const position = g.undelivered().length;
    this.#progress(g, u, 'queued', { position });
    this.#schedulePump(g.audience);
    return { ok: true, id: u.id, position };
  }

  /** Where ready utterances go (play, or attach to a reply); deliveries wait while there is none. */
  setDefaultSink(sink: Sink | null): void {
    this.#sink = sink;
    for (const audience of this.#queues.keys()) this.#schedulePump(audience);
  }

  /** Stops the utterance being delivered to `audience`: its sink's signal is aborted. Returns whether one was. */
  skip(audience: string): boolean {
    const g = this.#queues.get(audience);
    if (!g) return false;
    return g.playing?.stopDelivery(new SpeechError('aborted', { guildId: g.guildId, message: 'skipped' })) ?? false;
  }

  /**
   * Drops everything of `audience` not yet delivered, aborting in-flight synthesis; returns how many
   * utterances. `reason` is passed to the 'cleared' event (whoever listens tells the members why).
   */
  clear(audience: string, reason?: string): number {
    const g = this.#queues.get(audience);
    if (!g) return 0;
    const items = g.undelivered();
    g.abortAll(new SpeechError('aborted', { guildId: g.guildId, message: 'cleared' }));
    this.#journal.remove(items.map((u) => u.id));
    this.emit('cleared', { guildId: g.guildId, audience, count: items.length, items, reason });
    return items.length;
  }

  /** `clear` for every audience of the guild (one 'cleared' event each); returns how many utterances in all. */
  clearGuild(guildId: string, reason?: string): number {
    let n = 0;
    for (const audience of this.#audiencesOf(guildId)) n += this.clear(audience, reason);
    return n;
  }

  /**
   * Takes back what `match` picks (deleted or edited messages, a banned member's) in every audience
   * of the guild, wherever it is (withdraw.ts).
   */
  withdraw(guildId: string, match: (u: Utterance) => boolean, replace?: Replace): Utterance[] {
    if (this.#closed) return [];
    const done: Utterance[] = [];
    for (const audience of this.#audiencesOf(guildId)) {
      const g = this.#queues.get(audience)!;
      const taken = withdraw(g, { guildId, match, replace, journal: this.#journal, now: this.#clock.now() });
      if (taken.length === 0) continue;
      done.push(...taken);
      this.#schedulePump(audience);
    }
    return done;
  }

  /** Whether `input` would be accepted now (the per-member character cap, all audiences of the guild together; false once closed). */
  accepts(input: Pick<UtteranceInput, 'guildId' | 'userId' | 'text'>): boolean {
    if (this.#closed) return false;
    let waiting = 0;
    for (const audience of this.#audiencesOf(input.guildId)) waiting += this.#charsForMember(this.#queues.get(audience)!, input.userId);
    // Explicit requests count too: one member must not fill a guild's queue (delays under load).
    return admits(waiting, this.#rules.countChars(input.text), this.#maxCharsPerMember);
  }

  /** Auto-read messages of the guild dropped as too old since the process started (its queues retired since too). */
  droppedCount(guildId: string): number {
    let n = this.#idle.retired(guildId).dropped;
    for (const audience of this.#audiencesOf(guildId)) n += this.#queues.get(audience)!.stats.dropped;
    return n;
  }

  /** Counters for one audience, or for every audience that has a queue (one idle for long is retired: retire.ts). */
  stats(audience: string): AudienceStats;
  stats(): AudienceStats[];
  stats(audience?: string): AudienceStats | AudienceStats[] {
    if (audience === undefined) return [...this.#queues.values()].map((g) => g.snapshot());
    // An audience never queued for has nothing (its guild unknown here: '').
    return (this.#queues.get(audience) ?? new AudienceQueue('', audience, this.#forming)).snapshot();
  }

  /**
   * Re-queues utterances a previous process accepted (member caps not applied; old auto items are
   * dropped as usual). They are already in the journal, so they are not added again.
   */
  restore(items: readonly Utterance[]): number {
    if (this.#closed) return 0;
    for (const u of items) {
      const g = this.#queue(u);
      g.push({ ...u });
      this.#schedulePump(g.audience);
    }
    return items.length;
  }

  /** Refuses new work, aborts synthesis and playback, and returns what was not spoken. */
  close(): Utterance[] {
    const unspoken = [...this.#queues.values()].flatMap((g) => g.undelivered()).map((u) => ({ ...u }));
    this.#closed = true;
    this.#lifetime.abort(new SpeechError('closed'));
    for (const g of this.#queues.values()) {
      const reason = new SpeechError('closed', { guildId: g.guildId });
      g.abortAll(reason);
      g.playing?.stopDelivery(reason);
    }
    return unspoken;
  }

  /** Most characters one member may have waiting per guild (all its audiences together). */
  get maxPendingCharsPerMember(): number {
    return this.#maxCharsPerMember;
  }

  // ---- internals ----

  /** The queue of `u`'s audience, made on first use. */
  #queue(u: Pick<Utterance, 'guildId' | 'audience' | 'channelId'>): AudienceQueue {
    const audience = audienceOf(u);
    const now = this.#clock.now();
    this.#idle.touch(audience, now);
    let g = this.#queues.get(audience);
    if (!g) {
      this.#idle.sweep({ queues: this.#queues, byGuild: this.#byGuild, dirty: this.#dirty, pacing: this.#pacing }, now);
      g = this.#made(new AudienceQueue(u.guildId, audience, this.#forming));
      this.#queues.set(audience, g);
      const mine = this.#byGuild.get(u.guildId);
      if (mine) mine.add(audience);
      else this.#byGuild.set(u.guildId, new Set([audience]));
    }
    return g;
  }

  /** A new queue, heard: its dropped lines leave the journal and are told; its wake-ups pump it. */
  #made(g: AudienceQueue): AudienceQueue {
    const { guildId, audience } = g;
    g.on('dropped', (items, at) => {
      this.#journal.remove(items.map((u) => u.id));
      this.#logger.info({ guildId, audience, count: items.length, at }, 'dropped stale auto-read messages');
      this.emit('dropped', { guildId, audience, items, reason: 'too_old', at });
    });
    g.on('wake', () => this.#schedulePump(audience));
    return g;
  }

  #audiencesOf(guildId: string): string[] {
    return [...(this.#byGuild.get(guildId) ?? [])];
  }

  #charsForMember(g: AudienceQueue, userId: string): number {
    let n = 0;
    for (const u of g.undelivered()) if (u.userId === userId) n += this.#rules.countChars(u.text);
    return n;
  }

  #progress(g: AudienceQueue, u: Utterance, state: ProgressState, extra: Partial<ProgressEvent> = {}): void {
    // Progress is for explicit requests (/say, /narrate); auto-read would only be noise.
    if (u.kind === 'auto') return;
    this.emit('progress', { id: u.id, guildId: u.guildId, audience: g.audience, userId: u.userId, kind: u.kind, state, ...extra });
  }

  /** Pumps on the next turn, so a burst of messages arriving together can be merged. */
  #schedulePump(audience: string): void {
    if (this.#closed) return;
    this.#dirty.add(audience);
    if (this.#pumpScheduled) return;
    this.#pumpScheduled = true;
    setImmediate(() => {
      this.#pumpScheduled = false;
      if (!this.#closed) this.#pumpAll();
    });
  }

  /**
   * Delivers ready heads, then starts the next batch of each audience that may have one
   * (round-robin across audiences, one per audience per round). A started batch plans, waits for
   * its grant and only then takes its utterances from the queue; one batch per audience plans at a
   * time, so batches keep the queue's order.
   */
  #pumpAll(): void {
    const queues: AudienceQueue[] = [];
    for (const audience of this.#dirty) {
      const g = this.#queues.get(audience);
      if (g) queues.push(g);
    }
    this.#dirty.clear();
    for (const g of queues) {
      const head = g.slots[0];
      const sink = this.#sink;
      if (head?.state.status === 'ready' && sink) void this.#deliver(g, head, sink);
    }
    let active = queues;
    while (active.length > 0) {
      active = active.filter((g) => {
        let synthesizing = 0;
        let ready = 0;
        for (const s of g.slots) {
          if (s.state.status === 'planning') return false;
          if (s.state.status === 'synthesizing') synthesizing++;
          else if (s.state.status === 'ready') ready++;
        }
        if (!mayStartBatch({ synthesizing, ready }, { prefetch: this.#prefetch, maxInFlight: this.#maxInFlight })) return false;
        if (!g.headReady(null)) return false;
        void this.#runSlot(g, g.start());
        return true;
      });
    }
  }

  /** One batch from plan to ready: formed at the moment of its grant (audience-queue.ts `form`), then synthesised. */
  async #runSlot(g: AudienceQueue, slot: Slot): Promise<void> {
    const { guildId, audience } = g;
    const planning = slot.state;
    if (planning.status !== 'planning') return;
    const { controller } = planning;
    const signal = controller.signal;
    let items: readonly Utterance[] = [];
    let results: ReadyUtterance[] = [];
    try {
      const formed = await g.form(slot);
      if (formed === null || formed === 'held') {
        // The slot leaves without having taken anything; a run held for company waits for an event (message, wake-up), never a re-poll.
        g.remove(slot);
        if (formed === null) this.#schedulePump(audience);
        return;
      }
      const { plan } = formed;
      items = formed.items;
      // Sped up as the audience kept up when its batch was formed (cached clips play as they are).
      const { speed } = g.keep;
      // Its clips are held to this cut when they play (the slot's `paidCutMs`).
      const paidCutMs = this.#pacing.judged(g).cutMs;
      // At each line's own speed; a request's sped up as synthesizePlan sends it (never past the service's fastest).
      const estimateMs = plan.clips.reduce((ms, c) => {
        const first = items[c.cached ? c.part.item : c.parts[0]!.item]!;
        const text = c.cached ? c.part.text : c.parts.map((p) => p.text).join('');
        const lineSpeed = first.speed > 0 ? first.speed : 1;
        const heard = c.cached ? lineSpeed : spedUp(lineSpeed, speed);
        return ms + (this.#pacing.msPerChar * this.#rules.countChars(text)) / heard;
      }, 0);
      slot.synthesizing(items, estimateMs, paidCutMs);
      for (const u of items) this.#progress(g, u, 'synthesizing');
      // The next batch may start planning (prefetch) now that this one has its utterances.
      this.#schedulePump(audience);
      const started = this.#clock.now();
      try {
        results = await synthesizePlan(this.#planRun(g, signal, speed), guildId, formed.items, plan, formed.known, formed.grants);
      } finally {
        formed.grants.settle();
      }
      if (plan.requests > 0) this.#pacing.learnLatency(this.#clock.now() - started);
    } catch (err) {
      // Aborted while waiting for a grant (clear, close): the utterances never left the queue.
      if (!signal.aborted)
        this.#logger.warn({ guildId, audience, err: err instanceof Error ? err.message : String(err) }, 'batch planning failed');
      if (items.length === 0) {
        g.remove(slot);
        this.#schedulePump(audience);
        return;
      }
      // Taken from the queue: each is delivered (as a failure, so its author is told), never lost.
      if (results.length === 0) {
        const error =
          err instanceof Error ? (err as Error & { code?: string }) : new SpeechError('synthesis_failed', { guildId, cause: err });
        results = [{ id: items[0]!.id, guildId, items: [...items], error }];
      }
    }
    // A cleared, withdrawn or closed slot is gone from the queue; its late result is ignored (and unpinned by the slot).
    if (!slot.ready(results)) return;
    for (const r of results) {
      this.emit('ready', { guildId, audience, ready: r, at: this.#clock.now() });
      for (const u of r.items) this.#progress(g, u, r.error ? 'failed' : 'ready', r.error ? { error: r.error } : {});
    }
    this.#schedulePump(audience);
  }

  /** How a batch's clips are made (clips.ts), learning the speech rate from the audio that comes back. */
  #planRun(g: AudienceQueue, signal: AbortSignal, speed = 1): PlanRun {
    const onMade = (chars: number, ms: number) => this.#pacing.learnRate(chars, ms);
    return {
      synth: this.#synth,
      rules: this.#rules,
      signal,
      progress: (u, state, extra) => this.#progress(g, u, state, extra),
      onMade,
      speed,
    };
  }

  /** The one place an audience's queue advances: when the sink's promise settles (or is abandoned). */
  async #deliver(g: AudienceQueue, slot: Slot, sink: Sink): Promise<void> {
    const { guildId, audience } = g;
    const ready = slot.state;
    if (ready.status !== 'ready') return;
    slot.play();
    for (;;) {
      const state: SlotState = slot.state;
      if (state.status !== 'playing') return;
      if (state.upcoming.length === 0) break;
      if (this.#closed) {
        // What was still to play is let go with the slot.
        g.drop(slot, new SpeechError('closed', { guildId }));
        return;
      }
      const started = slot.startNext(this.#clock.now())!;
      g.dropStale(started.dropped, 'speaking');
      const next = started.ready;
      if (!next) continue;
      if (!next.error) g.stats.delivered += next.items.length;
      await runSink(sink, next, {
        controller: started.controller!,
        clock: this.#clock,
        timeoutMs: this.#sinkTimeoutMs,
        onFailed: (error) => {
          this.#logger.warn({ guildId, audience, id: next.id, err: error instanceof Error ? error.message : String(error) }, 'sink failed');
          this.emit('sinkError', { guildId, audience, error, ready: next });
        },
        onAbandoned: () => this.#logger.warn({ guildId, audience, id: next.id }, 'sink did not settle after abort; moving on'),
      });
      // Its clips are let go by the slot.
      const played = slot.delivered();
      // A delivery cut short by close() is kept on disk and happens again after the restart.
      if (!this.#closed) this.#journal.remove(played.map((u) => u.id));
    }
    g.remove(slot);
    this.#schedulePump(audience);
  }
}
