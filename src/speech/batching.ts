import { serverChargeUser } from '../billing/policy.ts';
import type { Charge, SynthesisRequest } from './synthesis/synthesize.ts';
import { audienceOf, type Freshness, type Utterance } from './queue-types.ts';

// The batching rules: which pending utterances of an audience share one request to the service, when
// a lone message waits for company, when waiting auto-read is too old to speak, how far ahead of
// playback a guild may synthesise, and which parts of a batch are played from the
// cache as clips of their own and which are paid for in a request. Pure functions of the queue's
// state, so the scheduler (queue.ts) only applies their decisions and the rules are tested on
// their own.

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
export interface HeadState {
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
export interface BatchDecision {
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

// ---- keeping up: freshness ----

/** The fastest speech-up while behind: faster than this is no longer comfortable to follow. */
export const MAX_SPEED_UP = 1.5;
/** One step of the speed-up while behind. */
export const SPEED_STEP = 0.25;

/**
 * How an audience keeps up now: the staleness cut its auto-read is held to, the speed-up of its
 * requests, and while it is behind how long the newest message may wait (`catchUpMs`: the oldest
 * are dropped until it would be heard within this, `catchUp`).
 */
export interface KeepUp {
  cutMs: number;
  speed: number;
  catchUpMs?: number;
  /**
   * How far inside the cut a batch's later messages must start (a slow request must not get
   * audio already paid for dropped at the moment of speaking). Only what a batch carries is held to
   * it: a waiting message is dropped only when it could not be heard within the cut itself.
   */
  payMarginMs?: number;
}

/**
 * How an audience with `backlogMs` of speech waiting (playing, ready, synthesising and queued)
 * keeps up. Behind (the backlog cannot be heard within the horizon, or could not lately: `behind`),
 * the cut tightens with the backlog: from the hard limit to the horizon, and the oldest messages
 * are dropped (with the spoken summary) until the newest would be heard within `catchUpShare` of
 * the horizon (a quarter by default), so what is read is what people are talking about now; with
 * `speedUp` requests are read faster, step by step (`pace`: SPEED_STEP more each time the oldest had
 * to be dropped, from 1 + SPEED_STEP up to MAX_SPEED_UP). Otherwise the hard limit
 * (AUTO_READ_MAX_AGE_SECONDS) applies, and the normal speed.
 */
export function keepUp(
  backlogMs: number,
  behind: boolean,
  freshness: Freshness,
  maxAutoAgeMs: number,
  pace = 1 + SPEED_STEP,
  catchUpShare = 0.25,
): KeepUp {
  const horizon = Math.min(freshness.horizonMs, maxAutoAgeMs);
  if (!behind && backlogMs <= horizon) return { cutMs: maxAutoAgeMs, speed: 1 };
  const speed = freshness.speedUp ? Math.min(MAX_SPEED_UP, Math.max(1 + SPEED_STEP, pace)) : 1;
  return { cutMs: horizon, speed, catchUpMs: horizon * catchUpShare };
}

/**
 * How many auto messages at the head of `pending` to drop so the newest would start within
 * `catchUpMs` of being written: the head speaks at `speakAt`, each message after another at
 * `msPerChar`. Stops at an explicit request (never dropped).
 */
export function catchUp(
  pending: readonly Utterance[],
  speakAt: number,
  msPerChar: number,
  catchUpMs: number,
  rules: Pick<BatchRules, 'countChars'>,
): number {
  const newest = pending.at(-1);
  if (!newest) return 0;
  let ahead = 0;
  for (let i = 0; i < pending.length - 1; i++) ahead += readMs(pending[i]!, 0, msPerChar, rules);
  let k = 0;
  while (k < pending.length - 1 && pending[k]!.kind === 'auto' && speakAt + ahead - newest.enqueuedAt > catchUpMs) {
    ahead -= readMs(pending[k]!, 0, msPerChar, rules);
    k++;
  }
  return k;
}

/**
 * How long `u` takes to read, with `pause` characters after it, at `msPerChar` (a character's time
 * at speed 1, any speed-up applied): a line read at its own higher speed (a long message read fast,
 * src/speech/text/fast-reading.ts) takes that much less. Past the service's fastest speed a sped-up
 * line is read no faster, so such a line is estimated a little short.
 */
export function readMs(u: Utterance, pause: number, msPerChar: number, rules: Pick<BatchRules, 'countChars'>): number {
  return (msPerChar * (rules.countChars(u.text) + pause)) / (u.speed > 0 ? u.speed : 1);
}

/**
 * How many leading utterances of `run` (one request's worth) would have their own words start within
 * `cutMs` of being written, read back to back from `startAt` at `msPerChar` (already sped up):
 * a batch never carries an auto message it could only read past the cut. At least the first
 * (whose start is `startAt` itself: the head rules judged it already).
 */
export function withinCut(
  run: readonly Utterance[],
  startAt: number,
  msPerChar: number,
  cutMs: number,
  rules: Pick<BatchRules, 'countChars' | 'separator'>,
): number {
  if (run.length === 0) return 0;
  const pause = rules.countChars(separatorFor(run[0]!, rules.separator));
  let t = startAt;
  for (let i = 0; i < run.length; i++) {
    if (i > 0 && isStale(run[i]!, t, cutMs)) return i;
    t += readMs(run[i]!, pause, msPerChar, rules);
  }
  return run.length;
}

/**
 * How many leading utterances of `run` one batch may carry, read from `startAt` at `msPerChar` (sped
 * up by `keep`): each auto message's words within the cut, and while behind within the catch-up
 * target, so a batch never carries what could only be heard late (`withinCut`).
 */
export function fitsWithin(run: readonly Utterance[], startAt: number, msPerChar: number, keep: KeepUp, rules: BatchRules): number {
  const safeCutMs = keep.cutMs - (keep.payMarginMs ?? 0);
  // A head that can only just be heard in time goes alone: were its request slower than expected, the
  // whole sound would be dropped at the moment of speaking, and lines merged with it lost with it.
  if (run.length > 0 && isStale(run[0]!, startAt, safeCutMs)) return 1;
  return withinCut(run, startAt, msPerChar / keep.speed, Math.min(keep.catchUpMs ?? keep.cutMs, safeCutMs), rules);
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

/** Who pays for `u`'s characters: its author, or who pays for reading it again after a withdrawal (queue-withdraw.ts `reask`). */
const payer = (guildId: string, u: Utterance) => u.chargedTo ?? (u.paidOnce ? serverChargeUser(guildId) : u.userId);

/**
 * Each payer's characters, split by the text channel of the message they were spent for (a request
 * merging a voice session's messages may read several channels): the parts sum to the charge.
 */
class ChargeSplit {
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

// ---- clips: reuse before paying ----

/** One piece of an utterance that can be a clip of its own: the author's name prefix, the body after it, or all of it. */
export interface ClipPart {
  /** Index of the utterance in the run the plan was made for. */
  item: number;
  part: 'name' | 'body' | 'all';
  text: string;
}

/** A clip of a planned batch: a part played from the cache, or parts read by one request. */
export type PlannedClip = { cached: true; part: ClipPart } | { cached: false; parts: ClipPart[] };

export interface BatchPlan {
  /** How many utterances of the run the batch carries (0: none fits; a request is needed first). */
  take: number;
  /** What plays, in order. */
  clips: PlannedClip[];
  /** How many of the clips are requests. */
  requests: number;
}

export interface PlanLimits {
  /** Requests the batch may send: the grants in hand (0: only what the cache already has). */
  maxRequests: number;
  /** Bodies up to this many characters are common short lines, worth a clip of their own. */
  reusableChars: number;
  /**
   * Whether a name or short line comes back often enough to be worth a request of its own (the
   * cost is a request now, the saving its characters each later time). Default: always.
   */
  recurring?: (u: Utterance, text: string) => boolean;
  /** Most utterances in one batch (cached ones included). */
  maxItems: number;
}

/**
 * The parts of `u`: its name prefix and body apart when it has both, else all of it. Read right after
 * `previous` by the same author (a request reading one voice's messages together while requests are
 * scarce may put them side by side), its name is not read again: the body alone.
 */
export function clipParts(u: Utterance, item: number, previous?: Utterance): ClipPart[] {
  const prefix = u.kind === 'auto' && u.prefix && u.text.startsWith(u.prefix) ? u.prefix : '';
  const body = u.text.slice(prefix.length);
  if (prefix && body && previous?.userId === u.userId && previous.kind === 'auto') return [{ item, part: 'body', text: body }];
  if (!prefix || !body) return [{ item, part: 'all', text: u.text }];
  return [
    { item, part: 'name', text: prefix },
    { item, part: 'body', text: body },
  ];
}

interface Draft {
  clips: PlannedClip[];
  requests: number;
}

/**
 * Plans the batch for `run` (consecutive utterances that may share a request, oldest first):
 * which parts play from the cache and which are paid in a request. Parts the cache has are clips
 * (they cost neither characters nor a request). With a request to spare, a name or a common short
 * line is asked for alone, so the cache has it next time (it costs the same characters now and
 * none later); without one, uncached parts share the request, taking in the cached parts between
 * them when that is what keeps the batch to the requests in hand (requests are then the scarcer
 * resource). The batch ends before the utterance that would break `maxMessages` or `maxChars` of a
 * request, or need a request more than `maxRequests`; a first utterance longer than `maxChars`
 * still goes alone.
 */
export function planBatch(
  run: readonly Utterance[],
  isCached: (u: Utterance, text: string) => boolean,
  limits: PlanLimits,
  rules: BatchRules,
): BatchPlan {
  let draft: Draft = { clips: [], requests: 0 };
  let take = 0;
  for (const [i, u] of run.entries()) {
    if (i >= limits.maxItems) break;
    const next = addItem(draft, run, u, i, isCached, limits, rules);
    if (!next) break;
    if (i > 0 && !withinLimits(next, run, rules)) break;
    draft = next;
    take = i + 1;
  }
  return { take, clips: draft.clips, requests: draft.requests };
}

/** `draft` with utterance `u` added, or null when it would need a request more than allowed. */
function addItem(
  draft: Draft,
  run: readonly Utterance[],
  u: Utterance,
  i: number,
  isCached: (u: Utterance, text: string) => boolean,
  limits: PlanLimits,
  rules: BatchRules,
): Draft | null {
  const clips: PlannedClip[] = draft.clips.map((c) => (c.cached ? c : { cached: false, parts: [...c.parts] }));
  let requests = draft.requests;
  for (const part of clipParts(u, i, run[i - 1])) {
    if (isCached(u, part.text)) {
      clips.push({ cached: true, part });
      continue;
    }
    const reusable = isReusablePart(run, part, limits, rules);
    const last = clips.at(-1);
    const open = last && !last.cached ? last : undefined;
    const openReusable = open !== undefined && open.parts.length === 1 && isReusablePart(run, open.parts[0]!, limits, rules);
    const spare = requests < limits.maxRequests;
    if (spare && (reusable || !open || openReusable)) {
      clips.push({ cached: false, parts: [part] });
      requests++;
    } else if (open) {
      open.parts.push(part);
    } else {
      // The last request lies before some cached clips: take them into it (pay for them) rather than a second request.
      const at = clips.findLastIndex((c) => !c.cached);
      if (at < 0) return null;
      const absorbed = clips.splice(at + 1).map((c) => (c as { part: ClipPart }).part);
      (clips[at] as { parts: ClipPart[] }).parts.push(...absorbed, part);
    }
  }
  return { clips, requests };
}

function isReusablePart(run: readonly Utterance[], part: ClipPart, limits: PlanLimits, rules: BatchRules): boolean {
  if (limits.recurring && !limits.recurring(run[part.item]!, part.text)) return false;
  if (part.part === 'name') return true;
  return run[part.item]!.kind === 'auto' && rules.countChars(part.text) <= limits.reusableChars;
}

function withinLimits(draft: Draft, run: readonly Utterance[], rules: BatchRules): boolean {
  for (const c of draft.clips) {
    if (c.cached) continue;
    if (new Set(c.parts.map((p) => p.item)).size > rules.maxMessages) return false;
    if (rules.countChars(requestText(run, c.parts, rules)) > rules.maxChars) return false;
  }
  return true;
}

/** The text one request reads: its parts in order, with the pause between utterances (a name runs into its body). */
export function requestText(run: readonly Utterance[], parts: readonly ClipPart[], rules: Pick<BatchRules, 'separator'>): string {
  const sep = separatorFor(run[parts[0]!.item]!, rules.separator);
  let text = '';
  parts.forEach((p, k) => {
    if (k > 0 && parts[k - 1]!.item !== p.item) text += pauseAfter(parts[k - 1]!.text, sep);
    text += p.text;
  });
  return text;
}

/**
 * The request that reads `parts` of `run`: a whole single utterance is `batchRequest`'s (explicit
 * requests keep their context); otherwise each author is charged for their own parts and the pause
 * before each of their utterances.
 */
export function clipRequest(
  guildId: string,
  run: readonly Utterance[],
  parts: readonly ClipPart[],
  rules: Pick<BatchRules, 'separator' | 'countChars'>,
): SynthesisRequest {
  const items = [...new Set(parts.map((p) => p.item))].map((i) => run[i]!);
  if (items.length === 1 && parts.length === 1 && parts[0]!.part === 'all') return batchRequest(guildId, items, rules);
  const first = run[parts[0]!.item]!;
  const sep = separatorFor(first, rules.separator);
  const split = new ChargeSplit();
  parts.forEach((p, k) => {
    const pause = k > 0 && parts[k - 1]!.item !== p.item ? rules.countChars(pauseAfter(parts[k - 1]!.text, sep)) : 0;
    const u = run[p.item]!;
    split.add(payer(guildId, u), u.channelId, rules.countChars(p.text) + pause);
  });
  return {
    guildId,
    endpoint: 'standard',
    text: requestText(run, parts, rules),
    voice: first.voice,
    speed: first.speed,
    pitch: first.pitch,
    charges: split.charges(guildId, 'standard'),
    audience: audienceOf(first),
  };
}

/** The request that plays one part alone from the cache, if it is there (same voice and settings as its utterance). */
export function partRequest(guildId: string, u: Utterance, text: string): SynthesisRequest {
  return {
    guildId,
    endpoint: 'standard',
    text,
    voice: u.voice,
    speed: u.speed,
    pitch: u.pitch,
    charges: [{ guildId, userId: u.userId, endpoint: 'standard', chars: 0 }],
  };
}

/** A delivery's clips, with the utterances each carries a part of. */
export interface TimedClip {
  durationMs: number;
  items: readonly Utterance[];
}

/**
 * The staleness cut at the moment of speaking (nothing is heard later than the cut): clips
 * played back to back from `at`, each utterance's words starting in its first clip, after the
 * utterances that clip reads before it (in proportion to their characters: the service reads at an
 * even pace). An auto utterance whose words would start past the cut is dropped, and with it every
 * clip that carries a part of it (a request reads its parts as one sound); an utterance that loses a
 * clip is dropped too. Returns the indices of the clips kept and the utterances dropped.
 */
export function cutAtSpeaking(clips: readonly TimedClip[], at: number, maxAutoAgeMs: number): { keep: number[]; dropped: Utterance[] } {
  const dropped = new Set<Utterance>();
  for (;;) {
    let t = at;
    const started = new Set<Utterance>();
    let changed = false;
    for (const clip of clips) {
      if (clip.items.some((u) => dropped.has(u))) {
        for (const u of clip.items) {
          if (dropped.has(u)) continue;
          dropped.add(u);
          changed = true;
        }
        continue;
      }
      const total = clip.items.reduce((n, u) => n + u.text.length, 0) || 1;
      let before = 0;
      for (const u of clip.items) {
        const wordsAt = t + (clip.durationMs * before) / total;
        before += u.text.length;
        if (started.has(u)) continue;
        started.add(u);
        if (isStale(u, wordsAt, maxAutoAgeMs)) {
          dropped.add(u);
          changed = true;
        }
      }
      if (!clip.items.some((u) => dropped.has(u))) t += clip.durationMs;
    }
    if (!changed) break;
  }
  const keep = clips.flatMap((c, i) => (c.items.some((u) => dropped.has(u)) ? [] : [i]));
  return { keep, dropped: [...dropped] };
}
