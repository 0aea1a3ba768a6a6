import { EventEmitter } from 'node:events';
import { randomUUID } from 'node:crypto';
import type { Clock } from '../util/clock.ts';
import { admits, catchUp, freshWorth, isRipe, mayStartBatch, nextBatch, type BatchRules, type KeepUp } from './batching.ts';
import { backlogMs, fitsWithin, KeepUpTracker } from './queue-keepup.ts';
import { cutReady, synthesizePlan, type ClipCarries, type PlanRun } from './queue-clips.ts';
import {
  abortAll,
  audienceStats,
  batchRules,
  formBatch,
  newAudienceQueue,
  speakAt,
  undelivered,
  type AudienceQueue,
  type Slot,
} from './queue-slot.ts';
import { SpeechError } from './errors.ts';
import { withdraw, type Replace } from './queue-withdraw.ts';
import {
  SCHEDULER_DEFAULTS,
  audienceOf,
  type AudienceStats,
  type EnqueueResult,
  type Freshness,
  type GrantingLimiter,
  type Logger,
  type ProgressEvent,
  type ProgressState,
  type QueueJournal,
  type SchedulerEvents,
  type SchedulerOptions,
  type Sink,
  type Utterance,
  type UtteranceInput,
} from './queue-types.ts';
import { runSink } from './sink.ts';
import type { Synthesizer } from './synthesize.ts';

export * from './queue-types.ts'; // the scheduler's vocabulary: utterances, sinks, events, options

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
 * such parts alone so the cache has them next time (batching.ts `planBatch`). The staleness cut
 * is judged where each message's own words would start, both before anything is paid for it and at
 * the moment of speaking: nothing is heard later than `maxAutoAgeMs` after it arrived. A voice
 * audience bound by playback keeps up (batching.ts `keepUp`: the cut tightened to the horizon, the
 * oldest dropped, speed-up); one waiting for a grant tells the limiter what it buys (`freshWorth`). The order and pacing
 * of the shared budget between audiences live in the limiter (src/tts/limiter/pacing.ts), keyed
 * by audience.
 */

/** How the expected request latency and speech rate follow what was measured (weight of the newest sample). */
const LEARN = 0.2;

/** One FIFO per audience with prefetch, batch-at-grant, clip reuse and a single advancing point. */
export class SpeechScheduler extends EventEmitter<SchedulerEvents> {
  readonly #synth: Synthesizer;
  readonly #clock: Clock;
  readonly #prefetch: number;
  readonly #maxInFlight: number;
  readonly #maxCharsPerMember: number;
  readonly #rules: BatchRules;
  readonly #limiter: GrantingLimiter | undefined;
  readonly #reusableChars: number;
  readonly #pressureHoldMs: number;
  readonly #sinkTimeoutMs: number;
  readonly #logger: Logger;
  readonly #journal: QueueJournal;
  readonly #freshness: (guildId: string) => Freshness;
  /** Whether each voice audience is behind, and its speed-up (queue-keepup.ts). */
  readonly #keepUps = new KeepUpTracker();
  /** The queues by audience. */
  readonly #queues = new Map<string, AudienceQueue>();
  /** The audiences of each guild that have a queue (the member cap, clearGuild, withdraw). */
  readonly #byGuild = new Map<string, Set<string>>();
  /** Which utterances each clip of a delivery carries (parallel to `audio.parts`, or one clip). */
  readonly #clipItems: ClipCarries = new WeakMap();
  readonly #reads = new Map<string, number>(); // readings per name and line (queue-slot.ts: worth a clip?)
  #sink: Sink | null = null;
  /** Audiences with something to pump on the next turn. */
  readonly #dirty = new Set<string>();
  #pumpScheduled = false;
  /** Aborted by close(): cancels hold timers. */
  readonly #lifetime = new AbortController();
  #closed = false;
  /** Expected time from a batch's grant to its audio (ms), learnt from requests. */
  #latencyMs = 1_000;
  /** Expected speech per character (ms), learnt from the audio made. */
  #msPerChar = 120;

  constructor(options: SchedulerOptions) {
    super();
    this.#synth = options.synthesize;
    this.#clock = options.clock ?? SCHEDULER_DEFAULTS.clock;
    this.#prefetch = Math.max(1, options.prefetch ?? SCHEDULER_DEFAULTS.prefetch);
    this.#maxInFlight = Math.min(this.#prefetch, Math.max(1, options.maxInFlight ?? SCHEDULER_DEFAULTS.maxInFlight));
    this.#maxCharsPerMember = options.maxPendingCharsPerMember ?? SCHEDULER_DEFAULTS.maxPendingCharsPerMember;
    this.#rules = batchRules(options);
    this.#limiter = options.limiter;
    this.#reusableChars = options.reusableChars ?? SCHEDULER_DEFAULTS.reusableChars;
    this.#pressureHoldMs = options.coalesce?.pressureHoldMs ?? SCHEDULER_DEFAULTS.coalesce.pressureHoldMs;
    this.#sinkTimeoutMs = options.sinkTimeoutMs ?? SCHEDULER_DEFAULTS.sinkTimeoutMs;
    this.#logger = options.logger ?? SCHEDULER_DEFAULTS.logger;
    this.#journal = options.journal ?? SCHEDULER_DEFAULTS.journal;
    this.#freshness = options.freshness ?? SCHEDULER_DEFAULTS.freshness;
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
    g.pending.push(u);
    if (g.audience.startsWith('voice:')) this.#keepUps.offer(g.audience, u.enqueuedAt, this.#msPerChar * this.#rules.countChars(u.text));
    const position = undelivered(g).length;
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
    if (!g?.current || g.current.signal.aborted) return false;
    g.current.abort(new SpeechError('aborted', { guildId: g.guildId, message: 'skipped' }));
    return true;
  }

  /**
   * Drops everything of `audience` not yet delivered, aborting in-flight synthesis; returns how many
   * utterances. `reason` is passed to the 'cleared' event (whoever listens tells the members why).
   */
  clear(audience: string, reason?: string): number {
    const g = this.#queues.get(audience);
    if (!g) return 0;
    const items = undelivered(g);
    abortAll(g, new SpeechError('aborted', { guildId: g.guildId, message: 'cleared' }));
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
   * of the guild, wherever it is (queue-withdraw.ts).
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

  /** Counters for one audience, or for every audience that has had a queue. */
  stats(audience: string): AudienceStats;
  stats(): AudienceStats[];
  stats(audience?: string): AudienceStats | AudienceStats[] {
    if (audience === undefined) return [...this.#queues.values()].map(audienceStats);
    // An audience never queued for has nothing (its guild unknown here: '').
    return audienceStats(this.#queues.get(audience) ?? newAudienceQueue('', audience));
  }

  /**
   * Re-queues utterances a previous process accepted (member caps not applied; old auto items are
   * dropped as usual). They are already in the journal, so they are not added again.
   */
  restore(items: readonly Utterance[]): number {
    if (this.#closed) return 0;
    for (const u of items) {
      const g = this.#queue(u);
      g.pending.push({ ...u });
      this.#schedulePump(g.audience);
    }
    return items.length;
  }

  /** Refuses new work, aborts synthesis and playback, and returns what was not spoken. */
  close(): Utterance[] {
    const unspoken = [...this.#queues.values()].flatMap(undelivered).map((u) => ({ ...u }));
    this.#closed = true;
    this.#lifetime.abort(new SpeechError('closed'));
    for (const g of this.#queues.values()) {
      const reason = new SpeechError('closed', { guildId: g.guildId });
      abortAll(g, reason);
      g.current?.abort(reason);
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
    let g = this.#queues.get(audience);
    if (!g) {
      g = newAudienceQueue(u.guildId, audience);
      this.#queues.set(audience, g);
      const mine = this.#byGuild.get(u.guildId);
      if (mine) mine.add(audience);
      else this.#byGuild.set(u.guildId, new Set([audience]));
    }
    return g;
  }

  #audiencesOf(guildId: string): string[] {
    return [...(this.#byGuild.get(guildId) ?? [])];
  }

  #charsForMember(g: AudienceQueue, userId: string): number {
    let n = 0;
    for (const u of undelivered(g)) if (u.userId === userId) n += this.#rules.countChars(u.text);
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
      if (!g.current && head?.state === 'ready' && sink) {
        g.slots.shift();
        void this.#deliver(g, head, sink);
      }
    }
    let active = queues;
    while (active.length > 0) {
      active = active.filter((g) => {
        const ready = g.slots.filter((s) => s.state === 'ready').length;
        if (g.slots.some((s) => s.state === 'planning')) return false;
        if (!mayStartBatch({ synthesizing: g.slots.length - ready, ready }, { prefetch: this.#prefetch, maxInFlight: this.#maxInFlight }))
          return false;
        if (!this.#headReady(g, null)) return false;
        const slot: Slot = { state: 'planning', items: [], controller: new AbortController(), results: [], estimateMs: 0 };
        g.slots.push(slot);
        void this.#runSlot(g, slot);
        return true;
      });
    }
  }

  /**
   * Applies the head rules (batching.ts `nextBatch`) as the audience's next batch would speak: drops
   * the auto-read that would be past the cut by then (unpaid), holds a lone message for company.
   * Whether a batch can be formed now.
   */
  #headReady(g: AudienceQueue, slot: Slot | null, granted = false, kept?: (keep: KeepUp) => void): boolean {
    const now = this.#clock.now();
    const at = speakAt(g, slot, now, this.#latencyMs);
    const keep = this.#keepUp(g);
    kept?.(keep);
    // Behind: the oldest go (with the spoken summary) so the newest is heard while it is still the conversation.
    if (keep.catchUpMs !== undefined) {
      const behind = catchUp(g.pending, at, this.#msPerChar / keep.speed, keep.catchUpMs, this.#rules);
      if (behind > 0) {
        this.#dropStale(g, g.pending.splice(0, behind), 'queue');
        this.#keepUps.stepUp(g.audience, keep);
      }
    }
    // With a grant in hand there is nothing more to wait for: a lone message is not held.
    const decision = nextBatch(g.pending, { now, playing: g.current !== null && !granted, speakAt: at, cutMs: keep.cutMs }, this.#rules);
    if (decision.stale > 0) this.#dropStale(g, g.pending.splice(0, decision.stale), 'queue');
    if (decision.holdUntil !== undefined) this.#wakeAt(g, decision.holdUntil);
    return decision.take > 0;
  }

  /**
   * How a voice audience keeps up now (batching.ts `keepUp`): behind while it is bound by playback
   * (more speech was offered over the last two horizons than they hold, or its backlog of what
   * plays, is ready, synthesising or queued cannot be heard within it), and for one horizon after.
   * Other audiences (audio posted in a text channel) are not listened to as it plays: the hard
   * limit only.
   */
  #keepUp(g: AudienceQueue): KeepUp {
    const max = this.#rules.maxAutoAgeMs;
    if (!g.audience.startsWith('voice:')) return { cutMs: max, speed: 1 };
    const now = this.#clock.now();
    // Queued messages count while requests are to be had: then it is playback that holds them back, not the rate.
    const queued = this.#limiter?.pressured('standard') ? null : (text: string) => this.#msPerChar * this.#rules.countChars(text);
    return this.#keepUps.judge(g.audience, now, backlogMs(g, now, queued), this.#freshness(g.guildId), max);
  }

  /** Requests are scarce: a run that needs one and can still grow waits for company (cached audio never does). */
  #holdForCompany(g: AudienceQueue): boolean {
    if (!this.#limiter?.pressured('standard') || isRipe(g.pending, this.#clock.now(), this.#pressureHoldMs, this.#rules)) return false;
    this.#wakeAt(g, g.pending[0]!.enqueuedAt + this.#pressureHoldMs);
    return true;
  }

  #dropStale(g: AudienceQueue, items: Utterance[], at: 'queue' | 'speaking'): void {
    if (items.length === 0) return;
    // Auto-read read a minute late is no longer conversation; say/narrate are never dropped.
    g.stats.dropped += items.length;
    this.#journal.remove(items.map((u) => u.id));
    const { guildId, audience } = g;
    this.#logger.info({ guildId, audience, count: items.length, at }, 'dropped stale auto-read messages');
    this.emit('dropped', { guildId, audience, items, reason: 'too_old', at });
  }

  /** A held message's audience is pumped again at `at` (one wake-up per audience at a time). */
  #wakeAt(g: AudienceQueue, at: number): void {
    if (g.holdTimer) return;
    g.holdTimer = true;
    this.#clock
      .sleep(at - this.#clock.now(), this.#lifetime.signal)
      .then(() => {
        g.holdTimer = false;
        this.#schedulePump(g.audience);
      })
      .catch(() => {});
  }

  /** The slot leaves without having taken anything; a run `held` for company waits for an event (message, wake-up), never a re-poll. */
  #abandon(g: AudienceQueue, slot: Slot, held = false): void {
    const i = g.slots.indexOf(slot);
    if (i >= 0) g.slots.splice(i, 1);
    if (!held) this.#schedulePump(g.audience);
  }

  /** One batch from plan to ready: formed at the moment of its grant (queue-slot.ts `formBatch`), then synthesised. */
  async #runSlot(g: AudienceQueue, slot: Slot): Promise<void> {
    const { guildId, audience } = g;
    const signal = slot.controller.signal;
    let held = false;
    // How the audience keeps up at the moment the batch is formed (its speed-up).
    let keep: KeepUp = { cutMs: this.#rules.maxAutoAgeMs, speed: 1 };
    try {
      const formed = await formBatch(
        {
          synth: this.#synth,
          limiter: this.#limiter,
          rules: this.#rules,
          reusableChars: this.#reusableChars,
          signal,
          live: () => !this.#closed && g.slots.includes(slot),
          headReady: (granted) => this.#headReady(g, slot, granted, (k) => (keep = k)),
          holdForCompany: () => (held = this.#holdForCompany(g)),
          reads: this.#reads,
          worth: () => freshWorth(g.pending, this.#clock.now(), this.#freshness(guildId).horizonMs, this.#rules.maxMessages),
          // As the head was judged (before the oldest were dropped to catch up).
          fits: (run) => fitsWithin(run, speakAt(g, slot, this.#clock.now(), this.#latencyMs), this.#msPerChar, keep, this.#rules),
        },
        g,
      );
      if (!formed) return this.#abandon(g, slot, held);
      const { items, plan } = formed;
      slot.items = items;
      slot.state = 'synthesizing';
      slot.estimateMs = plan.clips.reduce(
        (ms, c) =>
          ms +
          (this.#msPerChar * this.#rules.countChars(c.cached ? c.part.text : c.parts.map((p) => p.text).join(''))) /
            (c.cached ? 1 : keep.speed),
        0,
      );
      for (const u of items) this.#progress(g, u, 'synthesizing');
      // The next batch may start planning (prefetch) now that this one has its utterances.
      this.#schedulePump(audience);
      const started = this.#clock.now();
      slot.results.push(...(await synthesizePlan(this.#planRun(g, signal, keep.speed), guildId, items, plan, formed.known, formed.grants)));
      if (plan.requests > 0) this.#latencyMs += LEARN * (this.#clock.now() - started - this.#latencyMs);
    } catch (err) {
      // Aborted while waiting for a grant (clear, close): the utterances never left the queue.
      if (!signal.aborted)
        this.#logger.warn({ guildId, audience, err: err instanceof Error ? err.message : String(err) }, 'batch planning failed');
      if (slot.items.length === 0) {
        this.#abandon(g, slot);
        return;
      }
      // Taken from the queue: each is delivered (as a failure, so its author is told), never lost.
      if (slot.results.length === 0) {
        const error =
          err instanceof Error ? (err as Error & { code?: string }) : new SpeechError('synthesis_failed', { guildId, cause: err });
        slot.results.push({ id: slot.items[0]!.id, guildId, items: slot.items, error });
      }
    }
    // A cleared or closed slot is gone from the queue; its late result is ignored (and unpinned).
    if (!g.slots.includes(slot)) {
      for (const r of slot.results) r.audio?.release?.();
      return;
    }
    slot.state = 'ready';
    for (const r of slot.results) {
      this.emit('ready', { guildId, audience, ready: r, at: this.#clock.now() });
      for (const u of r.items) this.#progress(g, u, r.error ? 'failed' : 'ready', r.error ? { error: r.error } : {});
    }
    this.#schedulePump(audience);
  }

  /** How a batch's clips are made (queue-clips.ts), learning the speech rate from the audio that comes back. */
  #planRun(g: AudienceQueue, signal: AbortSignal, speed = 1): PlanRun {
    const onMade = (chars: number, ms: number) => void (this.#msPerChar += LEARN * (ms / Math.max(1, chars) - this.#msPerChar));
    return {
      synth: this.#synth,
      rules: this.#rules,
      carries: this.#clipItems,
      signal,
      progress: (u, state, extra) => this.#progress(g, u, state, extra),
      onMade,
      speed,
    };
  }

  /** The one place an audience's queue advances: when the sink's promise settles (or is abandoned). */
  async #deliver(g: AudienceQueue, slot: Slot, sink: Sink): Promise<void> {
    const { guildId, audience } = g;
    const delivering: NonNullable<AudienceQueue['delivering']> = (g.delivering = { upcoming: [...slot.results], playing: [] });
    for (let result; (result = delivering.upcoming.shift());) {
      if (this.#closed) {
        for (const rest of [result, ...delivering.upcoming]) rest.audio?.release?.();
        return;
      }
      const cut = cutReady(this.#clipItems, result, this.#clock.now(), this.#keepUp(g).cutMs);
      this.#dropStale(g, cut.dropped, 'speaking');
      const ready = cut.ready;
      if (!ready) continue;
      const controller = new AbortController();
      g.current = controller;
      delivering.playing = (delivering.ready = ready).items;
      g.playingUntil = this.#clock.now() + (ready.audio?.durationMs ?? 0);
      if (!ready.error) g.stats.delivered += ready.items.length;
      await runSink(sink, ready, {
        controller,
        clock: this.#clock,
        timeoutMs: this.#sinkTimeoutMs,
        onFailed: (error) => {
          this.#logger.warn(
            { guildId, audience, id: ready.id, err: error instanceof Error ? error.message : String(error) },
            'sink failed',
          );
          this.emit('sinkError', { guildId, audience, error, ready });
        },
        onAbandoned: () => this.#logger.warn({ guildId, audience, id: ready.id }, 'sink did not settle after abort; moving on'),
      });
      g.current = null;
      g.playingUntil = this.#clock.now();
      ready.audio?.release?.();
      // A delivery cut short by close() is kept on disk and happens again after the restart.
      if (!this.#closed) this.#journal.remove(delivering.playing.map((u) => u.id));
    }
    this.#schedulePump(audience);
  }
}
