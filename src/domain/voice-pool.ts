// Voices told apart: a server's voice pool (/config voice-pool, the dashboard; stored by
// src/db/voice-pool.ts) and the rule that gives each member without a voice of their own one of
// its voices. Pure: the same member, pool and call always give the same voice, in any process.

/** Most voices in a server's pool. */
export const VOICE_POOL_MAX = 20;
/** Longest voice id (as /voice set takes it). */
export const VOICE_ID_MAX = 100;
/**
 * Members of a call the pool is shared out among; in a bigger one (a stage) every member speaks
 * with their own first voice, so reading one message never weighs thousands of pairs.
 */
export const POOL_CALL_MAX = 99;

/**
 * How much `memberId` leans to `voice`: FNV-1a over both, then MurmurHash3's finaliser so that
 * snowflakes differing only in their last digits still spread over the whole range.
 */
function poolWeight(memberId: string, voice: string): number {
  let h = 0x811c9dc5;
  const key = `${memberId}\u0000${voice}`;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Pairs in the order the pool is handed out: highest weight first, ties by member id, then voice. */
function byWeight(a: Pair, b: Pair): number {
  return b.weight - a.weight || (a.member < b.member ? -1 : a.member > b.member ? 1 : a.voice < b.voice ? -1 : a.voice > b.voice ? 1 : 0);
}
interface Pair {
  member: string;
  voice: string;
  weight: number;
}

/** The member's first voice of `pool` (the one they speak with alone), or undefined for an empty pool. */
export function firstPoolVoice(pool: readonly string[], memberId: string): string | undefined {
  let best: Pair | undefined;
  for (const voice of pool) {
    const pair = { member: memberId, voice, weight: poolWeight(memberId, voice) };
    if (!best || byWeight(pair, best) < 0) best = pair;
  }
  return best?.voice;
}

/**
 * The pool's voices shared out among `members` (the members of one call without a voice of their
 * own): the (member, voice) pair of highest weight first, then the highest among the members and
 * voices left, and so on, so members get different voices while there are enough. Voices in
 * `taken` (chosen by others in the call for themselves) are left for last: given only once every
 * other voice is. A member left over when the voices run out speaks with their first voice.
 * The result depends only on the set of members, never on their order.
 */
export function sharePool(
  pool: readonly string[],
  members: readonly string[],
  taken: ReadonlySet<string> = new Set(),
): Map<string, string> {
  const given = new Map<string, string>();
  if (pool.length === 0) return given;
  const unique = [...new Set(members)];
  if (unique.length > POOL_CALL_MAX) {
    for (const m of unique) given.set(m, firstPoolVoice(pool, m)!);
    return given;
  }
  const free = pool.filter((v) => !taken.has(v));
  const rest = pool.filter((v) => taken.has(v));
  for (const voices of [free, rest]) {
    const pairs: Pair[] = [];
    for (const member of unique) {
      if (given.has(member)) continue;
      for (const voice of voices) pairs.push({ member, voice, weight: poolWeight(member, voice) });
    }
    pairs.sort(byWeight);
    const used = new Set<string>();
    for (const p of pairs) {
      if (given.has(p.member) || used.has(p.voice)) continue;
      given.set(p.member, p.voice);
      used.add(p.voice);
    }
  }
  for (const m of unique) if (!given.has(m)) given.set(m, firstPoolVoice(pool, m)!);
  return given;
}

/**
 * The pool voice `memberId` speaks with: in a call (`call`: the ids of the other members there
 * without a voice of their own, `taken`: the voices members there chose for themselves), their
 * share of the pool (sharePool, the member counted in); outside one, their first voice. Undefined
 * for an empty pool (the server's voice then).
 */
export function poolVoiceFor(
  pool: readonly string[],
  memberId: string,
  call?: { members: readonly string[]; taken: ReadonlySet<string> },
): string | undefined {
  if (pool.length === 0) return undefined;
  if (!call) return firstPoolVoice(pool, memberId);
  return sharePool(pool, [memberId, ...call.members], call.taken).get(memberId);
}
