import type { Freshness } from '../options.ts';
import type { Utterance } from '../utterance.ts';
import { type BatchRules, isStale, separatorFor } from './merging.ts';

// The batching rules that keep up: how an audience bound by playback keeps up (the cut tightened to
// the horizon, the oldest set aside, speed-up), how long a line takes to read, how many lines one
// batch may carry within the cut, and the staleness cut at the moment of speaking. Pure functions;
// pacing.ts keeps the state they decide from.

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

/**
 * Whether a line set aside, read in a lull from `speakAt` (it is `now`), is worth a request: its words
 * would start at least `marginMs` inside the cut (a share of a request's expected latency, policy.ts
 * `lullMarginShare`). Closer to the cut, a request only a little slower than expected gets its audio,
 * paid for, dropped at the moment of speaking. Undefined: read it now. Otherwise when to look again:
 * the moment it could no longer be heard within the cut even if read next, when the head rules drop
 * it unpaid as any late line (it is never dropped sooner, while it could still be heard).
 */
export function lullLookAgain(head: Utterance, speakAt: number, now: number, cutMs: number, marginMs: number): number | undefined {
  if (!isStale(head, speakAt, cutMs - marginMs)) return undefined;
  return head.enqueuedAt + cutMs - (speakAt - now) + 1;
}

/** A delivery's clips, with the utterances each carries a part of. */
interface TimedClip {
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
