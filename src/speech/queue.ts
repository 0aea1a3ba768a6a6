import { EventEmitter } from 'node:events';
import { randomUUID } from 'node:crypto';
import type { Clock } from '../util/clock.ts';
import { admits, isRipe, mayStartBatch, nextBatch, type BatchRules } from './batching.ts';
import { cutReady, synthesizePlan, type ClipCarries, type PlanRun } from './queue-clips.ts';
import {
  abortAll,
  batchRules,
  formBatch,
  guildStats,
  newGuildQueue,
  speakAt,
  undelivered,
  type GuildQueue,
  type Slot,
} from './queue-slot.ts';
import { SpeechError } from './errors.ts';
import { withdraw, type Replace } from './queue-withdraw.ts';
import {
  SCHEDULER_DEFAULTS,
  type EnqueueResult,
  type GrantingLimiter,
  type GuildStats,
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
 * The fair per-guild speech scheduler: one FIFO per guild, K batches synthesised ahead of
 * playback, and exactly one place that advances a guild's queue (after its sink settles).
 *
 * A guild's next batch is formed when a rate grant is in hand (`limiter.reserve`), so
 * everything that arrived while it waited rides along in the same request; parts the cache has
 * (an author's name, a common short line) play as clips of their own, and a grant to spare buys
 * such parts alone so the cache has them next time (batching.ts `planBatch`). The staleness cut
 * is judged when the batch would speak, both before anything is paid for it and at the moment of
 * speaking: nothing is read later than `maxAutoAgeMs` after it arrived. Cross-guild order and
 * pacing of the shared budget live in the limiter (src/tts/limiter/pacing.ts), keyed by guild id.
 */

/** How the expected request latency and speech rate follow what was measured (weight of the newest sample). */
const LEARN = 0.2;

/** One FIFO per guild with prefetch, batch-at-grant, clip reuse and a single advancing point. */
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
  readonly #guilds = new Map<string, GuildQueue>();
  /** Which utterances each clip of a delivery carries (parallel to `audio.parts`, or one clip). */
  readonly #clipItems: ClipCarries = new WeakMap();
  readonly #reads = new Map<string, number>(); // readings per name and line (queue-slot.ts: worth a clip?)
  #sink: Sink | null = null;
  /** Guilds with something to pump on the next turn. */
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
  }

  /** Queues one utterance at the end of its guild's FIFO. */
  enqueue(input: UtteranceInput): EnqueueResult {
    if (this.#closed) return { ok: false, reason: 'closed' };
    if (!this.accepts(input)) return { ok: false, reason: 'member_queue_full', limit: this.#maxCharsPerMember };
    const u: Utterance = { ...input, id: randomUUID(), enqueuedAt: this.#clock.now() };
    // On disk before it is acknowledged: from here on a crash does not lose it. What the disk
    // cannot take is refused (the member is told), not read with no copy kept.
    if (!this.#journal.add(u)) return { ok: false, reason: 'not_saved' };
    const g = this.#guild(input.guildId);
    g.pending.push(u);
    const position = undelivered(g).length;
    this.#progress(u, 'queued', { position });
    this.#schedulePump(u.guildId);
    return { ok: true, id: u.id, position };
  }

  /** Where ready utterances go (play, or attach to a reply); deliveries wait while there is none. */
  setDefaultSink(sink: Sink | null): void {
    this.#sink = sink;
    for (const id of this.#guilds.keys()) this.#schedulePump(id);
  }

  /** Stops the utterance being delivered: its sink's signal is aborted. Returns whether one was. */
  skip(guildId: string): boolean {
    const g = this.#guilds.get(guildId);
    if (!g?.current || g.current.signal.aborted) return false;
    g.current.abort(new SpeechError('aborted', { guildId, message: 'skipped' }));
    return true;
  }

  /**
   * Drops everything not yet delivered, aborting in-flight synthesis; returns how many utterances.
   * `reason` is passed to the 'cleared' event (whoever listens tells the members why).
   */
  clear(guildId: string, reason?: string): number {
    const g = this.#guilds.get(guildId);
    if (!g) return 0;
    const items = undelivered(g);
    abortAll(g, new SpeechError('aborted', { guildId, message: 'cleared' }));
    this.#journal.remove(items.map((u) => u.id));
    this.emit('cleared', { guildId, count: items.length, items, reason });
    return items.length;
  }

  /** Takes back what `match` picks (deleted or edited messages, a banned member's), wherever it is (queue-withdraw.ts). */
  withdraw(guildId: string, match: (u: Utterance) => boolean, replace?: Replace): Utterance[] {
    const g = this.#closed ? undefined : this.#guilds.get(guildId);
    const done = g ? withdraw(g, { guildId, match, replace, journal: this.#journal, now: this.#clock.now() }) : [];
    if (done.length > 0) this.#schedulePump(guildId);
    return done;
  }

  /** Whether `input` would be accepted now (the per-member character cap; false once closed). */
  accepts(input: Pick<UtteranceInput, 'guildId' | 'userId' | 'text'>): boolean {
    if (this.#closed) return false;
    const g = this.#guilds.get(input.guildId);
    const waiting = g ? this.#charsForMember(g, input.userId) : 0;
    // Explicit requests count too: one member must not fill a guild's queue (delays under load).
    return admits(waiting, this.#rules.countChars(input.text), this.#maxCharsPerMember);
  }

  /** Counters for one guild, or for all guilds. */
  stats(guildId: string): GuildStats;
  stats(): GuildStats[];
  stats(guildId?: string): GuildStats | GuildStats[] {
    if (guildId === undefined) return [...this.#guilds.keys()].map((id) => this.stats(id));
    return guildStats(guildId, this.#guild(guildId));
  }

  /**
   * Re-queues utterances a previous process accepted (member caps not applied; old auto items are
   * dropped as usual). They are already in the journal, so they are not added again.
   */
  restore(items: readonly Utterance[]): number {
    if (this.#closed) return 0;
    for (const u of items) {
      const g = this.#guild(u.guildId);
      g.pending.push({ ...u });
      this.#schedulePump(u.guildId);
    }
    return items.length;
  }

  /** Refuses new work, aborts synthesis and playback, and returns what was not spoken. */
  close(): Utterance[] {
    const unspoken = [...this.#guilds.values()].flatMap(undelivered).map((u) => ({ ...u }));
    this.#closed = true;
    this.#lifetime.abort(new SpeechError('closed'));
    for (const [guildId, g] of this.#guilds) {
      const reason = new SpeechError('closed', { guildId });
      abortAll(g, reason);
      g.current?.abort(reason);
    }
    return unspoken;
  }

  /** Most characters one member may have waiting per guild. */
  get maxPendingCharsPerMember(): number {
    return this.#maxCharsPerMember;
  }

  // ---- internals ----

  #guild(guildId: string): GuildQueue {
    let g = this.#guilds.get(guildId);
    if (!g) {
      g = newGuildQueue();
      this.#guilds.set(guildId, g);
    }
    return g;
  }

  #charsForMember(g: GuildQueue, userId: string): number {
    let n = 0;
    for (const u of undelivered(g)) if (u.userId === userId) n += this.#rules.countChars(u.text);
    return n;
  }

  #progress(u: Utterance, state: ProgressState, extra: Partial<ProgressEvent> = {}): void {
    // Progress is for explicit requests (/say, /narrate); auto-read would only be noise.
    if (u.kind === 'auto') return;
    this.emit('progress', { id: u.id, guildId: u.guildId, userId: u.userId, kind: u.kind, state, ...extra });
  }

  /** Pumps on the next turn, so a burst of messages arriving together can be merged. */
  #schedulePump(guildId: string): void {
    if (this.#closed) return;
    this.#dirty.add(guildId);
    if (this.#pumpScheduled) return;
    this.#pumpScheduled = true;
    setImmediate(() => {
      this.#pumpScheduled = false;
      if (!this.#closed) this.#pumpAll();
    });
  }

  /**
   * Delivers ready heads, then starts the next batch of each guild that may have one (round-robin
   * across guilds, one per guild per round). A started batch plans, waits for its grant and only
   * then takes its utterances from the queue; one batch per guild plans at a time, so batches
   * keep the queue's order.
   */
  #pumpAll(): void {
    const guilds: Array<[string, GuildQueue]> = [];
    for (const id of this.#dirty) {
      const g = this.#guilds.get(id);
      if (g) guilds.push([id, g]);
    }
    this.#dirty.clear();
    for (const [id, g] of guilds) {
      const head = g.slots[0];
      const sink = this.#sink;
      if (!g.current && head?.state === 'ready' && sink) {
        g.slots.shift();
        void this.#deliver(id, g, head, sink);
      }
    }
    let active = guilds;
    while (active.length > 0) {
      active = active.filter(([id, g]) => {
        const ready = g.slots.filter((s) => s.state === 'ready').length;
        if (g.slots.some((s) => s.state === 'planning')) return false;
        if (!mayStartBatch({ synthesizing: g.slots.length - ready, ready }, { prefetch: this.#prefetch, maxInFlight: this.#maxInFlight }))
          return false;
        if (!this.#headReady(id, g, null)) return false;
        const slot: Slot = { state: 'planning', items: [], controller: new AbortController(), results: [], estimateMs: 0 };
        g.slots.push(slot);
        void this.#runSlot(id, g, slot);
        return true;
      });
    }
  }

  /**
   * Applies the head rules (batching.ts `nextBatch`) as the guild's next batch would speak: drops
   * the auto-read that would be past the cut by then (unpaid), holds a lone message for company.
   * Whether a batch can be formed now.
   */
  #headReady(guildId: string, g: GuildQueue, slot: Slot | null, granted = false): boolean {
    const now = this.#clock.now();
    // With a grant in hand there is nothing more to wait for: a lone message is not held.
    const decision = nextBatch(
      g.pending,
      { now, playing: g.current !== null && !granted, speakAt: speakAt(g, slot, now, this.#latencyMs) },
      this.#rules,
    );
    if (decision.stale > 0) this.#dropStale(guildId, g, g.pending.splice(0, decision.stale), 'queue');
    if (decision.holdUntil !== undefined) this.#wakeAt(guildId, g, decision.holdUntil);
    return decision.take > 0;
  }

  /** Requests are scarce: a run that needs one and can still grow waits for company (cached audio never does). */
  #holdForCompany(guildId: string, g: GuildQueue): boolean {
    if (!this.#limiter?.pressured('standard') || isRipe(g.pending, this.#clock.now(), this.#pressureHoldMs, this.#rules)) return false;
    this.#wakeAt(guildId, g, g.pending[0]!.enqueuedAt + this.#pressureHoldMs);
    return true;
  }

  #dropStale(guildId: string, g: GuildQueue, items: Utterance[], at: 'queue' | 'speaking'): void {
    if (items.length === 0) return;
    // Auto-read read a minute late is no longer conversation; say/narrate are never dropped.
    g.stats.dropped += items.length;
    this.#journal.remove(items.map((u) => u.id));
    this.#logger.info({ guildId, count: items.length, at }, 'dropped stale auto-read messages');
    this.emit('dropped', { guildId, items, reason: 'too_old', at });
  }

  /** A held message's guild is pumped again at `at` (one wake-up per guild at a time). */
  #wakeAt(guildId: string, g: GuildQueue, at: number): void {
    if (g.holdTimer) return;
    g.holdTimer = true;
    this.#clock
      .sleep(at - this.#clock.now(), this.#lifetime.signal)
      .then(() => {
        g.holdTimer = false;
        this.#schedulePump(guildId);
      })
      .catch(() => {});
  }

  /** The slot leaves without having taken anything; a run `held` for company waits for an event (message, wake-up), never a re-poll. */
  #abandon(guildId: string, g: GuildQueue, slot: Slot, held = false): void {
    const i = g.slots.indexOf(slot);
    if (i >= 0) g.slots.splice(i, 1);
    if (!held) this.#schedulePump(guildId);
  }

  /** One batch from plan to ready: formed at the moment of its grant (queue-slot.ts `formBatch`), then synthesised. */
  async #runSlot(guildId: string, g: GuildQueue, slot: Slot): Promise<void> {
    const signal = slot.controller.signal;
    let held = false;
    try {
      const formed = await formBatch(
        {
          synth: this.#synth,
          limiter: this.#limiter,
          rules: this.#rules,
          reusableChars: this.#reusableChars,
          signal,
          live: () => !this.#closed && g.slots.includes(slot),
          headReady: (granted) => this.#headReady(guildId, g, slot, granted),
          holdForCompany: () => (held = this.#holdForCompany(guildId, g)),
          reads: this.#reads,
        },
        guildId,
        g,
      );
      if (!formed) return this.#abandon(guildId, g, slot, held);
      const { items, plan } = formed;
      slot.items = items;
      slot.state = 'synthesizing';
      slot.estimateMs = plan.clips.reduce(
        (ms, c) => ms + this.#msPerChar * this.#rules.countChars(c.cached ? c.part.text : c.parts.map((p) => p.text).join('')),
        0,
      );
      for (const u of items) this.#progress(u, 'synthesizing');
      // The next batch may start planning (prefetch) now that this one has its utterances.
      this.#schedulePump(guildId);
      const started = this.#clock.now();
      slot.results.push(...(await synthesizePlan(this.#planRun(signal), guildId, items, plan, formed.known, formed.grants)));
      if (plan.requests > 0) this.#latencyMs += LEARN * (this.#clock.now() - started - this.#latencyMs);
    } catch (err) {
      // Aborted while waiting for a grant (clear, close): the utterances never left the queue.
      if (!signal.aborted) this.#logger.warn({ guildId, err: err instanceof Error ? err.message : String(err) }, 'batch planning failed');
      if (slot.items.length === 0) {
        this.#abandon(guildId, g, slot);
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
      this.emit('ready', { guildId, ready: r, at: this.#clock.now() });
      for (const u of r.items) this.#progress(u, r.error ? 'failed' : 'ready', r.error ? { error: r.error } : {});
    }
    this.#schedulePump(guildId);
  }

  /** How a batch's clips are made (queue-clips.ts), learning the speech rate from the audio that comes back. */
  #planRun(signal: AbortSignal): PlanRun {
    const onMade = (chars: number, ms: number) => void (this.#msPerChar += LEARN * (ms / Math.max(1, chars) - this.#msPerChar));
    return {
      synth: this.#synth,
      rules: this.#rules,
      carries: this.#clipItems,
      signal,
      progress: (u, state, extra) => this.#progress(u, state, extra),
      onMade,
    };
  }

  /** The one place a guild's queue advances: when the sink's promise settles (or is abandoned). */
  async #deliver(guildId: string, g: GuildQueue, slot: Slot, sink: Sink): Promise<void> {
    const delivering: NonNullable<GuildQueue['delivering']> = (g.delivering = { upcoming: [...slot.results], playing: [] });
    for (let result; (result = delivering.upcoming.shift());) {
      if (this.#closed) {
        for (const rest of [result, ...delivering.upcoming]) rest.audio?.release?.();
        return;
      }
      const cut = cutReady(this.#clipItems, result, this.#clock.now(), this.#rules.maxAutoAgeMs);
      this.#dropStale(guildId, g, cut.dropped, 'speaking');
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
          this.#logger.warn({ guildId, id: ready.id, err: error instanceof Error ? error.message : String(error) }, 'sink failed');
          this.emit('sinkError', { guildId, error, ready });
        },
        onAbandoned: () => this.#logger.warn({ guildId, id: ready.id }, 'sink did not settle after abort; moving on'),
      });
      g.current = null;
      g.playingUntil = this.#clock.now();
      ready.audio?.release?.();
      // A delivery cut short by close() is kept on disk and happens again after the restart.
      if (!this.#closed) this.#journal.remove(delivering.playing.map((u) => u.id));
    }
    this.#schedulePump(guildId);
  }
}
