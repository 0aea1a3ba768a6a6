import { countChars } from '../../tts/chars.ts';
import type { GrantingLimiter } from '../../tts/limiter/limiter.ts';
import { type Clock, systemClock } from '../../util/clock.ts';
import type { Synthesizer } from '../synthesis/synthesize.ts';
import type { ReadyUtterance, Utterance, UtteranceKind } from './utterance.ts';

// The speech scheduler's options with their defaults, what it tells (events, progress, counters)
// and what it writes to (the journal, the logger). What it queues and delivers is utterance.ts.

/** `not_saved`: the journal could not keep it (the disk refuses writes), so it is not accepted. */
export type EnqueueResult =
  { ok: true; id: string; position: number } | { ok: false; reason: 'member_queue_full' | 'not_saved' | 'closed'; limit?: number };

export type ProgressState = 'queued' | 'synthesizing' | 'ready' | 'failed';

export interface ProgressEvent {
  id: string;
  guildId: string;
  audience: string;
  userId: string;
  kind: UtteranceKind;
  state: ProgressState;
  /** 1 = next to speak; present on 'queued'. */
  position?: number;
  /** Advanced job status while synthesising ('created', 'pending', 'running', ...). */
  detail?: string;
  error?: Error & { code?: string };
}

/** One audience's counters (`stats`). */
export interface AudienceStats {
  guildId: string;
  /** `voice:<channelId>` or `text:<channelId>` (audienceOf). */
  audience: string;
  queued: number;
  synthesizing: number;
  ready: number;
  playing: boolean;
  /** When the longest-waiting utterance not yet delivered arrived (clock time); null when none waits. */
  oldestAt: number | null;
  /** Utterances delivered with their audio (failures told in their place are not counted), since start. */
  delivered: number;
  /** Auto-read dropped as too old (when its turn came, or at the moment of speaking), since start (shown by /usage). */
  dropped: number;
}

export interface SchedulerEvents {
  progress: [ProgressEvent];
  /**
   * Auto-read items that would be read later than maxAutoAgeMs after they arrived (counted in
   * stats): before a request was paid for them ('queue'), or at the moment of speaking ('speaking').
   */
  dropped: [{ guildId: string; audience: string; items: Utterance[]; reason: 'too_old'; at?: 'queue' | 'speaking' }];
  /** Synthesis finished (or failed) for a batch; `at` is the clock time. */
  ready: [{ guildId: string; audience: string; ready: ReadyUtterance; at: number }];
  sinkError: [{ guildId: string; audience: string; error: unknown; ready: ReadyUtterance }];
  /** Everything not yet delivered of one audience was dropped by clear() or clearGuild(); `reason` is the caller's. */
  cleared: [{ guildId: string; audience: string; count: number; items: Utterance[]; reason: string | undefined }];
}

/**
 * Where accepted utterances are kept until they are finished, so a crash loses none.
 * `add` runs when an utterance is accepted, `remove` when it is spoken (its delivery settled),
 * failed and told, dropped or cleared; never on close(), so what a shutdown interrupts is kept.
 * Both must be quick and must not throw (journal.ts). `add` returns false when it
 * cannot keep the utterance (the disk refuses writes): the scheduler then refuses it.
 */
export interface QueueJournal {
  add(u: Utterance): boolean;
  remove(ids: readonly string[]): void;
}

export interface Logger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

interface CoalesceOptions {
  maxChars?: number;
  maxMessages?: number;
  /** How long a lone auto message may wait for company while its guild is playing. */
  holdMs?: number;
  /**
   * While the rate budget is under pressure, how long after its first message was written that
   * message's words may start when a run of auto messages that could still grow waits for company
   * before it asks for a grant (batching/merging.ts `isRipe`); at most 70% of the server's horizon.
   */
  pressureHoldMs?: number;
  /** Pause inserted between merged messages, by `lang`; `default` for the rest. */
  separator?: Record<string, string>;
}

/** What a server chose for freshness (/reading freshness and speed-up). */
export interface Freshness {
  /** When an audience is behind, what could not be heard within this long of being written is dropped. */
  horizonMs: number;
  /** Speech may speed up (requests only, to at most 1.5x) while the audience is behind. */
  speedUp: boolean;
}

/** The constants of the scheduler's policy under scarce requests (their defaults: policy.ts `POLICY_DEFAULTS`). */
export interface SchedulerPolicy {
  /** Requests count as about to be scarce with this many audiences written to within `activeMs`... */
  scarceAudiences: number;
  /** ...and this many grants made within it (pacing.ts `scarce`). */
  scarceGrants: number;
  activeMs: number;
  /** A run waiting for company while requests are scarce waits at most this share of the horizon. */
  holdShare: number;
  /** While requests are scarce, a channel still talking drops what would be heard later than this many horizons. */
  scarceCutHorizons: number;
  /** What a message heard past the horizon (within the cut) adds to a grant's worth, against 1 for a fresh one: a channel gone quiet... */
  staleWorth: number;
  /** ...and one still talking. */
  staleWorthTalking: number;
  /** How long an audience's own reading (and what it was offered) counts when grants are shared. */
  spokenWindowMs: number;
  /**
   * How strongly a grant goes to the audience that read the least of what it was offered lately:
   * its worth is multiplied by ((1 + prior) / (share read + prior)) ^ fairness (`grantWorth`).
   */
  fairness: number;
  fairnessPrior: number;
  /** A voice channel behind (bound by playback) drops its oldest until the newest would be heard within this share of the horizon. */
  catchUpShare: number;
  /**
   * A batch is formed so its words would start this much within the cut it is held to when it
   * plays, at most `payMarginShare` of the cut: a request a little slower than expected does not get
   * its audio, already paid for, thrown away for being a moment late.
   */
  payMarginMs: number;
  payMarginShare: number;
  /**
   * A line set aside is read in a lull only if its words would start at least this share of a
   * request's expected latency inside the cut; closer, a request a little slower than usual gets its
   * audio, paid for, dropped at the moment of speaking, so it waits unpaid until it is past the cut.
   */
  lullMarginShare: number;
  /** A name or short line is asked for alone (with a request to spare) once it was read this many times: by then it keeps coming back. */
  reuseAfterReads: number;
  /** While requests are scarce, a request may read this far ahead in its audience's queue for messages in its voice (ms after the oldest waiting). */
  groupWindowMs: number;
}

export interface SchedulerOptions {
  synthesize: Synthesizer;
  clock?: Clock;
  prefetch?: number;
  /**
   * Requests per audience synthesising at once (<= prefetch). 1 by default: under load a second
   * request would wait on the shared rate budget holding one message, where waiting lets every
   * message that arrives meanwhile merge into the next request (bench:queue shows the difference).
   */
  maxInFlight?: number;
  /**
   * Characters one member may have waiting in a guild, every audience together (characters, not lines, so a
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
  /**
   * The rate budget the synthesizer's client spends (the same limiter). With it, an audience's batch is
   * formed when a grant is in hand, so everything that arrived during the wait rides along,
   * and a grant to spare lets names and short lines be asked for as clips of their
   * own. Without it, batches are formed at once and the client waits for its own grant.
   */
  limiter?: GrantingLimiter;
  /** Bodies up to this many characters (common short lines) are worth a clip of their own. */
  reusableChars?: number;
  /**
   * A server's freshness (/reading freshness and speed-up): when an audience is behind, the horizon
   * its auto-read is cut to and whether its requests may speed up (batching/keeping-up.ts `keepUp`). Asked at
   * each decision, so a change applies at once. `maxAutoAgeMs` stays the hard limit above it.
   */
  freshness?: (guildId: string) => Freshness;
  /** The policy's constants under scarce requests (policy.ts `POLICY_DEFAULTS`); the bench's sensitivity mode varies them. */
  policy?: Partial<SchedulerPolicy>;
}

// One character each: a pause is the price of merging two messages into one request (what the
// service charges for it). English takes the ellipsis, read as a pause, not ". " (two characters).
const DEFAULT_SEPARATORS: Record<string, string> = { ja: '。', en: '…', default: '。' };

/** Defaults of every option (src/config.ts takes MAX_PENDING_PER_MEMBER's from here). */
export const SCHEDULER_DEFAULTS = {
  clock: systemClock,
  prefetch: 2,
  maxInFlight: 1,
  maxPendingCharsPerMember: 500,
  maxAutoAgeMs: 60_000,
  coalesce: { maxChars: 200, maxMessages: 5, holdMs: 1_500, pressureHoldMs: 14_000, separator: DEFAULT_SEPARATORS },
  countChars,
  sinkTimeoutMs: 30_000,
  logger: { info() {}, warn() {} },
  journal: { add: () => true, remove() {} },
  reusableChars: 8,
  freshness: (): Freshness => ({ horizonMs: 20_000, speedUp: true }),
} as const satisfies Required<Omit<SchedulerOptions, 'synthesize' | 'limiter' | 'policy'>>;
