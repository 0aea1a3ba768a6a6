/**
 * `npm run bench:queue -- --family overload|staggered|busy`: traces drawn from a family, not one
 * trace. Each seed draws the shape's parameters first (how many servers, how much is offered
 * against the rate budget, how many members have a voice of their own, how much is written in a
 * second language, how many lines are common reactions, how long conversations run, how slow the
 * service is), then a trace with them. A policy tuned to one trace of a shape shows up here as a
 * spread of outcomes over the family, judged at its 10th percentile.
 *
 * One member in four has a slow service (1-3 s a request instead of about 0.6 s).
 */
import { mulberry32 } from '../test/support/prng.ts';
import { asRead, defaultVoice, requestStarts, EN_NAMES, guildName, JA_NAMES, Vocabulary, type TraceLine } from './bench-queue-traces.ts';
import type { BatchRules } from '../src/speech/queue/batching/merging.ts';

export const FAMILIES = ['overload', 'staggered', 'busy'] as const;
export type Family = (typeof FAMILIES)[number];

/** One trace of a family, with the parameters it was drawn with. */
export interface FamilyMember {
  family: Family;
  seed: number;
  params: Record<string, number>;
  lines: TraceLine[];
  /** The service's latency per request for this member (ms). */
  latencyMs: number;
}

/** The rate budget the offered load is measured against: 30 standard requests a minute. */
const BUDGET_PER_MINUTE = 30;
/** The default freshness horizon: what "heard in time" means for the staggered family's demand. */
const HORIZON_MS = 20_000;
/** A service as the bench's emulator answers (synthesis and encoding), and a slow one. */
const NORMAL_LATENCY_MS = 600;

/** Voices members pick for themselves, per language (the service's ids; the default voice is not among them). */
const OWN_VOICES = {
  ja: ['ja-JP-NanamiNeural', 'ja-JP-Wavenet-C', 'ja-JP-KeitaNeural', 'ja-JP-Wavenet-D', 'ja-JP-AoiNeural', 'ja-JP-Standard-A'],
  en: ['en-US-JennyNeural', 'en-US-Wavenet-B', 'en-US-GuyNeural', 'en-US-Wavenet-E', 'en-US-AriaNeural'],
} as const;

type Lang = 'ja' | 'en';

interface Member {
  user: string;
  name: string;
  voice: string;
  lang: Lang;
}

class Draw {
  readonly rand: () => number;
  constructor(seed: number) {
    this.rand = mulberry32(seed);
  }
  uniform(lo: number, hi: number): number {
    return lo + (hi - lo) * this.rand();
  }
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.rand() * (hi - lo + 1));
  }
  exp(mean: number): number {
    return -Math.log(1 - this.rand()) * mean;
  }
  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.rand() * xs.length)]!;
  }
}

/** The members of one server: `ownVoice` of them with a voice of their own, `second` writing in the server's other language. */
function serverMembers(d: Draw, guild: string, n: number, lang: Lang, ownVoice: number, second: number, channel = ''): Member[] {
  const other: Lang = lang === 'ja' ? 'en' : 'ja';
  const used = new Set<string>();
  return Array.from({ length: n }, (_, u) => {
    const l = d.rand() < second ? other : lang;
    const pool = l === 'ja' ? JA_NAMES : EN_NAMES;
    let voice: string = defaultVoice(l);
    if (d.rand() < ownVoice) {
      const free = OWN_VOICES[l].filter((v) => !used.has(v));
      voice = d.pick(free.length > 0 ? free : OWN_VOICES[l]);
      used.add(voice);
    }
    return { user: `${guild}${channel}-u${u + 1}`, name: d.pick(pool), voice, lang: l };
  });
}

function line(at: number, guild: string, m: Member, text: string): TraceLine {
  return { at_ms: at, guild, user: m.user, name: m.name, voice: m.voice, lang: m.lang, kind: 'auto', text };
}

/** The service of a member: one in four slow (1-3 s a request). */
function serviceLatency(d: Draw): number {
  return d.rand() < 0.25 ? Math.round(d.uniform(1_000, 3_000)) : NORMAL_LATENCY_MS;
}

/**
 * Conversations in one server from `from` to `to`, `perMinute` lines a minute in all: episodes (a
 * few members answering each other) starting at random moments, each `episode` lines on average
 * (one, then a geometric tail), a line every 0.5 s plus `gapS` s on average; `reactions` of the
 * lines common reactions. Episodes are added until the server has written its share (an episode
 * running past `to` is cut there), so the offered load is the one drawn.
 */
function conversations(
  d: Draw,
  words: Vocabulary,
  out: TraceLine[],
  o: { guild: string; members: Member[]; perMinute: number; episode: number; gapS: number; reactions: number; channel?: string },
  from: number,
  to: number,
): void {
  let left = Math.round((o.perMinute * (to - from)) / 60_000 + d.rand() - 0.5);
  while (left > 0) {
    const size = Math.min(left, 1 + Math.round(d.exp(o.episode - 1)));
    const speakers = Array.from({ length: Math.min(o.members.length, d.int(2, 4)) }, () => d.pick(o.members));
    let at = from + d.rand() * (to - from);
    for (let i = 0; i < size && at < to; i++, left--) {
      const m = d.pick(speakers);
      const text = d.rand() < o.reactions ? words.short(m.lang) : words.unique(m.lang);
      out.push({ ...line(at, o.guild, m, text), ...(o.channel ? { channel: o.channel } : {}) });
      at += 500 + d.exp(o.gapS * 1000);
    }
  }
}

/**
 * Overload: 10-40 servers offering 1.5-4x what the budget carries one message per request, for
 * 150-240 s; servers more or less evenly busy; 0-50% of members with a voice of their own, 0-40%
 * writing in the server's other language, 10-50% of lines common reactions, conversations of 2-8
 * messages on average.
 */
function overloadMember(seed: number): FamilyMember {
  const d = new Draw(seed);
  const params = {
    servers: d.int(10, 40),
    load: d.uniform(1.5, 4),
    ownVoice: d.uniform(0, 0.5),
    second: d.uniform(0, 0.4),
    reactions: d.uniform(0.1, 0.5),
    episode: d.uniform(2, 8),
    gapS: d.uniform(1, 4),
    skew: d.uniform(0, 1),
    seconds: d.int(150, 240),
  };
  const latencyMs = serviceLatency(d);
  const words = new Vocabulary(mulberry32(seed ^ 0x5bd1e995));
  const weights = Array.from({ length: params.servers }, (_, g) => (g + 1) ** -params.skew);
  const total = weights.reduce((a, b) => a + b, 0);
  const out: TraceLine[] = [];
  for (let g = 0; g < params.servers; g++) {
    const guild = guildName(g);
    const lang: Lang = d.rand() < 0.8 ? 'ja' : 'en';
    const members = serverMembers(d, guild, d.int(3, 10), lang, params.ownVoice, params.second);
    const perMinute = (params.load * BUDGET_PER_MINUTE * weights[g]!) / total;
    conversations(d, words, out, { guild, members, perMinute, ...params }, 0, params.seconds * 1000);
  }
  return { family: 'overload', seed, params, lines: out.sort((a, b) => a.at_ms - b.at_ms), latencyMs };
}

/**
 * What a trace needs at its busiest, against the budget: the most requests that must start within
 * one minute (`windowMs`) for every message to be heard within the horizon, each reading the
 * messages of one voice of one audience written within 20 s of its first (`bound`'s packing,
 * grouped by voice), divided by the 30 the budget allows a minute. At 1.0 or below the budget
 * suffices at every moment if it is spent well.
 */
export function peakLoad(trace: readonly TraceLine[], rules: BatchRules, windowMs = 60_000): number {
  const starts = requestStarts(asRead(trace), { ...rules, maxAutoAgeMs: HORIZON_MS });
  let most = 0;
  for (let i = 0, j = 0; i < starts.length; i++) {
    while (j < starts.length && starts[j]! - starts[i]! < windowMs) j++;
    most = Math.max(most, j - i);
  }
  return most / BUDGET_PER_MINUTE;
}

/**
 * Staggered: 10-30 servers, one conversation each (6-12 messages, 2-4 members), starting at random
 * moments spread so that the busiest minute needs 0.5-1.0x the budget (`peakLoad`): the budget
 * suffices if it is spent well, and what is measured is how well (beyond it is the overload
 * family; the built-in `staggered` trace, 20 servers starting within 60 s, is at 1.27). Voices,
 * languages and reactions as in overload.
 */
function staggeredMember(seed: number, rules: BatchRules): FamilyMember {
  const d = new Draw(seed);
  const params = {
    servers: d.int(10, 30),
    load: d.uniform(0.5, 1),
    ownVoice: d.uniform(0, 0.5),
    second: d.uniform(0, 0.4),
    reactions: d.uniform(0.1, 0.5),
    length: d.int(6, 12),
    gapS: d.uniform(1.5, 4),
    spreadS: 0,
  };
  const latencyMs = serviceLatency(d);
  const words = new Vocabulary(mulberry32(seed ^ 0x5bd1e995));
  const conversationsOf: TraceLine[][] = [];
  for (let g = 0; g < params.servers; g++) {
    const guild = guildName(g);
    const lang: Lang = d.rand() < 0.8 ? 'ja' : 'en';
    const members = serverMembers(d, guild, d.int(2, 4), lang, params.ownVoice, params.second);
    const lines: TraceLine[] = [];
    let at = 0;
    for (let i = 0; i < params.length; i++) {
      const m = d.pick(members);
      lines.push(line(at, guild, m, d.rand() < params.reactions ? words.short(m.lang) : words.unique(m.lang)));
      at += 500 + d.exp(params.gapS * 1000);
    }
    conversationsOf.push(lines);
  }
  const starts = conversationsOf.map(() => d.rand());
  const placed = (spreadS: number) =>
    conversationsOf
      .flatMap((c, g) => c.map((l) => ({ ...l, at_ms: l.at_ms + starts[g]! * spreadS * 1000 })))
      .sort((a, b) => a.at_ms - b.at_ms);
  // The busiest minute falls as the starts spread out: the spread that brings it to the drawn load.
  let [lo, hi] = [0, 1_000];
  for (let i = 0; i < 30; i++) {
    const mid = (lo + hi) / 2;
    if (peakLoad(placed(mid), rules) > params.load) lo = mid;
    else hi = mid;
  }
  params.spreadS = hi;
  const out = placed(hi);
  return { family: 'staggered', seed, params, lines: out, latencyMs };
}

/**
 * Busy: one server bound by playback, not by the rate: 4-12 members writing 30-70 messages a
 * minute (the rate drawn again every 30 s, within 30% of it) for 120-240 s; voices, languages and
 * reactions as in overload.
 */
function busyMember(seed: number): FamilyMember {
  const d = new Draw(seed);
  const params = {
    members: d.int(4, 12),
    perMinute: d.uniform(30, 70),
    ownVoice: d.uniform(0, 0.5),
    second: d.uniform(0, 0.4),
    reactions: d.uniform(0.1, 0.5),
    seconds: d.int(120, 240),
  };
  const latencyMs = serviceLatency(d);
  const words = new Vocabulary(mulberry32(seed ^ 0x5bd1e995));
  const members = serverMembers(d, 'g01', params.members, d.rand() < 0.8 ? 'ja' : 'en', params.ownVoice, params.second);
  const out: TraceLine[] = [];
  for (let t = d.exp(60_000 / params.perMinute); t < params.seconds * 1000;) {
    const rate = params.perMinute * d.uniform(0.7, 1.3);
    const end = Math.min(params.seconds * 1000, t + 30_000);
    for (; t < end; t += d.exp(60_000 / rate)) {
      const m = d.pick(members);
      out.push(line(t, 'g01', m, d.rand() < params.reactions ? words.short(m.lang) : words.unique(m.lang)));
    }
  }
  return { family: 'busy', seed, params, lines: out, latencyMs };
}

/** The member of `family` drawn with `seed` (the same seed gives the same member). */
export function familyMember(family: Family, seed: number, rules: BatchRules): FamilyMember {
  switch (family) {
    case 'overload':
      return overloadMember(seed);
    case 'staggered':
      return staggeredMember(seed, rules);
    case 'busy':
      return busyMember(seed);
  }
}

/** The seeds of a family run: `count` of them from `first` (the default run's seeds are 1 to 20). */
export function familySeeds(count: number, first = 1): number[] {
  return Array.from({ length: count }, (_, i) => first + i);
}
