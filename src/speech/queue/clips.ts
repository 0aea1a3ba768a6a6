import { SpeechError } from '../errors.ts';
import { type ReadyAudio, sequenceAudio, type Synthesizer } from '../synthesis/synthesize.ts';
import { cutAtSpeaking } from './batching/keeping-up.ts';
import type { BatchRules } from './batching/merging.ts';
import { type BatchPlan, clipParts, clipRequest, partKey, partRequest } from './batching/reuse.ts';
import type { HandsGrants } from './grants.ts';
import type { ProgressEvent, ProgressState } from './options.ts';
import type { ReadyUtterance, Utterance } from './utterance.ts';

// The scheduler's clips: looking up the parts of a run the cache has, running a
// planned batch's requests, and turning clips into deliveries played back to back (with the
// staleness cut at the moment of speaking). Kept apart from scheduler.ts, which decides when.

type CodedError = Error & { code?: string };

/** The standard endpoint's fastest speed (the service's spec: 0.3 to 4.0; faster is read at 1.0). */
const STANDARD_MAX_SPEED = 4;

/** The speed a line of `speed` is asked for with the audience's speed-up: never past the service's fastest. */
export function spedUp(speed: number, speedUp: number): number {
  return Math.min(STANDARD_MAX_SPEED, speed * speedUp);
}

export function releaseAll(audios: Iterable<ReadyAudio>): void {
  for (const a of audios) a.release?.();
}

const asError = (err: unknown, guildId: string): CodedError =>
  err instanceof Error ? (err as CodedError) : new SpeechError('synthesis_failed', { guildId, cause: err });

/** Adds to `found` the cached audio of every part of `run` not `looked` up yet (pinned; the caller releases what it does not use). */
export async function lookupParts(
  synth: Synthesizer,
  guildId: string,
  run: readonly Utterance[],
  found: Map<string, ReadyAudio>,
  looked: Set<string>,
): Promise<void> {
  const lookup = synth.lookup?.bind(synth);
  if (!lookup) return;
  const wanted = new Map<string, { u: Utterance; text: string }>();
  for (const [i, u] of run.entries()) {
    for (const p of clipParts(u, i, run[i - 1])) {
      const key = partKey(u, p.text);
      if (!looked.has(key)) wanted.set(key, { u, text: p.text });
    }
  }
  for (const key of wanted.keys()) looked.add(key);
  await Promise.all(
    [...wanted].map(async ([key, { u, text }]) => {
      const audio = await lookup(partRequest(guildId, u, text)).catch(() => null);
      if (audio) found.set(key, audio);
    }),
  );
}

export interface PlanRun {
  synth: Synthesizer;
  rules: BatchRules;
  signal: AbortSignal;
  progress: (u: Utterance, state: ProgressState, extra?: Partial<ProgressEvent>) => void;
  /** Told each paid request's characters and the audio length it made (the scheduler learns the speech rate). */
  onMade: (chars: number, durationMs: number) => void;
  /**
   * Auto-read requests are read this much faster (the audience is behind: batching/keeping-up.ts `keepUp`).
   * Clips from the cache play as they are, so the speed-up costs no reuse.
   */
  speed?: number;
}

/**
 * Runs a batch's requests (each handed one of the batch's grants, while they last) and turns the clips into deliveries, in order:
 * consecutive utterances that all have their audio play as one delivery; a failure is delivered in
 * its place, so its author is told in order.
 */
export async function synthesizePlan(
  run: PlanRun,
  guildId: string,
  items: Utterance[],
  plan: BatchPlan,
  known: Map<string, ReadyAudio>,
  grants: HandsGrants,
): Promise<ReadyUtterance[]> {
  const { synth, rules, signal } = run;
  const clipItems = plan.clips.map((c) =>
    c.cached ? [items[c.part.item]!] : [...new Set(c.parts.map((p) => p.item))].map((i) => items[i]!),
  );
  const outcomes = await Promise.all(
    plan.clips.map(async (clip, k): Promise<{ audio: ReadyAudio } | { error: CodedError }> => {
      if (clip.cached) return { audio: known.get(partKey(items[clip.part.item]!, clip.part.text))! };
      const grant = grants.hand();
      const req = clipRequest(guildId, items, clip.parts, rules);
      if (run.speed && run.speed !== 1 && req.endpoint === 'standard' && items[clip.parts[0]!.item]!.kind === 'auto')
        req.speed = spedUp(req.speed, run.speed);
      try {
        const audio = await synth.synthesize(req, {
          signal,
          grant,
          grantUnneeded: () => grants.done(grant),
          onProgress: (p) => {
            for (const u of clipItems[k]!) run.progress(u, 'synthesizing', { detail: p.status });
          },
        });
        // Learnt at speed 1: a line read faster (its own speed, the speed-up) made shorter audio for its characters.
        if (!audio.fromCache) run.onMade(rules.countChars(req.text), audio.durationMs * req.speed);
        return { audio };
      } catch (err) {
        return { error: asError(err, guildId) };
      } finally {
        // Not spent (a hit, a shared call, a refusal before sending): back to the window, by its owner.
        grants.done(grant);
      }
    }),
  );
  const failedBy = new Map<Utterance, { error: CodedError; clip: number }>();
  outcomes.forEach((o, k) => {
    if ('error' in o) for (const u of clipItems[k]!) if (!failedBy.has(u)) failedBy.set(u, { error: o.error, clip: k });
  });
  const results: ReadyUtterance[] = [];
  let i = 0;
  while (i < items.length) {
    const failure = failedBy.get(items[i]!);
    if (failure) {
      const group: Utterance[] = [];
      while (i < items.length && failedBy.get(items[i]!)?.clip === failure.clip) group.push(items[i++]!);
      // The clips of a failed group are let go here: no slot holds them yet (they never become a delivery).
      for (const [k, o] of outcomes.entries()) if ('audio' in o && clipItems[k]!.every((u) => group.includes(u))) o.audio.release?.();
      // One author over their allowance must not silence the others merged with them: each alone.
      if (failure.error.code === 'budget_refused' && new Set(group.map((u) => u.userId)).size > 1 && !signal.aborted) {
        for (const u of group) results.push(await alone(run, guildId, u));
      } else {
        results.push({ id: group[0]!.id, guildId, items: group, error: failure.error });
      }
      continue;
    }
    const group: Utterance[] = [];
    while (i < items.length && !failedBy.has(items[i]!)) group.push(items[i++]!);
    const clips = plan.clips.flatMap((_, k) => (clipItems[k]!.some((u) => group.includes(u)) ? [k] : []));
    results.push(
      delivery(
        guildId,
        group,
        clips.map((k) => (outcomes[k] as { audio: ReadyAudio }).audio),
        clips.map((k) => clipItems[k]!),
      ),
    );
  }
  return results;
}

/** `u` alone in one request (the client waits for its own grant). */
async function alone(run: PlanRun, guildId: string, u: Utterance): Promise<ReadyUtterance> {
  const base = { id: u.id, guildId, items: [u] };
  try {
    const audio = await run.synth.synthesize(clipRequest(guildId, [u], [{ item: 0, part: 'all', text: u.text }], run.rules), {
      signal: run.signal,
    });
    return { ...base, audio };
  } catch (err) {
    return { ...base, error: asError(err, guildId) };
  }
}

/** One delivery of `items` playing `clips` back to back (`carries[k]`: the utterances clip k reads). */
function delivery(guildId: string, items: Utterance[], clips: ReadyAudio[], carries: readonly (readonly Utterance[])[]): ReadyUtterance {
  if (clips.length === 1) return { id: items[0]!.id, guildId, items, audio: clips[0]! };
  const starts = new Map<Utterance, number>();
  let t = 0;
  clips.forEach((audio, k) => {
    for (const u of carries[k]!) if (!starts.has(u)) starts.set(u, t);
    t += audio.durationMs;
  });
  return { id: items[0]!.id, guildId, items, audio: sequenceAudio(clips), starts: items.map((u) => starts.get(u) ?? 0), carries };
}

/**
 * The staleness cut at the moment of speaking (batching/keeping-up.ts `cutAtSpeaking`): auto-read that would
 * start later than the cut is dropped with the clips that carry it; the rest plays. Returns what
 * still plays (null: nothing) and the utterances dropped; releases nothing (the slot holding the
 * clips lets go of the ones it no longer plays: slot.ts `Slot`).
 */
export function cutReady(ready: ReadyUtterance, now: number, maxAutoAgeMs: number): { ready: ReadyUtterance | null; dropped: Utterance[] } {
  const audio = ready.audio;
  if (!audio) return { ready, dropped: [] };
  const clips = audio.parts ?? [audio];
  const carries = ready.carries ?? [ready.items];
  const { keep, dropped } = cutAtSpeaking(
    clips.map((a, k) => ({ durationMs: a.durationMs, items: carries[k]! })),
    now,
    maxAutoAgeMs,
  );
  if (dropped.length === 0) return { ready, dropped: [] };
  const gone = ready.items.filter((u) => dropped.includes(u));
  if (keep.length === 0) return { ready: null, dropped: gone };
  const items = ready.items.filter((u) => !dropped.includes(u));
  return {
    ready: delivery(
      ready.guildId,
      items,
      keep.map((k) => clips[k]!),
      keep.map((k) => carries[k]!),
    ),
    dropped: gone,
  };
}
