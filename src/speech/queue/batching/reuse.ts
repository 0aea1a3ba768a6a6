import type { SynthesisRequest } from '../../synthesis/synthesize.ts';
import { audienceOf, type Utterance } from '../utterance.ts';
import { batchRequest, type BatchRules, ChargeSplit, pauseAfter, payer, separatorFor } from './merging.ts';

// The batching rules that reuse: which parts of a batch play from the cache as clips of their own
// and which are paid for in a request (a name or a common short line asked for alone so the cache
// has it next time), the requests that read them, and how often each part was read lately.

/** One piece of an utterance that can be a clip of its own: the author's name prefix, the body after it, or all of it. */
interface ClipPart {
  /** Index of the utterance in the run the plan was made for. */
  item: number;
  part: 'name' | 'body' | 'all';
  text: string;
}

/** A clip of a planned batch: a part played from the cache, or parts read by one request. */
type PlannedClip = { cached: true; part: ClipPart } | { cached: false; parts: ClipPart[] };

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
function requestText(run: readonly Utterance[], parts: readonly ClipPart[], rules: Pick<BatchRules, 'separator'>): string {
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

/** The cache identity of one part as spoken by `u`'s voice and settings. */
export function partKey(u: Utterance, text: string): string {
  return JSON.stringify([u.voice, u.speed, u.pitch, text]);
}

/** Parts remembered for their reading counts (the oldest forgotten first). */
const MAX_REMEMBERED_PARTS = 10_000;

/** How often each part (`partKey`) was read lately, across audiences: whether a name or a short line is worth a clip of its own. */
export class ReadCounts {
  readonly #reads = new Map<string, number>();
  readonly #after: number;

  /** A part read `reuseAfterReads` times is recurring (policy.ts `reuseAfterReads`). */
  constructor(reuseAfterReads: number) {
    this.#after = reuseAfterReads;
  }

  /** `items` were taken into a batch: each of their parts read once more. */
  count(items: readonly Utterance[]): void {
    const reads = this.#reads;
    for (const [i, u] of items.entries()) {
      for (const p of clipParts(u, i)) {
        const key = partKey(u, p.text);
        const n = (reads.get(key) ?? 0) + 1;
        reads.delete(key); // to the back: the most recent
        reads.set(key, n);
      }
    }
    while (reads.size > MAX_REMEMBERED_PARTS) reads.delete(reads.keys().next().value!);
  }

  /** Whether `u`'s part `text` comes back often enough to be worth a request of its own. */
  recurring(u: Utterance, text: string): boolean {
    return (this.#reads.get(partKey(u, text)) ?? 0) >= this.#after;
  }
}
