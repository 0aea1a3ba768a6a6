/**
 * What one mode of `npm run bench:queue` did with a trace (`Outcome`), and its figures
 * (`ModeStats`, bench-queue-report.ts): waits to each message's own words, the fractions heard,
 * fairness, characters, the lines dropped while they could still have been heard, and the order
 * changes a policy made. Shared by the run against the emulator and the virtual-time run
 * (bench-queue-sim.ts).
 */
import type { ModeStats } from './bench-queue-report.ts';
import { countChars } from '../src/tts/chars.ts';
import type { TraceMessage } from './bench-queue-traces.ts';

/** What one mode did with a trace, in clock milliseconds (the mode's own clock). */
export interface Outcome {
  spoken: number;
  droppedStale: number;
  /** Of those, dropped at the moment of speaking: paid for, never heard. */
  droppedSpeaking: number;
  refused: number;
  failed: number;
  /** Unscaled ms from arrival to the moment the message's own words start, per spoken message (by index). */
  waits: Map<number, number>;
  /** When each message arrived and, when dropped, when (clock time). */
  arrived: Map<number, number>;
  droppedAt: Map<number, number>;
  /** When each audience's player played something: [start, end] per delivery, in order. */
  plays: Map<string, Array<[number, number]>>;
  /** Messages read in a request after another message of the same request (each costs a pause: the price of a merge). */
  merged: number;
  /** Requests and characters spent before the trace started (`--names-cached`), not counted. */
  before?: { requests: number; chars: number };
}

export function emptyOutcome(): Outcome {
  return {
    spoken: 0,
    droppedStale: 0,
    droppedSpeaking: 0,
    refused: 0,
    failed: 0,
    waits: new Map(),
    arrived: new Map(),
    droppedAt: new Map(),
    plays: new Map(),
    merged: 0,
  };
}

/** What the service saw of one mode. */
interface ServiceTally {
  requests: number;
  http429: number;
  charged: number;
}

export function quantile(xs: readonly number[], q: number): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]!;
}

/** Jain's index: 1 = perfectly even, 1/n = one guild gets everything. */
function jain(xs: readonly number[]): number {
  const sum = xs.reduce((a, b) => a + b, 0);
  const sq = xs.reduce((a, b) => a + b * b, 0);
  return sq === 0 ? 1 : (sum * sum) / (xs.length * sq);
}

/** A player idle for less than this between two deliveries is only moving on, not idle. */
const IDLE_MIN_MS = 250;

/**
 * The lines dropped while they could still have been heard within the horizon, for nothing: dropped
 * (before or at the moment of speaking) while younger than `horizonMs`, and while a request (the
 * service's time for one, `requestMs`) could still have had them heard within it, their audience
 * ran dry: its player idle and nothing of it waiting.
 * The room the drop made was left empty. (Dropping the oldest so the newest are heard sooner is what
 * keeping up does; it is not counted, since the newer lines fill that room.)
 */
export function needlessDrops(trace: readonly TraceMessage[], o: Outcome, horizonMs: number, requestMs: number): number[] {
  const byAudience = new Map<string, TraceMessage[]>();
  for (const m of trace) byAudience.set(m.audience, [...(byAudience.get(m.audience) ?? []), m]);
  const out: number[] = [];
  for (const m of trace) {
    const at = o.droppedAt.get(m.index);
    if (at === undefined || m.kind !== 'auto') continue;
    const deadline = o.arrived.get(m.index)! + horizonMs - requestMs;
    if (at >= deadline) continue;
    const others = byAudience.get(m.audience)!.filter((n) => n !== m && o.arrived.has(n.index));
    // When each other line stopped waiting (its words started, or it was dropped), if it did.
    const done = others.map((n) => {
      const w = o.waits.get(n.index);
      return {
        arrived: o.arrived.get(n.index)!,
        until: w !== undefined ? o.arrived.get(n.index)! + w : (o.droppedAt.get(n.index) ?? Infinity),
      };
    });
    const dry = (t: number) => done.every((d) => d.arrived > t || d.until <= t);
    // It runs dry, if at all, when the last line waiting stops waiting or the player stops playing.
    const plays = o.plays.get(m.audience) ?? [];
    const moments = [at, ...[...done.map((d) => d.until), ...plays.map(([, end]) => end)].filter((t) => t > at && t < deadline)];
    if (moments.some((t) => dry(t) && idleWithin(plays, t, Math.min(deadline, t + IDLE_MIN_MS)))) out.push(m.index);
  }
  return out;
}

/**
 * Whether a player with `plays` ([start, end], in order, not overlapping) was idle at some moment in
 * [from, to): in a gap of IDLE_MIN_MS or more between deliveries (or before the first, or after the last).
 */
function idleWithin(plays: ReadonlyArray<readonly [number, number]>, from: number, to: number): boolean {
  let gapStart = Number.NEGATIVE_INFINITY;
  for (const [start, end] of [...plays, [Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY] as const]) {
    if (start - gapStart >= IDLE_MIN_MS && gapStart < to && start > from) return true;
    gapStart = Math.max(gapStart, end);
    if (gapStart >= to) return false;
  }
  return false;
}

/**
 * Order changes: messages heard before an earlier-written message of the same audience (that one
 * heard later), and by how much earlier the overtaken message was written at most (ms).
 */
export function orderChanges(trace: readonly TraceMessage[], o: Outcome): { count: number; maxMs: number } {
  const byAudience = new Map<string, Array<{ at: number; heard: number }>>();
  for (const m of trace) {
    const w = o.waits.get(m.index);
    if (w === undefined) continue;
    const at = o.arrived.get(m.index)!;
    const list = byAudience.get(m.audience) ?? [];
    list.push({ at, heard: at + w });
    byAudience.set(m.audience, list);
  }
  let count = 0;
  let maxMs = 0;
  for (const list of byAudience.values()) {
    for (const m of list) {
      const overtaken = list.filter((n) => n.at < m.at && n.heard > m.heard);
      if (overtaken.length === 0) continue;
      count++;
      maxMs = Math.max(maxMs, ...overtaken.map((n) => m.at - n.at));
    }
  }
  return { count, maxMs };
}

/** One mode's figures (ModeStats) from what it did and what the service saw. */
export function modeStats(
  trace: readonly TraceMessage[],
  o: Outcome,
  service: ServiceTally,
  cpuS: number,
  when: { horizonMs: number; requestMs: number },
): ModeStats {
  const waits = [...o.waits.values()].map((ms) => ms / 1000);
  const fairness = (key: (m: TraceMessage) => string) => {
    const groups = new Map<string, { offered: number; spoken: number }>();
    for (const m of trace) {
      const g = groups.get(key(m)) ?? { offered: 0, spoken: 0 };
      g.offered++;
      if (o.waits.has(m.index)) g.spoken++;
      groups.set(key(m), g);
    }
    return [...groups.values()];
  };
  const meanWaits = () => {
    const groups = new Map<string, number[]>();
    for (const m of trace) {
      const w = o.waits.get(m.index);
      if (w === undefined) continue;
      groups.set(m.guild, [...(groups.get(m.guild) ?? []), w / 1000]);
    }
    return [...groups.values()].map((ws) => ws.reduce((a, b) => a + b, 0) / ws.length);
  };
  const guilds = fairness((m) => m.guild);
  const audiences = fairness((m) => m.audience);
  const heard = (s: number) => [...o.waits.values()].filter((ms) => ms <= s * 1000).length / trace.length;
  const autoWaits = trace.filter((m) => m.kind === 'auto' && o.waits.has(m.index)).map((m) => o.waits.get(m.index)! / 1000);
  const requests = service.requests - (o.before?.requests ?? 0);
  // With a guild of several voice channels: theirs and the busiest others' spoken fractions side by side.
  const offered = new Map<string, TraceMessage[]>();
  for (const m of trace) offered.set(m.audience, [...(offered.get(m.audience) ?? []), m]);
  const shared = new Set(trace.filter((m) => trace.some((n) => n.guild === m.guild && n.audience !== m.audience)).map((m) => m.audience));
  const shown = [...offered.keys()].filter(
    (k) => shared.has(k) || offered.get(k)!.length >= Math.min(...[...shared].map((s) => offered.get(s)!.length)),
  );
  const byAudience =
    shared.size > 0
      ? Object.fromEntries(
          shown.sort().map((k) => [k, offered.get(k)!.filter((m) => o.waits.has(m.index)).length / offered.get(k)!.length]),
        )
      : undefined;
  const order = orderChanges(trace, o);
  return {
    requests,
    http_429: service.http429,
    spoken: o.spoken,
    dropped_stale: o.droppedStale,
    dropped_at_speaking: o.droppedSpeaking,
    dropped_needlessly: needlessDrops(trace, o, when.horizonMs, when.requestMs).length,
    refused: o.refused,
    failed: o.failed,
    requests_per_spoken: requests / Math.max(1, o.spoken),
    spoken_fraction: o.spoken / trace.length,
    wait_p50_s: quantile(waits, 0.5),
    wait_p95_s: quantile(waits, 0.95),
    heard_within: { '5': heard(5), '10': heard(10), '20': heard(20), '30': heard(30) },
    heard_max_s: waits.length ? Math.max(...waits) : Number.NaN,
    heard_max_auto_s: autoWaits.length ? Math.max(...autoWaits) : Number.NaN,
    jain_spoken_fraction: jain(guilds.map((g) => g.spoken / g.offered)),
    jain_spoken_fraction_audience: jain(audiences.map((g) => g.spoken / g.offered)),
    // Guilds that spoke nothing have no mean wait; their loss shows in the spoken fraction's index.
    jain_mean_wait: jain(meanWaits()),
    merged: o.merged,
    order_changes: order.count,
    order_change_max_s: order.maxMs / 1000,
    chars_paid: service.charged - (o.before?.chars ?? 0),
    chars_full_price: trace.filter((m) => o.waits.has(m.index)).reduce((n, m) => n + countChars(m.prefix + m.body), 0),
    cpu_s: cpuS,
    ...(byAudience ? { by_audience: byAudience } : {}),
  };
}
