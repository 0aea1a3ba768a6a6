import { EventEmitter } from 'node:events';
import { randomUUID } from 'node:crypto';
import type { Clock } from '../util/clock.ts';
import { admits, batchRequest, mayStartBatch, nextBatch, type BatchRules } from './batching.ts';
import { SpeechError } from './errors.ts';
import {
  SCHEDULER_DEFAULTS, type EnqueueResult, type GuildStats, type Logger, type ProgressEvent, type ProgressState, type QueueJournal,
  type ReadyUtterance, type SchedulerEvents, type SchedulerOptions, type Sink, type Utterance, type UtteranceInput,
} from './queue-types.ts';
import { runSink } from './sink.ts';
import type { Synthesizer } from './synthesize.ts';

// The scheduler's vocabulary (utterances, sinks, events, options) lives in queue-types.ts.
export * from './queue-types.ts';

/**
 * The fair per-guild speech scheduler: one FIFO per guild, K utterances synthesised ahead of
 * playback, consecutive auto-read messages merged into one request (the rules: batching.ts), and
 * exactly one place that advances a guild's queue (after its sink settles). Cross-guild fairness
 * of the shared rate budget lives in the fair limiter inside the TTS client, keyed by guild id;
 * this scheduler keeps each guild's demand to at most K requests at a time so one busy guild
 * cannot flood it.
 */

interface Slot {
  items: Utterance[];
  controller: AbortController;
  state: 'synthesizing' | 'ready';
  results: ReadyUtterance[];
}

interface GuildQueue {
  pending: Utterance[];
  /** Batches taken for synthesis, not yet delivered, in order (length <= prefetch). */
  slots: Slot[];
  /** The delivery in progress, if any. */
  current: AbortController | null;
  /** A held auto message has a wake-up scheduled. */
  holdTimer: boolean;
  stats: Omit<GuildStats, 'guildId' | 'queued' | 'synthesizing' | 'ready' | 'playing'>;
}

/** One FIFO per guild with prefetch, coalescing and a single advancing point. */
export class SpeechScheduler extends EventEmitter<SchedulerEvents> {
  readonly #synth: Synthesizer;
  readonly #clock: Clock;
  readonly #prefetch: number;
  readonly #maxInFlight: number;
  readonly #maxCharsPerMember: number;
  readonly #rules: BatchRules;
  readonly #sinkTimeoutMs: number;
  readonly #logger: Logger;
  readonly #journal: QueueJournal;
  readonly #guilds = new Map<string, GuildQueue>();
  #sink: Sink | null = null;
  /** Guilds with something to pump on the next turn. */
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
    const coalesce = options.coalesce ?? {};
    this.#rules = {
      maxMessages: coalesce.maxMessages ?? SCHEDULER_DEFAULTS.coalesce.maxMessages,
      maxChars: coalesce.maxChars ?? SCHEDULER_DEFAULTS.coalesce.maxChars,
      holdMs: coalesce.holdMs ?? SCHEDULER_DEFAULTS.coalesce.holdMs,
      maxAutoAgeMs: options.maxAutoAgeMs ?? SCHEDULER_DEFAULTS.maxAutoAgeMs,
      separator: { ...SCHEDULER_DEFAULTS.coalesce.separator, ...coalesce.separator },
      countChars: options.countChars ?? SCHEDULER_DEFAULTS.countChars,
    };
    this.#sinkTimeoutMs = options.sinkTimeoutMs ?? SCHEDULER_DEFAULTS.sinkTimeoutMs;
    this.#logger = options.logger ?? SCHEDULER_DEFAULTS.logger;
    this.#journal = options.journal ?? SCHEDULER_DEFAULTS.journal;
  }

  /** Queues one utterance at the end of its guild's FIFO. */
  enqueue(input: UtteranceInput): EnqueueResult {
    if (this.#closed) return { ok: false, reason: 'closed' };
    if (!this.accepts(input)) return { ok: false, reason: 'member_queue_full', limit: this.#maxCharsPerMember };
    const g = this.#guild(input.guildId);
    const u: Utterance = { ...input, id: randomUUID(), enqueuedAt: this.#clock.now() };
    // On disk before it is acknowledged: from here on a crash does not lose it.
    this.#journal.add(u);
    g.pending.push(u);
    const position = this.#undelivered(g).length;
    this.#progress(u, 'queued', { position });
    this.#schedulePump(u.guildId);
    return { ok: true, id: u.id, position };
  }

  /** Where ready utterances go (play, or attach to a reply); deliveries wait while there is none. */
  setDefaultSink(sink: Sink | null): void {
    this.#sink = sink;
    for (const [id, g] of this.#guilds) this.#schedulePump(id);
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
    const items: Utterance[] = [];
    for (const slot of g.slots) {
      items.push(...slot.items);
      slot.controller.abort(new SpeechError('aborted', { guildId, message: 'cleared' }));
      for (const r of slot.results) r.audio?.release?.();
    }
    items.push(...g.pending);
    g.pending = [];
    g.slots = [];
    this.#journal.remove(items.map((u) => u.id));
    this.emit('cleared', { guildId, count: items.length, items, reason });
    return items.length;
  }

  /** Whether `input` would be accepted now (the per-member character cap; false once closed). */
  accepts(input: Pick<UtteranceInput, 'guildId' | 'userId' | 'text'>): boolean {
    if (this.#closed) return false;
    const g = this.#guilds.get(input.guildId);
    const waiting = g ? this.#charsForMember(g, input.userId) : 0;
    // Explicit requests count too: one member must not fill a guild's queue (read-aloud-bots.md: delays under load).
    return admits(waiting, this.#rules.countChars(input.text), this.#maxCharsPerMember);
  }

  /** Counters for one guild, or for all guilds. */
  stats(guildId: string): GuildStats;
  stats(): GuildStats[];
  stats(guildId?: string): GuildStats | GuildStats[] {
    if (guildId === undefined) return [...this.#guilds.keys()].map((id) => this.stats(id));
    const g = this.#guild(guildId);
    return {
      guildId,
      queued: g.pending.length,
      synthesizing: g.slots.filter((s) => s.state === 'synthesizing').reduce((n, s) => n + s.items.length, 0),
      ready: g.slots.filter((s) => s.state === 'ready').reduce((n, s) => n + s.items.length, 0),
      playing: g.current !== null,
      ...g.stats,
    };
  }

  /** Utterances queued but not yet spoken, in order per guild (for a clean shutdown). */
  #snapshot(): Utterance[] {
    const out: Utterance[] = [];
    for (const g of this.#guilds.values()) {
      for (const slot of g.slots) out.push(...slot.items);
      out.push(...g.pending);
    }
    return out.map((u) => ({ ...u }));
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
    const unspoken = this.#snapshot();
    this.#closed = true;
    this.#lifetime.abort(new SpeechError('closed'));
    for (const [guildId, g] of this.#guilds) {
      const reason = new SpeechError('closed', { guildId });
      for (const slot of g.slots) {
        slot.controller.abort(reason);
        for (const r of slot.results) r.audio?.release?.();
      }
      g.slots = [];
      g.pending = [];
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
      g = {
        pending: [],
        slots: [],
        current: null,
        holdTimer: false,
        stats: { delivered: 0, dropped: 0 },
      };
      this.#guilds.set(guildId, g);
    }
    return g;
  }

  #undelivered(g: GuildQueue): Utterance[] {
    return [...g.slots.flatMap((s) => s.items), ...g.pending];
  }

  #charsForMember(g: GuildQueue, userId: string): number {
    let n = 0;
    for (const u of this.#undelivered(g)) if (u.userId === userId) n += this.#rules.countChars(u.text);
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
   * Delivers ready heads, then starts synthesis round-robin across guilds, one batch per guild per
   * round: a guild that queued a hundred messages first does not take every free rate slot ahead
   * of a guild that queued five in the same moment.
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
    // Prefetch: at most K batches synthesising or ready-but-undelivered per guild, of which at
    // most maxInFlight synthesising.
    let active = guilds;
    while (active.length > 0) {
      active = active.filter(([id, g]) => {
        const synthesizing = g.slots.filter((s) => s.state === 'synthesizing').length;
        const ready = g.slots.length - synthesizing;
        if (!mayStartBatch({ synthesizing, ready }, { prefetch: this.#prefetch, maxInFlight: this.#maxInFlight })) return false;
        const batch = this.#takeBatch(id, g);
        if (!batch) return false;
        this.#startSlot(id, g, batch);
        return true;
      });
    }
  }

  /** Applies the batching rules (batching.ts) to the head of the guild's queue: drops, holds or takes. */
  #takeBatch(guildId: string, g: GuildQueue): Utterance[] | null {
    const decision = nextBatch(g.pending, { now: this.#clock.now(), playing: g.current !== null }, this.#rules);
    if (decision.stale > 0) {
      // Auto-read that waited too long is no longer conversation; say/narrate are never dropped.
      const stale = g.pending.splice(0, decision.stale);
      g.stats.dropped += stale.length;
      this.#journal.remove(stale.map((u) => u.id));
      this.#logger.info({ guildId, count: stale.length }, 'dropped stale auto-read messages');
      this.emit('dropped', { guildId, items: stale, reason: 'too_old' });
    }
    if (decision.holdUntil !== undefined) this.#wakeAt(guildId, g, decision.holdUntil);
    return decision.take > 0 ? g.pending.splice(0, decision.take) : null;
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

  #startSlot(guildId: string, g: GuildQueue, items: Utterance[]): void {
    const slot: Slot = { items, controller: new AbortController(), state: 'synthesizing', results: [] };
    g.slots.push(slot);
    for (const u of items) this.#progress(u, 'synthesizing');
    void this.#synthesizeSlot(guildId, slot).then(() => {
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
    });
  }

  async #synthesizeSlot(guildId: string, slot: Slot): Promise<void> {
    const first = await this.#synthesizeItems(guildId, slot, slot.items);
    // One author over their allowance must not silence the others merged with them: retry alone.
    if (first.error && slot.items.length > 1 && first.error.code === 'budget_refused' && !slot.controller.signal.aborted) {
      for (const u of slot.items) slot.results.push(await this.#synthesizeItems(guildId, slot, [u]));
      return;
    }
    slot.results.push(first);
  }

  async #synthesizeItems(guildId: string, slot: Slot, items: Utterance[]): Promise<ReadyUtterance> {
    const base = { id: items[0]!.id, guildId, items };
    try {
      const audio = await this.#synth.synthesize(batchRequest(guildId, items, this.#rules), {
        signal: slot.controller.signal,
        onProgress: (p) => {
          for (const u of items) this.#progress(u, 'synthesizing', { detail: p.status });
        },
      });
      return { ...base, audio };
    } catch (err) {
      const error = err instanceof Error ? (err as Error & { code?: string }) : new SpeechError('synthesis_failed', { guildId, cause: err });
      return { ...base, error };
    }
  }

  /** The one place a guild's queue advances: when the sink's promise settles (or is abandoned). */
  async #deliver(guildId: string, g: GuildQueue, slot: Slot, sink: Sink): Promise<void> {
    for (const [i, ready] of slot.results.entries()) {
      if (this.#closed) {
        for (const rest of slot.results.slice(i)) rest.audio?.release?.();
        return;
      }
      const controller = new AbortController();
      g.current = controller;
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
      ready.audio?.release?.();
      // A delivery cut short by close() is kept on disk and happens again after the restart.
      if (!this.#closed) this.#journal.remove(ready.items.map((u) => u.id));
    }
    this.#schedulePump(guildId);
  }
}
