import { readMs } from './batching/keeping-up.ts';
import { type BatchRules, isStale, mergeable, mergeableRun, nextBatch, pauseAfter, separatorFor } from './batching/merging.ts';
import type { SchedulerPolicy } from './options.ts';
import type { Utterance } from './utterance.ts';

// How the scheduler shares scarce requests, in one place: its constants (`POLICY_DEFAULTS`, each
// explained where the options are declared, options.ts `SchedulerPolicy`; `npm run bench:queue
// -- --sensitivity` varies them one at a time), what a grant buys an audience
// (`grantWorth`), and which of an audience's waiting messages its next request reads
// (`batchGroup`). Pure functions, so the rules are tested on their own and the scheduler (scheduler.ts,
// audience-queue.ts) only applies them.

/** The policy as shipped (a scheduler's `policy` option overrides any of them). */
export const POLICY_DEFAULTS = {
  scarceAudiences: 4,
  scarceGrants: 6,
  activeMs: 20_000,
  holdShare: 0.7,
  scarceCutHorizons: 3,
  staleWorth: 0.3,
  staleWorthTalking: 0.15,
  spokenWindowMs: 5 * 60_000,
  fairness: 2,
  fairnessPrior: 0.1,
  catchUpShare: 0.25,
  payMarginMs: 2_000,
  payMarginShare: 0.1,
  lullMarginShare: 0.25,
  reuseAfterReads: 2,
  groupWindowMs: 60_000,
} as const satisfies SchedulerPolicy;

/** What the next request of an audience would read, and what that buys (fresh messages). */
interface BatchGroup {
  /** The messages, in the order they were written (at most one request's worth). */
  items: Utterance[];
  /** Every message of that voice the request may draw on, oldest first (`items` first; cached parts do not count against a request's limits). */
  members: Utterance[];
  /** 1 for each message heard within the horizon, the stale worth for one heard later (within the cut). */
  gain: number;
}

/** When the next request would be read, and how freshness is judged. */
interface GroupWindow {
  horizonMs: number;
  cutMs: number;
  staleWorth: number;
  /** Read messages of the voice chosen from the whole window (requests scarce), or only the run at the head. */
  grouped: boolean;
}

/**
 * The messages the next request of an audience reads from `pending` (oldest first), read from
 * `startAt` at `msPerChar`: what went past the cut at the head is left out (it is dropped when the
 * request forms). Not `grouped`: the run at the head (consecutive messages one request may read
 * together, batching/merging.ts `nextBatch`). `grouped` (requests are scarce): of each voice waiting (the
 * messages one request may read together, `mergeable`), the oldest that fit one request, written
 * within `groupWindowMs` of the oldest waiting; the voice whose request hears the most fresh
 * speech (`gain`) goes, the oldest first between equals. So one member's own voice, or a line in
 * another language, does not cut a conversation into a request per line when requests are what is
 * scarce; messages of one voice may be heard before older ones of another (measured by the bench).
 */
export function batchGroup(
  pending: readonly Utterance[],
  startAt: number,
  msPerChar: number,
  window: GroupWindow,
  rules: BatchRules,
  policy: Pick<SchedulerPolicy, 'groupWindowMs'> = POLICY_DEFAULTS,
): BatchGroup | null {
  const { stale, take } = nextBatch(pending, { now: startAt, playing: false, cutMs: window.cutMs }, rules);
  if (take === 0) return null;
  const live = pending.slice(stale);
  const head = live[0]!;
  if (!window.grouped || head.kind !== 'auto' || head.advanced) {
    const items = live.slice(0, take);
    return {
      items,
      members: live.slice(0, mergeableRun(live, 0, rules.maxMessages * 2)),
      gain: gainOf(items, startAt, msPerChar, window, rules),
    };
  }
  const until = head.enqueuedAt + policy.groupWindowMs;
  let best: BatchGroup | null = null;
  const seen = new Set<Utterance>();
  for (const leader of live) {
    if (seen.has(leader) || leader.enqueuedAt > until) continue;
    if (leader.kind !== 'auto' || leader.advanced || isStale(leader, startAt, window.cutMs)) {
      seen.add(leader);
      continue;
    }
    const members = live.filter(
      (u) => u === leader || (u.enqueuedAt <= until && !seen.has(u) && mergeable(leader, u) && !isStale(u, startAt, window.cutMs)),
    );
    for (const u of members) seen.add(u);
    const items = oneRequest(members, rules);
    const gain = gainOf(items, startAt, msPerChar, window, rules);
    if (!best || gain > best.gain) best = { items, members, gain };
  }
  return best;
}

/** The leading messages of `members` (one voice) that one request reads: within `maxMessages` and `maxChars`, pauses included. */
function oneRequest(members: readonly Utterance[], rules: BatchRules): Utterance[] {
  const sep = separatorFor(members[0]!, rules.separator);
  let chars = rules.countChars(members[0]!.text);
  let n = 1;
  while (n < members.length && n < rules.maxMessages) {
    chars += rules.countChars(pauseAfter(members[n - 1]!.text, sep)) + rules.countChars(members[n]!.text);
    if (chars > rules.maxChars) break;
    n++;
  }
  return members.slice(0, n);
}

/** 1 for each message whose words would start within the horizon (explicit requests always), the stale worth within the cut. */
function gainOf(items: readonly Utterance[], startAt: number, msPerChar: number, window: GroupWindow, rules: BatchRules): number {
  const pause = rules.countChars(separatorFor(items[0]!, rules.separator));
  let gain = 0;
  let t = startAt;
  for (const u of items) {
    const late = t - u.enqueuedAt;
    if (u.kind !== 'auto' || late <= window.horizonMs) gain += 1;
    else if (late <= window.cutMs) gain += window.staleWorth;
    t += readMs(u, pause, msPerChar, rules);
  }
  return gain;
}

/**
 * What a grant buys the audience whose queue is `pending`: the gain of its next request
 * (`batchGroup`), weighed for fairness by the share of what it was offered lately that it has read
 * (`spokenLately` of `offeredLately` messages): ((1 + prior) / (share + prior)) ^ fairness. An
 * audience read in full keeps its gain; one read less of what it was offered counts for more, and
 * one that has read nothing of its one message most of all (a quiet server's line beside a busy
 * server's fifth request): the shares of what each channel is offered are evened out (the bench's
 * Jain index per voice channel), while among equals a grant still goes where it hears the most
 * fresh speech. The limiter grants where this is highest (src/tts/limiter/pacing.ts `grantOrder`).
 */
export function grantWorth(
  pending: readonly Utterance[],
  startAt: number,
  msPerChar: number,
  window: GroupWindow & { spokenLately: number; offeredLately: number },
  rules: BatchRules,
  policy: Pick<SchedulerPolicy, 'fairness' | 'fairnessPrior' | 'groupWindowMs'> = POLICY_DEFAULTS,
): number {
  const group = batchGroup(pending, startAt, msPerChar, window, rules, policy);
  if (!group) return 0;
  const offered = Math.max(window.offeredLately, window.spokenLately);
  const share = offered === 0 ? 1 : window.spokenLately / offered;
  const prior = policy.fairnessPrior;
  return group.gain * ((1 + prior) / (share + prior)) ** policy.fairness;
}
