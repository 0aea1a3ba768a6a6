import type { GrantingLimiter, RateGrant } from '../tts/limiter/limiter.ts';
import { clipParts, mergeableRun, planBatch, type BatchPlan, type BatchRules, type PlanLimits } from './batching.ts';
import { lookupParts, partKey, releaseAll } from './queue-clips.ts';
import { SCHEDULER_DEFAULTS, type AudienceStats, type ReadyUtterance, type SchedulerOptions, type Utterance } from './queue-types.ts';
import type { ReadyAudio, Synthesizer } from './synthesize.ts';

// An audience's queue as the scheduler (queue.ts) keeps it, and the forming of its next batch at the
// moment of the grant.

export interface Slot {
  /** planning: waiting for a grant (the batch is not formed yet); then synthesizing, then ready. */
  state: 'planning' | 'synthesizing' | 'ready';
  items: Utterance[];
  controller: AbortController;
  results: ReadyUtterance[];
  /** Audio length expected while not ready (ms), to project when the batches behind it speak. */
  estimateMs: number;
}

/** One audience's queue (a voice session, or a text channel whose audio is posted): its own order, merging and pacing. */
export interface AudienceQueue {
  readonly guildId: string;
  readonly audience: string;
  pending: Utterance[];
  /** Batches started, not yet delivered, in order (length <= prefetch); at most one is planning. */
  slots: Slot[];
  /** The delivery in progress, if any. */
  current: AbortController | null;
  /** The batch being delivered: its results not started yet, and what `current` plays (queue-withdraw.ts). */
  delivering?: { upcoming: ReadyUtterance[]; playing: readonly Utterance[]; ready?: ReadyUtterance };
  /** When the delivery in progress is expected to end (clock time). */
  playingUntil: number;
  /** A held auto message has a wake-up scheduled. */
  holdTimer: boolean;
  stats: Omit<AudienceStats, 'guildId' | 'audience' | 'queued' | 'synthesizing' | 'ready' | 'playing'>;
}

export function newAudienceQueue(guildId: string, audience: string): AudienceQueue {
  return {
    guildId,
    audience,
    pending: [],
    slots: [],
    current: null,
    playingUntil: 0,
    holdTimer: false,
    stats: { delivered: 0, dropped: 0 },
  };
}

/** The audience's counters (AudienceStats) from its queue. */
export function audienceStats(g: AudienceQueue): AudienceStats {
  const count = (state: Slot['state']) => g.slots.filter((s) => s.state === state).reduce((n, s) => n + s.items.length, 0);
  return {
    guildId: g.guildId,
    audience: g.audience,
    queued: g.pending.length,
    synthesizing: count('synthesizing'),
    ready: count('ready'),
    playing: g.current !== null,
    ...g.stats,
  };
}

/** Empties the audience's queue: batches aborted with `reason`, ready audio unpinned. The delivery in progress is left to the caller. */
export function abortAll(g: AudienceQueue, reason: unknown): void {
  for (const slot of g.slots) {
    slot.controller.abort(reason);
    for (const r of slot.results) r.audio?.release?.();
  }
  g.slots = [];
  g.pending = [];
}

/** Everything of the audience not yet delivered, in order. */
export function undelivered(g: AudienceQueue): Utterance[] {
  return [...g.slots.flatMap((s) => s.items), ...g.pending];
}

/** The earliest a batch behind `slot`'s predecessors could speak: after what plays and waits ahead of it, and a request's latency. */
export function speakAt(g: AudienceQueue, slot: Slot | null, now: number, latencyMs: number): number {
  let t = g.current ? Math.max(now, g.playingUntil) : now;
  for (const s of g.slots) {
    if (s === slot) break;
    t += s.state === 'ready' ? s.results.reduce((ms, r) => ms + (r.audio?.durationMs ?? 0), 0) : s.estimateMs;
  }
  return Math.max(t, now + latencyMs);
}

export interface FormContext {
  synth: Synthesizer;
  limiter: GrantingLimiter | undefined;
  rules: BatchRules;
  reusableChars: number;
  signal: AbortSignal;
  /** Whether the slot may still form a batch (not cleared or closed). */
  live: () => boolean;
  /** The head rules as the batch would speak (drops the stale, holds a lone message); false: nothing to form now. */
  headReady: (granted: boolean) => boolean;
  /** Before asking for a grant: whether the run should wait for company first (it is woken later). */
  holdForCompany: () => boolean;
  /** How often each part (partKey) was read lately; updated as batches are formed. */
  reads: Map<string, number>;
  /** What a grant would buy the audience now (batching.ts `freshWorth`), told to the limiter while it waits. */
  worth?: () => number;
  /** How many leading utterances of a run could have their words heard within the cut (batching.ts `withinCut`). */
  fits?: (run: readonly Utterance[]) => number;
}

/** A name or short line is asked for alone (with a request to spare) from its third reading on: by then it keeps coming back. */
const REUSE_AFTER_READS = 2;
/** Parts remembered for their reading counts (the oldest forgotten first). */
const MAX_REMEMBERED_PARTS = 10_000;

function countReads(reads: Map<string, number>, items: readonly Utterance[]): void {
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

/** A batch taken from the queue: its utterances, its plan, the cached parts it plays and the grants its requests spend. */
export interface Formed {
  items: Utterance[];
  plan: BatchPlan;
  known: Map<string, ReadyAudio>;
  grants: RateGrant[];
}

/**
 * Forms the audience's next batch: looks up the parts the cache has; when a request is needed, waits
 * for a grant and only then takes from what is pending at that moment (batch at the moment of the
 * grant); with grants to spare, asks for names and short lines alone. Null: nothing to form (the
 * queue emptied, a message is held or waits for company, the slot was cleared). Throws the signal's reason on abort,
 * with nothing taken from the queue. Grants and cached audio not used are given back.
 */
export async function formBatch(ctx: FormContext, g: AudienceQueue): Promise<Formed | null> {
  const { rules, signal } = ctx;
  const { guildId } = g;
  let grant: RateGrant | null = null;
  // Parts looked up so far (kept across the wait for a grant: only what arrived since is looked up then).
  const known = new Map<string, ReadyAudio>();
  const looked = new Set<string>();
  let formed = false;
  const gone = (head: Utterance) => signal.aborted || !ctx.live() || g.pending[0] !== head;
  try {
    for (;;) {
      if (signal.aborted || !ctx.live() || !ctx.headReady(grant !== null)) return null;
      const mergeable = mergeableRun(g.pending, 0, rules.maxMessages * 2);
      const runLength = ctx.fits ? Math.max(1, Math.min(mergeable, ctx.fits(g.pending.slice(0, mergeable)))) : mergeable;
      const run = g.pending.slice(0, runLength);
      const head = run[0]!;
      const auto = head.kind === 'auto' && !head.advanced;
      if (auto) await lookupParts(ctx.synth, guildId, run, known, looked);
      if (gone(head)) continue;
      const isCached = (u: Utterance, text: string) => known.has(partKey(u, text));
      const recurring = (u: Utterance, text: string) => (ctx.reads.get(partKey(u, text)) ?? 0) >= REUSE_AFTER_READS;
      const limits = (maxRequests: number): PlanLimits => ({
        maxRequests,
        reusableChars: ctx.reusableChars,
        maxItems: runLength,
        recurring,
      });
      let grants: RateGrant[] = [];
      let plan: BatchPlan;
      if (grant) {
        // Grants to spare right now mean requests are not the scarce resource: spend them on clips worth keeping.
        const wanted = planBatch(run, isCached, limits(Number.POSITIVE_INFINITY), rules).requests;
        grants = [grant];
        for (let e: RateGrant | null; grants.length < wanted && (e = await ctx.limiter!.tryReserve('standard', { key: g.audience }));)
          grants.push(e);
        if (gone(head)) {
          // Cleared or closed meanwhile (or the head went): give the extras back and look again.
          for (const extra of grants.slice(1)) extra.release();
          continue;
        }
        plan = planBatch(run, isCached, limits(grants.length), rules);
      } else {
        plan = planBatch(run, isCached, limits(0), rules);
        if (plan.take === 0) {
          if (ctx.limiter && auto) {
            if (ctx.holdForCompany()) return null;
            grant = await ctx.limiter.reserve('standard', { key: g.audience, signal, worth: ctx.worth });
            // Batch at the moment of the grant: look again at everything pending now.
            continue;
          }
          // Explicit requests and a scheduler without a limiter: the client waits for its own grant.
          plan = planBatch(run, isCached, limits(1), rules);
        }
      }
      grant = null;
      const items = g.pending.splice(0, plan.take);
      countReads(ctx.reads, items);
      const used = new Set(plan.clips.flatMap((c) => (c.cached ? [partKey(items[c.part.item]!, c.part.text)] : [])));
      releaseAll([...known].filter(([k]) => !used.has(k)).map(([, audio]) => audio));
      formed = true;
      for (const extra of grants.slice(plan.requests)) extra.release();
      return { items, plan, known, grants: grants.slice(0, plan.requests) };
    }
  } finally {
    grant?.release();
    if (!formed) releaseAll(known.values());
  }
}

/** The batching rules (batching.ts) a scheduler with `options` applies. */
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
