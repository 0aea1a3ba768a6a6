import { serverChargeUser } from '../../../billing/policy.ts';
import type { Charge, SynthesisRequest } from '../../synthesis/synthesize.ts';
import { SCHEDULER_DEFAULTS, type SchedulerOptions } from '../options.ts';
import { audienceOf, type Utterance } from '../utterance.ts';

// The batching rules that merge: which pending utterances of an audience share one request to the
// service, when a lone message waits for company, when waiting auto-read is too old to speak, how
// far ahead of playback an audience may synthesise, and what one merged request reads and who pays
// for it. Pure functions of the queue's state, so the scheduler (scheduler.ts, audience-queue.ts)
// only applies their decisions and the rules are tested on their own. Keeping up with a busy
// channel is keeping-up.ts; playing parts from the cache is reuse.ts.

export interface BatchRules {
  /** Most messages merged into one request. */
  maxMessages: number;
  /** Most characters of a merged request, pauses included; a longer single message goes alone. */
  maxChars: number;
  /** How long a lone auto message may wait for company while its guild is playing. */
  holdMs: number;
  /** Auto-read that waited longer than this when its turn comes is dropped (say/narrate never are). */
  maxAutoAgeMs: number;
  /** Pause inserted between merged messages, by `lang`; `default` for the rest. */
  separator: Readonly<Record<string, string>>;
  /** Counts characters the way the service does. */
  countChars: (text: string) => number;
}

/** The guild's state when the next batch is considered. */
interface HeadState {
  now: number;
  /** Whether the guild is playing (a lone auto message may wait for company). */
  playing: boolean;
  /**
   * When this batch would start speaking at the earliest (after what plays and waits ahead of it,
   * and a request's latency); the staleness cut is judged at that moment. Default `now`.
   */
  speakAt?: number;
  /** The staleness cut for this audience now (`keepUp`); default `rules.maxAutoAgeMs`. */
  cutMs?: number;
}

/** What to do with the head of a guild's queue now. */
interface BatchDecision {
  /** How many auto-read items at the head waited too long: dropped, never spoken. */
  stale: number;
  /** How many items after those form the next request (0: none now). */
  take: number;
  /** Set when a lone message is held for company: look again at this time. */
  holdUntil?: number;
}

/**
 * How many utterances from `start` may share a batch with the one there (consecutive auto-read
 * with the same voice, settings and audience), at most `max`: what `planBatch` may draw on.
 */
export function mergeableRun(pending: readonly Utterance[], start: number, max: number): number {
  const head = pending[start];
  if (!head) return 0;
  if (head.kind !== 'auto' || head.advanced) return 1;
  let n = 1;
  while (n < max && pending[start + n] && mergeable(head, pending[start + n]!)) n++;
  return n;
}

/**
 * The next request of a guild whose queue is `pending` (oldest first): the auto-read at the head
 * that would be past the staleness cut when it could start speaking (`speakAt`) goes, unpaid; then
 * a lone explicit request (/say, /narrate), or up to `maxMessages` consecutive auto messages that
 * may share one request, within `maxChars`. While the guild is `playing`, a lone auto message
 * cannot be heard before the playback ends anyway: it is held up to `holdMs` so the next lines of
 * a burst merge into the same request. An idle guild speaks at once.
 */
export function nextBatch(pending: readonly Utterance[], state: HeadState, rules: BatchRules): BatchDecision {
  const speakAt = Math.max(state.now, state.speakAt ?? state.now);
  const cutMs = Math.min(state.cutMs ?? rules.maxAutoAgeMs, rules.maxAutoAgeMs);
  let stale = 0;
  while (pending[stale]?.kind === 'auto' && isStale(pending[stale]!, speakAt, cutMs)) stale++;
  const head = pending[stale];
  if (!head) return { stale, take: 0 };
  if (head.kind !== 'auto' || head.advanced) return { stale, take: 1 };
  if (pending.length === stale + 1) {
    const holdUntil = head.enqueuedAt + rules.holdMs;
    if (state.playing && holdUntil > state.now) return { stale, take: 0, holdUntil };
    return { stale, take: 1 };
  }
  const sep = separatorFor(head, rules.separator);
  let chars = rules.countChars(head.text);
  let take = 1;
  while (take < rules.maxMessages) {
    const next = pending[stale + take];
    if (!next || !mergeable(head, next)) break;
    chars += rules.countChars(pauseAfter(pending[stale + take - 1]!.text, sep)) + rules.countChars(next.text);
    if (chars > rules.maxChars) break;
    take++;
  }
  return { stale, take };
}

/**
 * Whether the head of a guild's queue is worth a request while requests are scarce (the rate
 * budget is under pressure): a grant should carry as much as it can, so a run of
 * auto-read that could still grow waits for company, up to `dueMs` after its first message. It is
 * ripe when it cannot grow (another voice or an explicit request follows it), when it is full
 * (`maxMessages`, or `maxChars` nearly reached), or when its first message is due.
 */
export function isRipe(pending: readonly Utterance[], now: number, dueMs: number, rules: BatchRules): boolean {
  const head = pending[0];
  if (!head) return false;
  if (head.kind !== 'auto' || head.advanced) return true;
  const run = mergeableRun(pending, 0, rules.maxMessages);
  if (run < pending.length) return true;
  if (run >= rules.maxMessages) return true;
  const sep = separatorFor(head, rules.separator);
  const chars = rules.countChars(batchText(pending.slice(0, run), sep));
  // A typical line more would not fit: the request is as full as it gets.
  if (chars + rules.countChars(sep) + chars / run > rules.maxChars) return true;
  return now - head.enqueuedAt >= dueMs;
}

/** Whether auto-read `u` would be read later than the cut if it started speaking at `at` (say/narrate never are). */
export function isStale(u: Utterance, at: number, maxAutoAgeMs: number): boolean {
  return u.kind === 'auto' && at - u.enqueuedAt > maxAutoAgeMs;
}

/**
 * Whether `b` may be read in the same request as `a`: auto-read with the same voice and settings,
 * for the same audience (one voice session, or one text channel whose reply gets the MP3).
 */
export function mergeable(a: Utterance, b: Utterance): boolean {
  if (audienceOf(a) !== audienceOf(b)) return false;
  const sameSound = a.voice === b.voice && a.speed === b.speed && a.pitch === b.pitch && (a.volume ?? 1) === (b.volume ?? 1);
  return b.kind === 'auto' && !b.advanced && sameSound && a.lang === b.lang;
}

const CJK = /[\u3040-\u30ff\u3400-\u9fff\uff66-\uff9f]/u;

/** The pause between merged messages: by the first message's `lang`, else by its script. */
export function separatorFor(u: Utterance, separators: Readonly<Record<string, string>>): string {
  if (u.lang !== undefined && separators[u.lang] !== undefined) return separators[u.lang]!;
  if (u.lang === undefined && !CJK.test(u.text) && separators.en !== undefined) return separators.en;
  return separators.default ?? '。';
}

/** What ends a sentence already: after it, the pause's mark would be read twice ("ナイス！。"). */
const SENTENCE_END = /[。．！？!?…‥.]$/u;
/** A sentence end that also parts it from what follows without a space (full-width marks, the ellipsis). */
const SPACELESS_END = /[。．！？…‥]$/u;

/**
 * The pause read between `before` (the text of the merged utterance before) and the next one:
 * `sep`, one character (the price of a merge), or when `before` already ends a sentence no second
 * mark: nothing after a Japanese pause or a full-width mark, a space between words otherwise
 * ("thanks! gg"), so a message that ends with its own "！" or "?" is not read with two marks.
 */
export function pauseAfter(before: string, sep: string): string {
  if (!SENTENCE_END.test(before)) return sep;
  return SPACELESS_END.test(before) || /^[。．]/u.test(sep) ? '' : ' ';
}

/** Who pays for `u`'s characters: its author, or who pays for reading it again after a withdrawal (../withdraw.ts `reask`). */
export const payer = (guildId: string, u: Utterance) => u.chargedTo ?? (u.paidOnce ? serverChargeUser(guildId) : u.userId);

/**
 * Each payer's characters, split by the text channel of the message they were spent for (a request
 * merging a voice session's messages may read several channels): the parts sum to the charge.
 */
export class ChargeSplit {
  readonly #byUser = new Map<string, Map<string, number>>();

  add(userId: string, channelId: string, chars: number): void {
    const byChannel = this.#byUser.get(userId) ?? new Map<string, number>();
    byChannel.set(channelId, (byChannel.get(channelId) ?? 0) + chars);
    this.#byUser.set(userId, byChannel);
  }

  charges(guildId: string, endpoint: Charge['endpoint']): Charge[] {
    return [...this.#byUser].map(([userId, byChannel]) => {
      const channels = [...byChannel].map(([channelId, chars]) => ({ channelId, chars }));
      return { guildId, userId, endpoint, chars: channels.reduce((n, c) => n + c.chars, 0), channels };
    });
  }
}

/** `items`' texts read as one request, with the pause between them (`pauseAfter`). */
function batchText(items: readonly Utterance[], sep: string): string {
  return items.map((u, i) => (i > 0 ? pauseAfter(items[i - 1]!.text, sep) : '') + u.text).join('');
}

/** The request that reads `items` (one batch) in order; each author is charged for their own text and the pause before it. */
export function batchRequest(
  guildId: string,
  items: readonly Utterance[],
  rules: Pick<BatchRules, 'separator' | 'countChars'>,
): SynthesisRequest {
  const first = items[0]!;
  const sep = separatorFor(first, rules.separator);
  const split = new ChargeSplit();
  items.forEach((u, i) =>
    split.add(
      payer(guildId, u),
      u.channelId,
      rules.countChars(u.text) + (i > 0 ? rules.countChars(pauseAfter(items[i - 1]!.text, sep)) : 0),
    ),
  );
  const endpoint = first.advanced ? 'advanced' : 'standard';
  const charges = split.charges(guildId, endpoint);
  const req: SynthesisRequest = {
    guildId,
    endpoint,
    text: batchText(items, sep),
    voice: first.voice,
    speed: first.speed,
    pitch: first.pitch,
    charges,
    audience: audienceOf(first),
  };
  if (first.advanced) req.advanced = first.advanced;
  if (first.kind !== 'auto') req.context = { utteranceId: first.id, userId: first.userId, channelId: first.channelId, meta: first.meta };
  return req;
}

/**
 * Whether a guild may start synthesising another batch: at most `prefetch` batches synthesising
 * or ready ahead of playback, at most `maxInFlight` of them synthesising (under load a second
 * request would wait on the shared rate budget holding one message, where waiting lets every
 * message that arrives meanwhile merge into the next request).
 */
export function mayStartBatch(
  batches: { synthesizing: number; ready: number },
  limits: { prefetch: number; maxInFlight: number },
): boolean {
  return batches.synthesizing + batches.ready < limits.prefetch && batches.synthesizing < limits.maxInFlight;
}

/**
 * Whether a member with `waitingChars` already queued may add `chars` more (counted
 * in characters, so ordinary chat that merges into a few requests is never refused, while one
 * member cannot fill a guild's queue). A member with nothing waiting is always accepted.
 */
export function admits(waitingChars: number, chars: number, maxChars: number): boolean {
  return waitingChars === 0 || waitingChars + chars <= maxChars;
}

/** The batching rules a scheduler with `options` applies. */
export function batchRules(options: Pick<SchedulerOptions, 'coalesce' | 'maxAutoAgeMs' | 'countChars'>): BatchRules {
  const coalesce = options.coalesce ?? {};
  return {
    maxMessages: coalesce.maxMessages ?? SCHEDULER_DEFAULTS.coalesce.maxMessages,
    maxChars: coalesce.maxChars ?? SCHEDULER_DEFAULTS.coalesce.maxChars,
    holdMs: coalesce.holdMs ?? SCHEDULER_DEFAULTS.coalesce.holdMs,
    maxAutoAgeMs: options.maxAutoAgeMs ?? SCHEDULER_DEFAULTS.maxAutoAgeMs,
    separator: { ...SCHEDULER_DEFAULTS.coalesce.separator, ...coalesce.separator },
    countChars: options.countChars ?? SCHEDULER_DEFAULTS.countChars,
  };
}
