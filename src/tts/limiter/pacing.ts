import type { Demand, GrantDecision, WindowSnapshot } from './types.ts';

/**
 * When the next rate grant may go out, and to whom. Pure functions of the
 * shared window, so every process sharing it decides alike and the rules are tested on their own.
 *
 * Pacing: while the window is less than `burst` full, a grant goes out at once (a quiet bot never
 * waits). Beyond that the free slots are spread evenly until the oldest grant's slot frees, instead
 * of being spent on the first burst: a guild that arrives later still finds a slot within seconds,
 * where an unpaced window under sustained demand is full for most of a minute at a time.
 *
 * Order: when every waiting key says what a grant buys it (`worth`: the speech still fresh that
 * would ride on it, weighed for fairness by the scheduler), the grant goes where it buys the most;
 * freshness is a choice of whom to grant, not of more requests.
 * Otherwise (and between equals) the waiting key (an audience, or a guild) served least recently goes first (one never
 * served before all), then the one waiting longest. A key arriving late is served next, and keys
 * that all wait take turns. Every criterion but `worth` is read from the shared store, so processes
 * sharing it agree on whose turn it is; `worth` is only used while no other process waits.
 *
 * A grant to spare (`spare`): while the window is nearly empty and nobody waits, a request more
 * than needed costs nothing anyone else wanted; the scheduler spends such grants on clips worth
 * keeping in the cache (which resource is scarcer decides).
 */

export interface PaceRules {
  /** Grants allowed in one window (the service's limit). */
  limit: number;
  /** How long a grant occupies its slot: the window plus the safety margin. */
  occupiedMs: number;
  /** Grants in the window below which nothing is paced. `limit` turns pacing off. */
  burst: number;
  /** Grants in the window below which an extra grant is to spare (nobody waiting). */
  spare: number;
}

/** The default burst: half the window is granted at once, the rest is paced. */
export function defaultBurst(limit: number): number {
  return Math.max(1, Math.ceil(limit / 2));
}

/** The default spare level: a sixth of the window (5 of 30 standard requests a minute). */
export function defaultSpare(limit: number): number {
  return Math.max(1, Math.floor(limit / 6));
}

/** Whether one more grant than asked for may go out now: the window nearly empty and not blocked. */
export function hasSpare(snapshot: Pick<WindowSnapshot, 'grants' | 'blockedUntil'>, now: number, rules: PaceRules): boolean {
  return snapshot.blockedUntil <= now && snapshot.grants.length < rules.spare;
}

/**
 * The earliest time the next grant may be made, given the grant times in the window (ascending):
 * never while the window is full; at once below `burst`; otherwise the free slots spread evenly
 * between the latest grant and the moment the oldest grant's slot frees. Under sustained demand
 * this keeps the full rate (limit per window) with no long gap between grants.
 */
export function nextGrantAt(times: readonly number[], now: number, rules: PaceRules): number {
  const used = times.length;
  if (used >= rules.limit) return times[used - rules.limit]! + rules.occupiedMs;
  if (used < rules.burst || used === 0) return now;
  const latest = times[used - 1]!;
  const frees = times[0]! + rules.occupiedMs;
  const free = rules.limit - used;
  // free + 1 gaps: the last free slot goes before the oldest frees, so no slot is left idle then.
  return Math.max(now, latest + Math.max(0, frees - latest) / (free + 1));
}

/**
 * Waiting keys in the order they are served. When every one has a `worth`: the most worth first
 * (what the grant buys: the scheduler weighs fresh speech against what the key had read lately, so
 * a busy key does not crowd out a quiet one). Then (and otherwise): served least recently first
 * (`lastGrant`: the id of each key's latest grant, ids growing with every grant; a key without one
 * first of all), then waiting longest, then by key.
 */
export function grantOrder(waiting: readonly Demand[], lastGrant: ReadonlyMap<string, number> = new Map()): Demand[] {
  const last = (key: string) => lastGrant.get(key) ?? 0;
  const turns = (a: Demand, b: Demand) => last(a.key) - last(b.key) || a.since - b.since || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
  if (!waiting.every((d) => d.worth !== undefined)) return [...waiting].sort(turns);
  return [...waiting].sort((a, b) => b.worth! - a.worth! || turns(a, b));
}

/**
 * One process's decision: grant now to one of its own waiting keys, or look again later. When the
 * key whose turn it is waits in another process, this one holds back (`turnMs`) so that process
 * takes the slot: pacing and order hold across every process sharing the window, not each on its own.
 */
export function decideGrant(
  snapshot: WindowSnapshot,
  mine: readonly Demand[],
  now: number,
  rules: PaceRules,
  turnMs: number,
): GrantDecision {
  if (mine.length === 0) return { ok: false, retryInMs: turnMs };
  if (snapshot.blockedUntil > now) return { ok: false, retryInMs: snapshot.blockedUntil - now };
  const at = nextGrantAt(
    snapshot.grants.map((g) => g.at),
    now,
    rules,
  );
  if (at > now) return { ok: false, retryInMs: Math.max(1, Math.ceil(at - now)) };
  const own = new Set(mine.map((d) => d.key));
  // A key waiting here and elsewhere (it should not: a guild lives on one shard) counts as ours.
  const all = [...mine, ...snapshot.others.filter((d) => !own.has(d.key))];
  const first = grantOrder(all, snapshot.lastGrant)[0]!;
  return own.has(first.key) ? { ok: true, key: first.key } : { ok: false, retryInMs: turnMs };
}
