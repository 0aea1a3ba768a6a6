import { countChars } from '../tts/chars.ts';
import { systemClock, type Clock } from '../util/clock.ts';
import type { GrantingLimiter } from '../tts/limiter/limiter.ts';
import type { AdvancedParams, ReadyAudio, Synthesizer } from './synthesis/synthesize.ts';

// The speech scheduler's vocabulary (queue.ts re-exports all of it): what it queues (utterances:
// accepted messages and requests; src/discord turns Discord objects into UtteranceInput), what it
// delivers, the events it emits, and its options with their defaults. The batching rules are in
// batching.ts.

export type UtteranceKind = 'auto' | 'say' | 'narrate';

export interface UtteranceInput {
  guildId: string;
  userId: string;
  channelId: string;
  kind: UtteranceKind;
  text: string;
  /**
   * The author's name as read before the message (names.ts), when `text` starts with it: the
   * scheduler may play it as a cached clip of its own instead of paying for it again.
   */
  prefix?: string;
  lang?: string;
  voice: string;
  speed: number;
  pitch: number;
  /**
   * The gain it is played at in voice (its author's volume, 0 to 2; absent = 1). Applied by the
   * player to the decoded audio: never part of the request or the cache key, so one cached clip
   * serves every volume. Only utterances of the same volume share a request.
   */
  volume?: number;
  /** Present for the advanced (Beta) endpoint; `narrate` utterances need it. */
  advanced?: AdvancedParams;
  /** Anything the bot needs back at delivery (message id, interaction token, ...). */
  meta?: unknown;
  /**
   * Who may hear or read it (`voiceAudience`, `textAudience`): one request carries the messages of
   * one audience only, so one channel's text never reaches another channel in a merged MP3.
   * Without it, its own text channel's (merged only with messages of that channel).
   */
  audience?: string;
}

/** The audience of the guild's voice session in `voiceChannelId`: everyone there hears it. */
export function voiceAudience(voiceChannelId: string): string {
  return `voice:${voiceChannelId}`;
}

/** The audience of text channel `channelId`: the audio is posted there as a file. */
export function textAudience(channelId: string): string {
  return `text:${channelId}`;
}

/** The voice channel of a voice session's audience (`voiceAudience`), or null for a text channel's. */
export function voiceChannelOf(audience: string): string | null {
  return audience.startsWith('voice:') ? audience.slice('voice:'.length) : null;
}

/** The audience `u` was queued for (its own text channel's when none was said). */
export function audienceOf(u: Pick<UtteranceInput, 'audience' | 'channelId'>): string {
  return u.audience ?? textAudience(u.channelId);
}

export interface Utterance extends UtteranceInput {
  id: string;
  enqueuedAt: number;
  /**
   * Its author already paid for it in a request whose audio was discarded (a message deleted or
   * edited beside it, queue-withdraw.ts): the request that reads it again is charged to the server.
   */
  paidOnce?: true;
  /** Read again after a later withdrawal beside it: the member whose change discarded it pays, not the server again. */
  chargedTo?: string;
}

interface ReadyBase {
  /** Delivery id (the first item's id). */
  readonly id: string;
  readonly guildId: string;
  /** The original utterances merged into this audio, in message order. */
  readonly items: Utterance[];
  /**
   * With audio made of clips (`audio.parts`): where each item starts, in ms from the start of the
   * audio, in `items` order. Absent: every item starts at 0 (one merged sound).
   */
  readonly starts?: readonly number[];
}

/**
 * What the scheduler delivers, never changed once made (a cut or a withdrawal makes a new one):
 * spoken audio, or a failure delivered in its place in the order so the author can be told.
 * Audio made of clips says which utterances each clip reads (`carries`, parallel to `audio.parts`;
 * absent: one sound reading every item), so a staleness cut drops whole clips.
 */
export type ReadyUtterance =
  | (ReadyBase & { readonly audio: ReadyAudio; readonly carries?: readonly (readonly Utterance[])[]; readonly error?: undefined })
  | (ReadyBase & { readonly audio?: undefined; readonly carries?: undefined; readonly error: Error & { code?: string } });

/** Plays or posts one ready utterance; must settle when done (and soon after `signal` aborts). */
export type Sink = (item: ReadyUtterance, signal: AbortSignal) => Promise<void>;

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

/** Where the scheduler gets rate grants before it forms a batch (the TTS client's limiter). */
export type { GrantingLimiter } from '../tts/limiter/limiter.ts';

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
 * Both must be quick and must not throw (src/speech/queue-store.ts). `add` returns false when it
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

export interface CoalesceOptions {
  maxChars?: number;
  maxMessages?: number;
  /** How long a lone auto message may wait for company while its guild is playing. */
  holdMs?: number;
  /**
   * While the rate budget is under pressure, how long after its first message was written that
   * message's words may start when a run of auto messages that could still grow waits for company
   * before it asks for a grant (batching.ts `isRipe`); at most 70% of the server's horizon.
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
  /** ...and this many grants made within it (queue.ts `#scarce`). */
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
   * its auto-read is cut to and whether its requests may speed up (batching.ts `keepUp`). Asked at
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
