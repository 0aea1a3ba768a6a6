/**
 * `npm run bench:queue -- --family X --held-out`: traces of the same kinds as the families
 * (bench-queue-family.ts) from a generator the scheduler's policy was not tuned on: other code,
 * another seed space, other words and names. The figures it gives beside the family's say whether
 * the policy holds on conversations it was not built with.
 *
 * How it differs: chat is a self-exciting process (each line draws replies from other members a few
 * seconds later, and reactions right after it) on a base rate that rises and falls over the run,
 * servers' rates spread log-normally; members pick voices by popularity (the default voice most,
 * then a long tail), some members write some of their lines in the server's other language; the
 * lines are built from their own vocabulary. One member in four has a slow service.
 */
import { mulberry32 } from '../test/support/prng.ts';
import type { BatchRules } from '../src/speech/queue/batching/merging.ts';
import { peakLoad, type Family, type FamilyMember } from './bench-queue-family.ts';
import type { TraceLine } from './bench-queue-traces.ts';

type Lang = 'ja' | 'en';

/** Another seed space: the held-out trace of seed N shares nothing with the family member of seed N. */
const rng = (seed: number) => mulberry32(Math.imul(seed + 1_000_003, 2654435761) >>> 0);

class Dice {
  readonly r: () => number;
  constructor(seed: number) {
    this.r = rng(seed);
  }
  between(lo: number, hi: number): number {
    return lo + (hi - lo) * this.r();
  }
  whole(lo: number, hi: number): number {
    return Math.floor(this.between(lo, hi + 1));
  }
  wait(mean: number): number {
    return -mean * Math.log(1 - this.r());
  }
  /** A normal draw (Box-Muller). */
  normal(): number {
    return Math.sqrt(-2 * Math.log(1 - this.r())) * Math.cos(2 * Math.PI * this.r());
  }
  one<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.r() * xs.length)]!;
  }
  /** Index i with weight 1 / (i + 1) ^ s. */
  zipf(n: number, s: number): number {
    const w = Array.from({ length: n }, (_, i) => (i + 1) ** -s);
    let x = this.r() * w.reduce((a, b) => a + b, 0);
    for (let i = 0; i < n; i++) if ((x -= w[i]!) <= 0) return i;
    return n - 1;
  }
}

const HANDLES = [
  'ミナト',
  'ソラ',
  'kuro',
  'Yuzu',
  'mochi',
  'りん',
  'コウ',
  'nana',
  'ハル',
  'tsubasa',
  'ユキ',
  'Ren',
  'もも',
  'Kai',
  'ちひろ',
  'jun',
];
const VOICES: Record<Lang, readonly string[]> = {
  ja: [
    'ja-JP-Wavenet-B',
    'ja-JP-NanamiNeural',
    'ja-JP-Wavenet-A',
    'ja-JP-KeitaNeural',
    'ja-JP-MayuNeural',
    'ja-JP-Standard-C',
    'ja-JP-Neural2-B',
    'ja-JP-ShioriNeural',
    'ja-JP-Takumi',
  ],
  en: ['en-US-Wavenet-A', 'en-US-GuyNeural', 'en-US-Wavenet-C', 'Joanna', 'en-US-AriaNeural', 'Matthew', 'en-US-Wavenet-F', 'Salli'],
};
const TOPICS: Record<Lang, readonly string[]> = {
  ja: [
    '新作のゲーム',
    '昨日の試合',
    '週末の天気',
    '駅の近くのカフェ',
    '今夜のイベント',
    'さっきのボス戦',
    '来月のライブ',
    '部活の合宿',
    'レポートの締め切り',
    '新しいパソコン',
    'あの映画',
    '晩ごはん',
  ],
  en: [
    'the new game',
    'last night',
    'the weekend',
    'that cafe',
    'the raid',
    'the concert',
    'my laptop',
    'the deadline',
    'that movie',
    'dinner',
    'the tournament',
    'the update',
  ],
};
const TAKES: Record<Lang, readonly string[]> = {
  ja: [
    'どうだった？',
    'すごく良かったよ',
    'ちょっと微妙かも',
    'また行きたいな',
    'まだ見てない',
    '誰か一緒にどう？',
    'もう始まってる？',
    '思ったより難しい',
    'みんなで集まろう',
    '楽しみすぎる',
  ],
  en: [
    'how was it?',
    'honestly loved it',
    'kind of meh',
    'want to go again',
    "haven't seen it yet",
    'anyone want to join?',
    'did it start yet?',
    'harder than expected',
    "let's all meet up",
    "can't wait",
  ],
};
const REACTIONS: Record<Lang, readonly string[]> = {
  ja: ['わかる', 'えー', 'すご', 'それ', 'うける', 'たしかに', 'おー', 'よき', 'まじ？', 'はい'],
  en: ['yes', 'omg', 'true', 'haha', 'nope', 'nice one', 'wow', 'right?', 'ty', 'yep'],
};

interface Speaker {
  user: string;
  name: string;
  voice: string;
  lang: Lang;
  /** How often this member writes a line in the server's other language. */
  switches: number;
}

/** A server's members: voices by popularity (`defaultShare` keep the default), some bilingual. */
function speakers(d: Dice, guild: string, n: number, lang: Lang, defaultShare: number, bilingual: number): Speaker[] {
  return Array.from({ length: n }, (_, i) => {
    const own = d.r() >= defaultShare;
    return {
      user: `${guild}-m${i}`,
      name: d.one(HANDLES),
      voice: own ? VOICES[lang][1 + d.zipf(VOICES[lang].length - 1, 1.1)]! : VOICES[lang][0]!,
      lang,
      switches: d.r() < bilingual ? d.between(0.3, 1) : 0,
    };
  });
}

function say(d: Dice, s: Speaker, reaction: boolean, other: Lang, n: number): Pick<TraceLine, 'voice' | 'lang' | 'text'> {
  const lang = d.r() < s.switches ? other : s.lang;
  // A member writing in the other language is read in that language's default voice.
  const voice = lang === s.lang ? s.voice : VOICES[lang][0]!;
  const text = reaction
    ? d.one(REACTIONS[lang])
    : `${d.one(TOPICS[lang])}${lang === 'ja' ? '、' : ', '}${d.one(TAKES[lang])}${n % 7 === 0 ? ` ${n}` : ''}`;
  return { voice, lang, text };
}

/**
 * A server's chat from 0 to `endMs`: lines start at a base rate shaped by `profile` (0..1 of the
 * run), each line draws `excite` replies on average from other members about 4 s later, and a
 * reaction right after it with probability `reactions`.
 */
function hawkes(
  d: Dice,
  out: TraceLine[],
  o: {
    guild: string;
    members: Speaker[];
    perMinute: number;
    excite: number;
    reactions: number;
    profile: (x: number) => number;
    opener?: boolean;
  },
  endMs: number,
  counter: { n: number },
): void {
  const other: Lang = o.members[0]!.lang === 'ja' ? 'en' : 'ja';
  const base = (o.perMinute * (1 - o.excite)) / 60_000;
  const queue: Array<{ at: number; by: Speaker; reaction: boolean }> = o.opener ? [{ at: 0, by: d.one(o.members), reaction: false }] : [];
  // Thinning: candidate starts at the highest base rate, kept in proportion to the profile.
  for (let t = base > 0 ? d.wait(1 / (base * 1.5)) : endMs; t < endMs; t += d.wait(1 / (base * 1.5))) {
    if (d.r() < o.profile(t / endMs) / 1.5) queue.push({ at: t, by: d.one(o.members), reaction: false });
  }
  while (queue.length > 0) {
    queue.sort((a, b) => a.at - b.at);
    const e = queue.shift()!;
    if (e.at >= endMs) continue;
    out.push({
      at_ms: e.at,
      guild: o.guild,
      user: e.by.user,
      name: e.by.name,
      kind: 'auto',
      ...say(d, e.by, e.reaction, other, counter.n++),
    });
    if (e.reaction) continue;
    const replies = Math.floor(o.excite + d.r());
    for (let i = 0; i < replies; i++) {
      const by = o.members.length > 1 ? d.one(o.members.filter((m) => m !== e.by)) : e.by;
      queue.push({ at: e.at + 800 + d.wait(4_000), by, reaction: false });
    }
    if (d.r() < o.reactions) queue.push({ at: e.at + 500 + d.wait(1_500), by: d.one(o.members), reaction: true });
  }
}

const latency = (d: Dice) => (d.r() < 0.25 ? Math.round(d.between(1_000, 3_000)) : 600);

function overload(seed: number): FamilyMember {
  const d = new Dice(seed);
  const params = {
    servers: d.whole(12, 45),
    load: d.between(1.5, 4),
    defaultShare: d.between(0.45, 1),
    bilingual: d.between(0, 0.5),
    reactions: d.between(0.1, 0.6),
    excite: d.between(0.3, 0.75),
    spread: d.between(0.3, 1),
    seconds: d.whole(150, 240),
  };
  const latencyMs = latency(d);
  const rates = Array.from({ length: params.servers }, () => Math.exp(params.spread * d.normal()));
  const total = rates.reduce((a, b) => a + b, 0);
  const out: TraceLine[] = [];
  const counter = { n: 1 };
  // The evening: quieter at the start and the end, busiest in the middle (the mean stays 1).
  const profile = (x: number) => 0.6 + 0.8 * Math.sin(Math.PI * x) * (Math.PI / 4);
  rates.forEach((w, g) => {
    const guild = `h${String(g + 1).padStart(2, '0')}`;
    const lang: Lang = d.r() < 0.75 ? 'ja' : 'en';
    const members = speakers(d, guild, d.whole(3, 12), lang, params.defaultShare, params.bilingual);
    const perMinute = (params.load * 30 * w) / total;
    hawkes(
      d,
      out,
      { guild, members, perMinute, excite: params.excite, reactions: params.reactions, profile },
      params.seconds * 1000,
      counter,
    );
  });
  return { family: 'overload', seed, params, lines: out.sort((a, b) => a.at_ms - b.at_ms), latencyMs };
}

function busy(seed: number): FamilyMember {
  const d = new Dice(seed);
  const params = {
    members: d.whole(5, 15),
    perMinute: d.between(30, 70),
    defaultShare: d.between(0.45, 1),
    bilingual: d.between(0, 0.5),
    reactions: d.between(0.1, 0.6),
    excite: d.between(0.3, 0.75),
    seconds: d.whole(120, 240),
  };
  const latencyMs = latency(d);
  const out: TraceLine[] = [];
  const members = speakers(d, 'h01', params.members, d.r() < 0.75 ? 'ja' : 'en', params.defaultShare, params.bilingual);
  const { perMinute, excite, reactions } = params;
  hawkes(d, out, { guild: 'h01', members, perMinute, excite, reactions, profile: () => 1 }, params.seconds * 1000, { n: 1 });
  return { family: 'busy', seed, params, lines: out.sort((a, b) => a.at_ms - b.at_ms), latencyMs };
}

function staggered(seed: number, rules: BatchRules): FamilyMember {
  const d = new Dice(seed);
  const params = {
    servers: d.whole(10, 30),
    load: d.between(0.5, 1),
    defaultShare: d.between(0.45, 1),
    bilingual: d.between(0, 0.5),
    reactions: d.between(0.1, 0.6),
    waves: d.whole(1, 3),
    spreadS: 0,
  };
  const latencyMs = latency(d);
  const counter = { n: 1 };
  // One conversation a server: an opener and the replies it draws, cut at 6-14 lines.
  const chats = Array.from({ length: params.servers }, (_, g) => {
    const guild = `h${String(g + 1).padStart(2, '0')}`;
    const members = speakers(d, guild, d.whole(2, 5), d.r() < 0.75 ? 'ja' : 'en', params.defaultShare, params.bilingual);
    const lines: TraceLine[] = [];
    // A conversation that dies out early is tried again (at most 20 times): each server says 6-14 lines.
    for (let tries = 0; lines.length < 6 && tries < 20; tries++) {
      lines.length = 0;
      hawkes(
        d,
        lines,
        { guild, members, perMinute: 0, excite: 0.9, reactions: params.reactions, profile: () => 0, opener: true },
        60_000,
        counter,
      );
    }
    return lines.sort((a, b) => a.at_ms - b.at_ms).slice(0, d.whole(6, 14));
  });
  // Servers start in waves (the waves' centres spread over the run), each a few seconds around its centre.
  const centres = Array.from({ length: params.waves }, () => d.r());
  const starts = chats.map(() => Math.min(1, Math.max(0, d.one(centres) + 0.15 * d.normal())));
  const placed = (spreadS: number) =>
    chats.flatMap((c, g) => c.map((l) => ({ ...l, at_ms: l.at_ms + starts[g]! * spreadS * 1000 }))).sort((a, b) => a.at_ms - b.at_ms);
  let [lo, hi] = [0, 1_000];
  for (let i = 0; i < 30; i++) {
    const mid = (lo + hi) / 2;
    if (peakLoad(placed(mid), rules) > params.load) lo = mid;
    else hi = mid;
  }
  params.spreadS = hi;
  return { family: 'staggered', seed, params, lines: placed(hi), latencyMs };
}

/** The held-out trace of `family` for `seed`. */
export function heldOutMember(family: Family, seed: number, rules: BatchRules): FamilyMember {
  if (family === 'overload') return overload(seed);
  if (family === 'busy') return busy(seed);
  return staggered(seed, rules);
}
