import type { Charge, SynthesisRequest } from './synthesize.ts';
import type { Utterance } from './queue-types.ts';

// The batching rules: which pending utterances of a guild share one request to the service, when
// a lone message waits for company, when waiting auto-read is too old to speak, and how far ahead
// of playback a guild may synthesise. Pure functions of the queue's state, so the scheduler
// (queue.ts) only applies their decisions and the rules can change (issue 12: batch at the moment
// of the grant, pace the budget) and be tested on their own.

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

/** What to do with the head of a guild's queue now. */
export interface BatchDecision {
  /** How many auto-read items at the head waited too long: dropped, never spoken. */
  stale: number;
  /** How many items after those form the next request (0: none now). */
  take: number;
  /** Set when a lone message is held for company: look again at this time. */
  holdUntil?: number;
}

/**
 * The next request of a guild whose queue is `pending` (oldest first): the stale auto-read at the
 * head goes; then a lone explicit request (/say, /narrate), or up to `maxMessages` consecutive
 * auto messages that may share one request, within `maxChars`. While the guild is `playing`, a
 * lone auto message cannot be heard before the playback ends anyway: it is held up to `holdMs`
 * so the next lines of a burst merge into the same request. An idle guild speaks at once.
 */
export function nextBatch(pending: readonly Utterance[], state: { now: number; playing: boolean }, rules: BatchRules): BatchDecision {
  let stale = 0;
  while (pending[stale]?.kind === 'auto' && state.now - pending[stale]!.enqueuedAt > rules.maxAutoAgeMs) stale++;
  const head = pending[stale];
  if (!head) return { stale, take: 0 };
  if (head.kind !== 'auto' || head.advanced) return { stale, take: 1 };
  if (pending.length === stale + 1) {
    const holdUntil = head.enqueuedAt + rules.holdMs;
    if (state.playing && holdUntil > state.now) return { stale, take: 0, holdUntil };
    return { stale, take: 1 };
  }
  const pause = rules.countChars(separatorFor(head, rules.separator));
  let chars = rules.countChars(head.text);
  let take = 1;
  while (take < rules.maxMessages) {
    const next = pending[stale + take];
    if (!next || !mergeable(head, next)) break;
    chars += pause + rules.countChars(next.text);
    if (chars > rules.maxChars) break;
    take++;
  }
  return { stale, take };
}

/** Whether `b` may be read in the same request as `a`: auto-read with the same voice and settings. */
export function mergeable(a: Utterance, b: Utterance): boolean {
  return b.kind === 'auto' && !b.advanced && a.voice === b.voice && a.speed === b.speed && a.pitch === b.pitch && a.lang === b.lang;
}

const CJK = /[\u3040-\u30ff\u3400-\u9fff\uff66-\uff9f]/u;

/** The pause between merged messages: by the first message's `lang`, else by its script. */
export function separatorFor(u: Utterance, separators: Readonly<Record<string, string>>): string {
  if (u.lang !== undefined && separators[u.lang] !== undefined) return separators[u.lang]!;
  if (u.lang === undefined && !CJK.test(u.text) && separators.en !== undefined) return separators.en;
  return separators.default ?? '。';
}

/** The request that reads `items` (one batch) in order; each author is charged for their own text and the pause before it. */
export function batchRequest(guildId: string, items: readonly Utterance[], rules: Pick<BatchRules, 'separator' | 'countChars'>): SynthesisRequest {
  const first = items[0]!;
  const sep = separatorFor(first, rules.separator);
  const byUser = new Map<string, number>();
  items.forEach((u, i) => {
    const chars = rules.countChars(u.text) + (i > 0 ? rules.countChars(sep) : 0);
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

/**
 * Whether a guild may start synthesising another batch: at most `prefetch` batches synthesising
 * or ready ahead of playback, at most `maxInFlight` of them synthesising (under load a second
 * request would wait on the shared rate budget holding one message, where waiting lets every
 * message that arrives meanwhile merge into the next request).
 */
export function mayStartBatch(batches: { synthesizing: number; ready: number }, limits: { prefetch: number; maxInFlight: number }): boolean {
  return batches.synthesizing + batches.ready < limits.prefetch && batches.synthesizing < limits.maxInFlight;
}

/**
 * Whether a member with `waitingChars` already queued may add `chars` more (issue 9 §6: counted
 * in characters, so ordinary chat that merges into a few requests is never refused, while one
 * member cannot fill a guild's queue). A member with nothing waiting is always accepted.
 */
export function admits(waitingChars: number, chars: number, maxChars: number): boolean {
  return waitingChars === 0 || waitingChars + chars <= maxChars;
}
