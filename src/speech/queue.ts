import { EventEmitter } from 'node:events';
import { randomUUID } from 'node:crypto';
import type { Clock } from '../util/clock.ts';
import { systemClock } from '../util/clock.ts';
import { countChars } from '../tts/chars.ts';
import { SpeechError } from './errors.ts';
import type { AdvancedParams, Charge, ReadyAudio, SynthesisRequest, Synthesizer } from './synthesize.ts';

/**
 * The fair per-guild speech scheduler: one FIFO per guild, K utterances synthesised ahead of
 * playback, consecutive auto-read messages merged into one request, and exactly one place that
 * advances a guild's queue (after its sink settles). Cross-guild fairness of the shared rate
 * budget lives in the fair limiter inside the TTS client, keyed by guild id; this scheduler keeps
 * each guild's demand to at most K requests at a time so one busy guild cannot flood it.
 */

export type UtteranceKind = 'auto' | 'say' | 'narrate';

export interface UtteranceInput {
  guildId: string;
  userId: string;
  channelId: string;
  kind: UtteranceKind;
  text: string;
  lang?: string;
  voice: string;
  speed: number;
  pitch: number;
  /** Present for the advanced (Beta) endpoint; `narrate` utterances need it. */
  advanced?: AdvancedParams;
  /** Anything the bot needs back at delivery (message id, interaction token, ...). */
  meta?: unknown;
}

export interface Utterance extends UtteranceInput {
  id: string;
  enqueuedAt: number;
}

interface ReadyBase {
  /** Delivery id (the first item's id). */
  id: string;
  guildId: string;
  /** The original utterances merged into this audio, in message order. */
  items: Utterance[];
}
/** Spoken audio, or a failure delivered in its place in the order so the author can be told. */
export type ReadyUtterance = (ReadyBase & { audio: ReadyAudio; error?: undefined }) | (ReadyBase & { audio?: undefined; error: Error & { code?: string } });

/** Plays or posts one ready utterance; must settle when done (and soon after `signal` aborts). */
export type Sink = (item: ReadyUtterance, signal: AbortSignal) => Promise<void>;

export type EnqueueResult = { ok: true; id: string; position: number } | { ok: false; reason: 'member_queue_full' | 'closed'; limit?: number };

export type ProgressState = 'queued' | 'synthesizing' | 'ready' | 'failed';

export interface ProgressEvent {
  id: string;
  guildId: string;
  userId: string;
  kind: UtteranceKind;
  state: ProgressState;
  /** 1 = next to speak; present on 'queued'. */
  position?: number;
  /** Advanced job status while synthesising ('created', 'pending', 'running', ...). */
  detail?: string;
  error?: Error & { code?: string };
}

export interface PendingPosition {
  id: string;
  userId: string;
  kind: UtteranceKind;
  position: number;
  state: 'queued' | 'synthesizing' | 'ready';
}

export interface GuildStats {
  guildId: string;
  queued: number;
  synthesizing: number;
  ready: number;
  playing: boolean;
  enqueued: number;
  delivered: number;
  failed: number;
  dropped: number;
  cleared: number;
  skipped: number;
  requests: number;
  cacheHits: number;
  merged: number;
}

export interface SchedulerEvents {
  progress: [ProgressEvent];
  /** Auto-read items that waited longer than maxAutoAgeMs (counted in stats). */
  dropped: [{ guildId: string; items: Utterance[]; reason: 'too_old' }];
  /** Synthesis finished (or failed) for a batch; `at` is the clock time. */
  ready: [{ guildId: string; ready: ReadyUtterance; at: number }];
  delivered: [{ guildId: string; ready: ReadyUtterance; at: number }];
  sinkError: [{ guildId: string; error: unknown; ready: ReadyUtterance }];
  /** Everything not yet delivered was dropped by clear(); `reason` is the caller's. */
  cleared: [{ guildId: string; count: number; items: Utterance[]; reason: string | undefined }];
}

/**
 * Where accepted utterances are kept until they are finished, so a crash loses none (issue 9 §3).
 * `add` runs when an utterance is accepted, `remove` when it is spoken (its delivery settled),
 * failed and told, dropped or cleared; never on close(), so what a shutdown interrupts is kept.
 * Both must be quick and must not throw (src/speech/queue-store.ts).
 */
export interface QueueJournal {
  add(u: Utterance): void;
  remove(ids: readonly string[]): void;
}

export interface Logger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

export interface CoalesceOptions {
  maxChars?: number;
  maxMessages?: number;
  /** How long a lone auto message may wait for company while its guild is playing. */
  holdMs?: number;
  /** Pause inserted between merged messages, by `lang`; `default` for the rest. */
  separator?: Record<string, string>;
}

export interface SchedulerOptions {
  synthesize: Synthesizer;
  clock?: Clock;
  prefetch?: number;
  /**
   * Requests per guild synthesising at once (<= prefetch). 1 by default: under load a second
   * request would wait on the shared rate budget holding one message, where waiting lets every
   * message that arrives meanwhile merge into the next request (bench:queue shows the difference).
   */
  maxInFlight?: number;
  /**
   * Characters one member may have waiting per guild (issue 9 §6: characters, not lines, so a
   * burst of short chat lines that merge into a few requests is never refused). A member with
   * nothing waiting is always accepted, however long the text.
   */
  maxPendingCharsPerMember?: number;
  maxAutoAgeMs?: number;
  coalesce?: CoalesceOptions;
  /** Counts characters the way the service does (default: src/tts/chars.ts). */
  countChars?: (text: string) => number;
  /** After audio length + this, a delivery's signal is aborted; after twice this the queue moves on anyway. */
  sinkTimeoutMs?: number;
  logger?: Logger;
  /** Keeps accepted utterances on disk until they are finished. */
  journal?: QueueJournal;
}

const DEFAULT_SEPARATORS: Record<string, string> = { ja: '。', en: '. ', default: '。' };

/** Defaults of every option (src/config.ts takes MAX_PENDING_PER_MEMBER's from here). */
export const SCHEDULER_DEFAULTS = {
  clock: systemClock,
  prefetch: 2,
  maxInFlight: 1,
  maxPendingCharsPerMember: 500,
  maxAutoAgeMs: 60_000,
  coalesce: { maxChars: 200, maxMessages: 5, holdMs: 1_500, separator: DEFAULT_SEPARATORS },
  countChars,
  sinkTimeoutMs: 30_000,
  logger: { info() {}, warn() {} },
  journal: { add() {}, remove() {} },
} as const satisfies Required<Omit<SchedulerOptions, 'synthesize'>>;

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
  sink: Sink | null;
  /** A held auto message has a wake-up scheduled. */
  holdTimer: boolean;
  stats: Omit<GuildStats, 'guildId' | 'queued' | 'synthesizing' | 'ready' | 'playing'>;
}

const CJK = /[\u3040-\u30ff\u3400-\u9fff\uff66-\uff9f]/u;

/** One FIFO per guild with prefetch, coalescing and a single advancing point. */
export class SpeechScheduler extends EventEmitter<SchedulerEvents> {
  readonly #synth: Synthesizer;
  readonly #clock: Clock;
  readonly #prefetch: number;
  readonly #maxInFlight: number;
  readonly #maxCharsPerMember: number;
  readonly #maxAutoAgeMs: number;
  readonly #coalesce: Required<CoalesceOptions>;
  readonly #countChars: (text: string) => number;
  readonly #sinkTimeoutMs: number;
  readonly #logger: Logger;
  readonly #journal: QueueJournal;
  readonly #guilds = new Map<string, GuildQueue>();
  #defaultSink: Sink | null = null;
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
    this.#maxAutoAgeMs = options.maxAutoAgeMs ?? SCHEDULER_DEFAULTS.maxAutoAgeMs;
    this.#coalesce = {
      maxChars: options.coalesce?.maxChars ?? SCHEDULER_DEFAULTS.coalesce.maxChars,
      maxMessages: options.coalesce?.maxMessages ?? SCHEDULER_DEFAULTS.coalesce.maxMessages,
      holdMs: options.coalesce?.holdMs ?? SCHEDULER_DEFAULTS.coalesce.holdMs,
      separator: { ...SCHEDULER_DEFAULTS.coalesce.separator, ...options.coalesce?.separator },
    };
    this.#countChars = options.countChars ?? SCHEDULER_DEFAULTS.countChars;
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
    g.stats.enqueued++;
    const position = this.#undelivered(g).length;
    this.#progress(u, 'queued', { position });
    this.#schedulePump(u.guildId);
    return { ok: true, id: u.id, position };
  }

  /** Sets (or with null removes) the guild's sink; deliveries wait while a guild has none. */
  setSink(guildId: string, sink: Sink | null): void {
    const g = this.#guild(guildId);
    g.sink = sink;
    this.#schedulePump(guildId);
  }

  /** The sink for guilds without their own (e.g. attach the audio to a reply). */
  setDefaultSink(sink: Sink | null): void {
    this.#defaultSink = sink;
    for (const [id, g] of this.#guilds) this.#schedulePump(id);
  }

  /** Stops the utterance being delivered: its sink's signal is aborted. Returns whether one was. */
  skip(guildId: string): boolean {
    const g = this.#guilds.get(guildId);
    if (!g?.current || g.current.signal.aborted) return false;
    g.stats.skipped++;
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
    g.stats.cleared += items.length;
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
    return waiting === 0 || waiting + this.#countChars(input.text) <= this.#maxCharsPerMember;
  }

  /** Not-yet-delivered utterances of a guild with their positions (1 = next to speak). */
  pending(guildId: string): PendingPosition[] {
    const g = this.#guilds.get(guildId);
    if (!g) return [];
    const out: PendingPosition[] = [];
    for (const slot of g.slots) {
      for (const u of slot.items) out.push({ id: u.id, userId: u.userId, kind: u.kind, position: out.length + 1, state: slot.state });
    }
    for (const u of g.pending) out.push({ id: u.id, userId: u.userId, kind: u.kind, position: out.length + 1, state: 'queued' });
    return out;
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
  snapshot(): Utterance[] {
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
      g.stats.enqueued++;
      this.#schedulePump(u.guildId);
    }
    return items.length;
  }

  /** Refuses new work, aborts synthesis and playback, and returns what was not spoken. */
  close(): Utterance[] {
    const unspoken = this.snapshot();
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

  get closed(): boolean {
    return this.#closed;
  }

  // ---- internals ----

  #guild(guildId: string): GuildQueue {
    let g = this.#guilds.get(guildId);
    if (!g) {
      g = {
        pending: [],
        slots: [],
        current: null,
        sink: null,
        holdTimer: false,
        stats: { enqueued: 0, delivered: 0, failed: 0, dropped: 0, cleared: 0, skipped: 0, requests: 0, cacheHits: 0, merged: 0 },
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
    for (const u of this.#undelivered(g)) if (u.userId === userId) n += this.#countChars(u.text);
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
      const sink = g.sink ?? this.#defaultSink;
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
        if (g.slots.length >= this.#prefetch) return false;
        if (g.slots.filter((s) => s.state === 'synthesizing').length >= this.#maxInFlight) return false;
        const batch = this.#takeBatch(id, g);
        if (!batch) return false;
        this.#startSlot(id, g, batch);
        return true;
      });
    }
  }

  /** Takes the next batch: a lone explicit request, or up to maxMessages compatible auto messages. */
  #takeBatch(guildId: string, g: GuildQueue): Utterance[] | null {
    const now = this.#clock.now();
    const stale: Utterance[] = [];
    // Auto-read that waited too long is no longer conversation; say/narrate are never dropped.
    while (g.pending[0]?.kind === 'auto' && now - g.pending[0].enqueuedAt > this.#maxAutoAgeMs) stale.push(g.pending.shift()!);
    if (stale.length > 0) {
      g.stats.dropped += stale.length;
      this.#journal.remove(stale.map((u) => u.id));
      this.#logger.info({ guildId, count: stale.length }, 'dropped stale auto-read messages');
      this.emit('dropped', { guildId, items: stale, reason: 'too_old' });
    }
    const head = g.pending.shift();
    if (!head) return null;
    const batch = [head];
    if (head.kind !== 'auto' || head.advanced) return batch;
    if (g.pending.length === 0 && this.#hold(guildId, g, head, now)) {
      g.pending.unshift(head);
      return null;
    }
    const sep = this.#separator(head);
    let chars = this.#countChars(head.text);
    while (batch.length < this.#coalesce.maxMessages) {
      const next = g.pending[0];
      if (!next || !this.#mergeable(head, next)) break;
      const add = this.#countChars(sep) + this.#countChars(next.text);
      if (chars + add > this.#coalesce.maxChars) break;
      chars += add;
      batch.push(g.pending.shift()!);
    }
    return batch;
  }

  /**
   * While the guild is playing, a lone auto message cannot be heard before the playback ends
   * anyway: hold it up to holdMs so the next lines of a burst merge into the same request. An
   * idle guild speaks at once. Returns whether to hold (a pump is scheduled for the deadline).
   */
  #hold(guildId: string, g: GuildQueue, head: Utterance, now: number): boolean {
    const left = head.enqueuedAt + this.#coalesce.holdMs - now;
    if (g.current === null || left <= 0) return false;
    if (!g.holdTimer) {
      g.holdTimer = true;
      this.#clock
        .sleep(left, this.#lifetime.signal)
        .then(() => {
          g.holdTimer = false;
          this.#schedulePump(guildId);
        })
        .catch(() => {});
    }
    return true;
  }

  #mergeable(a: Utterance, b: Utterance): boolean {
    return b.kind === 'auto' && !b.advanced && a.voice === b.voice && a.speed === b.speed && a.pitch === b.pitch && a.lang === b.lang;
  }

  #separator(u: Utterance): string {
    const s = this.#coalesce.separator;
    if (u.lang !== undefined && s[u.lang] !== undefined) return s[u.lang]!;
    if (u.lang === undefined && !CJK.test(u.text) && s.en !== undefined) return s.en;
    return s.default ?? '。';
  }

  /** The merged request; each author is charged for their own text (plus the pause before it). */
  #request(guildId: string, items: Utterance[]): SynthesisRequest {
    const first = items[0]!;
    const sep = this.#separator(first);
    const byUser = new Map<string, number>();
    items.forEach((u, i) => {
      const chars = this.#countChars(u.text) + (i > 0 ? this.#countChars(sep) : 0);
      byUser.set(u.userId, (byUser.get(u.userId) ?? 0) + chars);
    });
    const endpoint = first.advanced ? 'advanced' : 'standard';
    const charges: Charge[] = [...byUser].map(([userId, chars]) => ({ guildId, userId, endpoint, chars }));
    const req: SynthesisRequest = {
      guildId,
      endpoint,
      text: items.map((u) => u.text).join(sep),
      voice: first.voice,
      speed: first.speed,
      pitch: first.pitch,
      charges,
    };
    if (first.advanced) req.advanced = first.advanced;
    if (first.kind !== 'auto') req.context = { utteranceId: first.id, userId: first.userId, channelId: first.channelId, meta: first.meta };
    return req;
  }

  #startSlot(guildId: string, g: GuildQueue, items: Utterance[]): void {
    const slot: Slot = { items, controller: new AbortController(), state: 'synthesizing', results: [] };
    g.slots.push(slot);
    if (items.length > 1) g.stats.merged += items.length - 1;
    for (const u of items) this.#progress(u, 'synthesizing');
    void this.#synthesizeSlot(guildId, g, slot).then(() => {
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

  async #synthesizeSlot(guildId: string, g: GuildQueue, slot: Slot): Promise<void> {
    const first = await this.#synthesizeItems(guildId, g, slot, slot.items);
    // One author over their allowance must not silence the others merged with them: retry alone.
    if (first.error && slot.items.length > 1 && first.error.code === 'budget_refused' && !slot.controller.signal.aborted) {
      for (const u of slot.items) slot.results.push(await this.#synthesizeItems(guildId, g, slot, [u]));
      return;
    }
    slot.results.push(first);
  }

  async #synthesizeItems(guildId: string, g: GuildQueue, slot: Slot, items: Utterance[]): Promise<ReadyUtterance> {
    const base = { id: items[0]!.id, guildId, items };
    try {
      const audio = await this.#synth.synthesize(this.#request(guildId, items), {
        signal: slot.controller.signal,
        onProgress: (p) => {
          for (const u of items) this.#progress(u, 'synthesizing', { detail: p.status });
        },
      });
      if (audio.fromCache) g.stats.cacheHits++;
      else if (!audio.shared) g.stats.requests++;
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
      if (ready.error) g.stats.failed += ready.items.length;
      else g.stats.delivered += ready.items.length;
      this.emit('delivered', { guildId, ready, at: this.#clock.now() });
      await this.#runSink(guildId, ready, sink, controller);
      g.current = null;
      ready.audio?.release?.();
      // A delivery cut short by close() is kept on disk and happens again after the restart.
      if (!this.#closed) this.#journal.remove(ready.items.map((u) => u.id));
    }
    this.#schedulePump(guildId);
  }

  async #runSink(guildId: string, ready: ReadyUtterance, sink: Sink, controller: AbortController): Promise<void> {
    // Watchdog: a sink that never settles would stall the guild silently (read-aloud-bots.md, issue 3).
    const watchdog = new AbortController();
    const limit = (ready.audio?.durationMs ?? 0) + this.#sinkTimeoutMs;
    const abandoned = this.#clock
      .sleep(limit, watchdog.signal)
      .then(() => {
        controller.abort(new SpeechError('aborted', { guildId, message: 'sink timed out' }));
        return this.#clock.sleep(this.#sinkTimeoutMs, watchdog.signal);
      })
      .then(() => this.#logger.warn({ guildId, id: ready.id }, 'sink did not settle after abort; moving on'))
      .catch(() => {});
    let settled: Promise<void>;
    try {
      settled = Promise.resolve(sink(ready, controller.signal));
    } catch (err) {
      settled = Promise.reject(err);
    }
    const done = settled.catch((error: unknown) => {
      this.#logger.warn({ guildId, id: ready.id, err: error instanceof Error ? error.message : String(error) }, 'sink failed');
      this.emit('sinkError', { guildId, error, ready });
    });
    await Promise.race([done, abandoned]);
    watchdog.abort();
  }
}
