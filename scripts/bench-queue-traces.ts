/**
 * The traces of `npm run bench:queue`: the built-in
 * scenarios, the JSON Lines trace format, the text as the bot reads it (names included), and the
 * offline bound. No I/O except reading and writing a trace file.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { z } from 'zod';
import { GUILD_SETTINGS_DEFAULTS } from '../src/domain/guild-settings.ts';
import { expectedSeconds } from '@yomiage/tts-emulator/audio';
import { type BatchRules, mergeable, pauseAfter, separatorFor } from '../src/speech/queue/batching/merging.ts';
import { NameReader } from '../src/speech/text/names.ts';
import { voiceAudience, type Utterance, type UtteranceInput } from '../src/speech/queue/utterance.ts';
import { normaliseMessage } from '../src/speech/text/text.ts';
import { type ReadLang } from '../src/speech/text/words.ts';
import { mulberry32 } from '../test/support/prng.ts';

export const SCENARIOS = ['cached', 'names', 'unique', 'staggered', 'overload', 'busy', 'voices', 'light'] as const;
export type Scenario = (typeof SCENARIOS)[number];

/** One line of a trace file. */
const TraceLine = z.object({
  at_ms: z.number().finite().min(0),
  guild: z.string().min(1),
  user: z.string().min(1),
  name: z.string(),
  voice: z.string().min(1),
  lang: z.enum(['ja', 'en']),
  kind: z.enum(['auto', 'say']),
  text: z.string(),
  /** The voice channel it is read in (one guild may have several); absent: the guild's one voice channel. */
  channel: z.string().min(1).optional(),
});
export type TraceLine = z.infer<typeof TraceLine>;

/** A message as replayed: the line, and the text the bot reads for it (name prefix + normalised body). */
export interface TraceMessage extends TraceLine {
  index: number;
  /** The author's name as read before the message ('' when not read: same author lately, /say, names off). */
  prefix: string;
  /** The message as read (after text normalisation). */
  body: string;
  /** Who hears it: the guild's voice channel `channel` (one id per guild and channel). */
  audience: string;
}

// ---- the trace file ----

/** Reads a JSON Lines trace; a bad line is an error naming the line. */
export function readTrace(file: string): TraceLine[] {
  const lines = readFileSync(file, 'utf8').split('\n');
  const out: TraceLine[] = [];
  lines.forEach((raw, i) => {
    if (raw.trim() === '') return;
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      throw new Error(`${file}:${i + 1}: not JSON`);
    }
    const parsed = TraceLine.safeParse(json);
    if (!parsed.success) throw new Error(`${file}:${i + 1}: ${z.prettifyError(parsed.error).replace(/\n/g, '; ')}`);
    out.push(parsed.data);
  });
  if (out.length === 0) throw new Error(`${file}: no messages`);
  return out;
}

export function writeTrace(file: string, lines: readonly TraceLine[]): void {
  writeFileSync(
    file,
    lines
      .map((l) =>
        JSON.stringify({
          at_ms: Math.round(l.at_ms),
          guild: l.guild,
          user: l.user,
          name: l.name,
          voice: l.voice,
          lang: l.lang,
          kind: l.kind,
          text: l.text,
          ...(l.channel ? { channel: l.channel } : {}),
        }),
      )
      .join('\n') + '\n',
  );
}

/**
 * The text the bot reads for each line, with its default guild settings: the body normalised as
 * auto-read normalises chat, and the author's name before it unless the same author spoke last
 * within the name window (names.ts). Lines with nothing speakable are left out.
 */
export function asRead(lines: readonly TraceLine[]): TraceMessage[] {
  const sorted = [...lines].sort((a, b) => a.at_ms - b.at_ms);
  let now = 0;
  const names = new NameReader({ clock: { now: () => now, sleep: async () => {} } });
  const out: TraceMessage[] = [];
  for (const line of sorted) {
    now = line.at_ms;
    const lang = line.lang as ReadLang;
    const body = normaliseMessage(
      { content: line.text, authorId: line.user, authorName: line.name, users: {}, roles: {}, channels: {}, attachments: [], stickers: [] },
      { lang, maxLength: GUILD_SETTINGS_DEFAULTS.maxLength },
    );
    if (!body) continue;
    // /say reads the text only; an empty name reads nothing.
    const prefix =
      line.kind === 'auto' && line.name
        ? names.prefix(line.guild, line.user, line.name, lang, GUILD_SETTINGS_DEFAULTS.readAuthorNames)
        : '';
    out.push({ ...line, index: out.length, prefix, body, audience: `${line.guild}/${line.channel ?? 'voice'}` });
  }
  return out;
}

// ---- the offline bound ----

/**
 * The fewest requests that could speak every message with the scheduler's own batch limits
 * (messages and characters per request) and its staleness cut: greedy per audience (a batch grows
 * while the next message may share its request, the request stays within the limits, and the
 * batch's first message is still within the cut when its last arrives), which is optimal for this
 * kind of partition. By default it merges same-voice runs in arrival order; `grouped`, each voice's
 * messages of an audience apart (as the scheduler reads them while requests are scarce: src/speech/queue/policy.ts
 * `batchGroup`). Per spoken message (every message is spoken in the bound).
 */
export function bound(
  trace: readonly TraceMessage[],
  rules: BatchRules,
  o: { grouped?: boolean } = {},
): { requests: number; requestsPerSpoken: number } {
  const requests = requestStarts(trace, rules, o).length;
  return { requests, requestsPerSpoken: requests / trace.length };
}

/** The requests of `bound`'s packing, each as the time of its first message (ascending). */
export function requestStarts(trace: readonly TraceMessage[], rules: BatchRules, o: { grouped?: boolean } = { grouped: true }): number[] {
  const byAudience = new Map<string, TraceMessage[]>();
  for (const m of trace) {
    const u = asUtterance(m);
    // Grouped: one list per voice of the audience (the messages one request may read together).
    const key = o.grouped && u.kind === 'auto' ? JSON.stringify([m.audience, u.voice, u.lang, u.speed, u.pitch]) : m.audience;
    byAudience.set(key, [...(byAudience.get(key) ?? []), m]);
  }
  const starts: number[] = [];
  for (const messages of byAudience.values()) {
    let i = 0;
    while (i < messages.length) {
      const first = asUtterance(messages[i]!);
      const sep = separatorFor(first, rules.separator);
      let chars = rules.countChars(first.text);
      let prev = first;
      let j = i + 1;
      while (j < messages.length && j - i < rules.maxMessages) {
        const next = asUtterance(messages[j]!);
        if (first.kind !== 'auto' || !mergeable(first, next)) break;
        const pause = rules.countChars(pauseAfter(prev.text, sep));
        if (chars + pause + rules.countChars(next.text) > rules.maxChars) break;
        if (next.enqueuedAt - first.enqueuedAt > rules.maxAutoAgeMs) break;
        chars += pause + rules.countChars(next.text);
        prev = next;
        j++;
      }
      starts.push(first.enqueuedAt);
      i = j;
    }
  }
  return starts.sort((a, b) => a - b);
}

/** A trace's message as the auto-read handler gives it to the scheduler: its voice channel's audience, its index as meta. */
export function asInput(m: TraceMessage): UtteranceInput {
  return {
    guildId: m.guild,
    userId: m.user,
    channelId: m.audience,
    audience: voiceAudience(m.audience),
    kind: m.kind,
    text: m.prefix + m.body,
    ...(m.prefix ? { prefix: m.prefix } : {}),
    lang: m.lang,
    voice: m.voice,
    speed: 1,
    pitch: 0,
    meta: m.index,
  };
}

/** The same message as the scheduler holds it once enqueued at the trace's time. */
function asUtterance(m: TraceMessage): Utterance {
  return { ...asInput(m), id: String(m.index), enqueuedAt: m.at_ms };
}

// ---- the built-in scenarios ----

export const JA_NAMES = [
  'たろう',
  'はなこ',
  'ゆうき',
  'さくら',
  'けんた',
  'みさき',
  'りょう',
  'あおい',
  'しょう',
  'ななみ',
  'ひなた',
  'れん',
  'そうた',
  'ゆい',
  'だいき',
  'まお',
  'かいと',
  'りこ',
  'はると',
  'めい',
];
export const EN_NAMES = [
  'Alice',
  'Bob',
  'Carol',
  'Dave',
  'Erin',
  'Frank',
  'Grace',
  'Heidi',
  'Ivan',
  'Judy',
  'Mallory',
  'Niaj',
  'Olivia',
  'Peggy',
  'Rupert',
  'Sybil',
];

// Chat repeats a few short reactions a lot (Zipf-like weights: the first lines are the most common).
const JA_SHORT = [
  '草',
  'おはよう',
  'それな',
  'おつかれ',
  'なるほど',
  'ｗｗｗ',
  '了解です',
  'マジか',
  'ナイス！',
  'おやすみ',
  'ありがとう！',
  'いいね',
];
const EN_SHORT = ['lol', 'gg', 'ok', 'nice', 'same', 'brb', 'lmao', 'thanks!', 'wait what', 'no way', 'good morning'];

// Today's bench vocabulary (the `cached` scenario): 41 fixed lines, short and long, all repeated.
const JA_LINES = [
  '草',
  'おはよう',
  'それな',
  'おつかれ',
  'なるほど',
  'ｗｗｗ',
  '了解です',
  'マジか',
  'ナイス！',
  'おやすみ',
  'ちょっと待って',
  'いまから行く',
  'ありがとう！',
  'それはやばい',
  'ごはん食べてくる',
  '今日の配信見た？',
  'このボス強すぎる',
  '明日は雨らしいよ',
  'よろしくお願いします',
  'さっきのところもう一回やろう',
  '誰か一緒にランク行かない？',
  'ボイスの音量ちょっと下げてもらえる？',
];
const EN_LINES = [
  'lol',
  'gg',
  'ok',
  'nice',
  'same',
  'brb',
  'lmao',
  'good morning',
  'thanks!',
  'wait what',
  'no way',
  'sounds good',
  'on my way',
  'let me check',
  'see you tomorrow',
  'that boss is hard',
  'who is streaming tonight?',
  'can you turn your mic down a bit?',
  'anyone up for a ranked match later?',
];

// Lines nobody has written before: an opener, a subject and what is said of it (2,000+ per language).
const JA_OPEN = ['', 'ねえ', 'てか', 'そういえば', 'あ、', 'ところで'];
const JA_SUBJECT = [
  '今日の配信',
  'さっきの試合',
  '明日の予定',
  '新しいマップ',
  'あのボス',
  '昨日のイベント',
  'ランクマッチ',
  '次のアップデート',
  'あのキャラ',
  '週末の集まり',
  '駅前のラーメン屋',
  '新しいイヤホン',
  'あのアニメの最終回',
  '期末テスト',
  '三時からの練習',
  '金曜の飲み会',
  'さっきの動画',
  'ガチャの結果',
  '来週の大会',
  'サーバーのルール',
];
const JA_SAID = [
  'めっちゃ楽しかった',
  'ちょっと難しすぎない？',
  '何時からだっけ',
  'また今度やろう',
  'いい感じだったね',
  'まだクリアできてない',
  '見逃しちゃった',
  '最高だった',
  'どうするか決めよう',
  'ずっと気になってる',
  '思ったより長かった',
  'みんな来られる？',
  '延期になったらしい',
  'もう一回見たい',
  'ぜんぜん分からなかった',
];
const EN_OPEN = ['', 'hey', 'btw', 'so', 'honestly', 'wait'];
const EN_SUBJECT = [
  "tonight's stream",
  'that last match',
  'the new map',
  'the final boss',
  'the patch notes',
  'our ranked team',
  'the ramen place',
  'my new headset',
  'the season finale',
  'the weekend meetup',
  'the practice at three',
  'the gacha pull',
  "next week's tournament",
  'the server rules',
  'the speedrun',
];
const EN_SAID = [
  'was really fun',
  'is way too hard',
  'starts at nine right?',
  'we should try again',
  'went pretty well',
  'still not cleared',
  'I missed it',
  'was the best',
  'needs a plan',
  'keeps bugging me',
  'took longer than I thought',
  'can everyone make it?',
  'got postponed',
  'is worth another look',
  'made no sense to me',
];

/** The lines a trace's members write: lines nobody wrote before, and common short reactions. */
export class Vocabulary {
  readonly #used = new Set<string>();
  readonly #rand: () => number;
  constructor(rand: () => number) {
    this.#rand = rand;
  }
  #pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.#rand() * xs.length)]!;
  }
  /** A line not used before in this trace. */
  unique(lang: 'ja' | 'en'): string {
    for (let tries = 0; ; tries++) {
      const line =
        lang === 'ja'
          ? `${this.#pick(JA_OPEN)}${this.#pick(JA_SUBJECT)}、${this.#pick(JA_SAID)}`
          : `${this.#pick(EN_OPEN)} ${this.#pick(EN_SUBJECT)} ${this.#pick(EN_SAID)}`.trim();
      // After many tries the pools are nearly used up: a number keeps it unique (and readable).
      const text = tries < 50 ? line : `${line} ${tries}`;
      if (!this.#used.has(text)) {
        this.#used.add(text);
        return text;
      }
    }
  }
  /** A common short reaction, the first ones most often. */
  short(lang: 'ja' | 'en'): string {
    return pickZipf(lang === 'ja' ? JA_SHORT : EN_SHORT, this.#rand());
  }
}

function pickZipf(lines: readonly string[], r: number): string {
  const weights = lines.map((_, i) => 1 / (i + 1));
  let x = r * weights.reduce((a, b) => a + b, 0);
  for (let i = 0; i < lines.length; i++) {
    x -= weights[i]!;
    if (x <= 0) return lines[i]!;
  }
  return lines.at(-1)!;
}

interface Member {
  user: string;
  name: string;
  voice: string;
}

export const guildName = (g: number) => `g${String(g + 1).padStart(2, '0')}`;
const langOf = (g: number): 'ja' | 'en' => (g % 10 < 7 ? 'ja' : 'en');
export const defaultVoice = (lang: 'ja' | 'en') => (lang === 'ja' ? 'ja-JP-Wavenet-B' : 'en-US-Wavenet-A');
const otherVoice = (lang: 'ja' | 'en') => (lang === 'ja' ? 'ja-JP-NanamiNeural' : 'en-US-JennyNeural');

/** Six members of guild `g`: names from the pools (names repeat across servers, as they do), one in five with a voice of their own. */
function members(g: number, lang: 'ja' | 'en', rand: () => number, ownVoice = 0.2): Member[] {
  const pool = lang === 'ja' ? JA_NAMES : EN_NAMES;
  return Array.from({ length: 6 }, (_, u) => ({
    user: `${guildName(g)}-u${u + 1}`,
    name: pool[(g * 7 + u * 3) % pool.length]!,
    // Drawn as today's trace drew it, so `cached` replays exactly the old run.
    voice: rand() < 1 - ownVoice ? defaultVoice(lang) : otherVoice(lang),
  }));
}

/**
 * Today's bench trace (20 guilds, bursty, one very busy guild and three busy ones, the 41 fixed
 * lines, 5% /say), as `cached` (bare phrases, no names: the run the bench always made) or with
 * names and realistic repetition (`names`: 30% common short reactions, the rest lines nobody
 * wrote before) or none (`unique`).
 */
function burstyTrace(seed: number, kind: 'cached' | 'names' | 'unique'): TraceLine[] {
  const rand = mulberry32(seed);
  const words = new Vocabulary(mulberry32(seed + 1));
  const out: TraceLine[] = [];
  const seconds = 180;
  for (let g = 0; g < 20; g++) {
    const lang = langOf(g);
    const users = members(g, lang, rand);
    const weight = g === 0 ? 4 : g <= 3 ? 2 : 1;
    let t = rand() * 90_000;
    while (t < seconds * 1000) {
      // A burst: a few people talking at once, then quiet.
      const size = 3 + Math.floor(rand() * 8);
      const speakers = users.slice(0, 2 + Math.floor(rand() * 3));
      let bt = t;
      for (let i = 0; i < size && bt < seconds * 1000; i++) {
        const m = speakers[Math.floor(rand() * speakers.length)]!;
        const r = rand();
        const text =
          kind === 'cached'
            ? pickZipf(lang === 'ja' ? JA_LINES : EN_LINES, r)
            : kind === 'names' && r < 0.3
              ? words.short(lang)
              : words.unique(lang);
        const say = rand() < 0.05;
        out.push({
          at_ms: bt,
          guild: guildName(g),
          user: m.user,
          name: kind === 'cached' ? '' : m.name,
          voice: m.voice,
          lang,
          kind: say ? 'say' : 'auto',
          text,
        });
        bt += 500 + rand() * 3_500;
      }
      t = bt + (60_000 + rand() * 240_000) / weight;
    }
  }
  return out;
}

/** 20 guilds with the same conversation (9 messages over 24 s, three members, lines nobody wrote before), each starting at a random moment in the first 60 s. */
function staggeredTrace(seed: number): TraceLine[] {
  const rand = mulberry32(seed);
  const words = new Vocabulary(mulberry32(seed + 1));
  const offsets = [0, 2_500, 5_500, 8_000, 11_500, 14_000, 17_500, 21_000, 24_000];
  const authors = [0, 1, 0, 2, 1, 0, 2, 0, 1];
  const out: TraceLine[] = [];
  for (let g = 0; g < 20; g++) {
    const users = members(g, 'ja', rand, 0);
    const start = rand() * 60_000;
    offsets.forEach((dt, i) => {
      const m = users[authors[i]!]!;
      out.push({
        at_ms: start + dt,
        guild: guildName(g),
        user: m.user,
        name: m.name,
        voice: m.voice,
        lang: 'ja',
        kind: 'auto',
        text: words.unique('ja'),
      });
    });
  }
  return out;
}

/**
 * 20 equally busy guilds offering 3x what the budget carries one message per request (90 messages
 * a minute against 30 requests) for 230 s: bursts of 2 to 6 messages 1 to 4 s apart, names read,
 * one member in five with a voice of their own, 30% common short reactions.
 */
function overloadTrace(seed: number): TraceLine[] {
  const rand = mulberry32(seed);
  const words = new Vocabulary(mulberry32(seed + 1));
  const seconds = 230;
  const perGuildPerMs = 90 / 20 / 60_000;
  const out: TraceLine[] = [];
  for (let g = 0; g < 20; g++) {
    const lang = langOf(g);
    const users = members(g, lang, rand);
    let t = rand() * 20_000;
    while (t < seconds * 1000) {
      const size = 2 + Math.floor(rand() * 5);
      const speakers = users.slice(0, 2 + Math.floor(rand() * 4));
      let bt = t;
      for (let i = 0; i < size && bt < seconds * 1000; i++) {
        const m = speakers[Math.floor(rand() * speakers.length)]!;
        const text = rand() < 0.3 ? words.short(lang) : words.unique(lang);
        out.push({ at_ms: bt, guild: guildName(g), user: m.user, name: m.name, voice: m.voice, lang, kind: 'auto', text });
        bt += 1_000 + rand() * 3_000;
      }
      // Quiet until the next burst, so the guild's mean rate is 4.5 messages a minute.
      const meanGap = 4 / perGuildPerMs - (bt - t);
      t = bt + -Math.log(1 - rand()) * Math.max(5_000, meanGap);
    }
  }
  return out;
}

/**
 * One audience's chat from `from` to `to` (ms): bursts of 2 to 6 messages 1 to 4 s apart from 2 to 5
 * of `users`, quiet between bursts so the mean rate is `perMinute`; 30% common short reactions.
 */
function chat(
  out: TraceLine[],
  o: { rand: () => number; words: Vocabulary; guild: string; channel?: string; users: Member[]; lang: 'ja' | 'en' },
  from: number,
  to: number,
  perMinute: number,
): void {
  const { rand, words, users, lang } = o;
  let t = from;
  while (t < to) {
    const size = 2 + Math.floor(rand() * 5);
    const speakers = users.slice(0, 2 + Math.floor(rand() * (users.length - 1)));
    let bt = t;
    for (let i = 0; i < size && bt < to; i++) {
      const m = speakers[Math.floor(rand() * speakers.length)]!;
      const text = rand() < 0.3 ? words.short(lang) : words.unique(lang);
      out.push({
        at_ms: bt,
        guild: o.guild,
        user: m.user,
        name: m.name,
        voice: m.voice,
        lang,
        kind: 'auto',
        text,
        ...(o.channel ? { channel: o.channel } : {}),
      });
      bt += 1_000 + rand() * 3_000;
    }
    const meanGap = (4 * 60_000) / perMinute - (bt - t);
    t = bt + -Math.log(1 - rand()) * Math.max(2_000, meanGap);
  }
}

/**
 * One server whose voice channel is bound by playback, not by the rate: 8 members writing 40 to 60
 * messages a minute (the rate drawn anew every 30 s) for 180 s, names read, one member in five with
 * a voice of their own, 30% common short reactions. Every message one after another, with no gaps.
 */
function busyTrace(seed: number): TraceLine[] {
  const rand = mulberry32(seed);
  const words = new Vocabulary(mulberry32(seed + 1));
  const users: Member[] = Array.from({ length: 8 }, (_, u) => ({
    user: `g01-u${u + 1}`,
    name: JA_NAMES[(u * 3) % JA_NAMES.length]!,
    voice: rand() < 0.8 ? defaultVoice('ja') : otherVoice('ja'),
  }));
  const out: TraceLine[] = [];
  let t = 0;
  while (t < 180_000) {
    const perMinute = 40 + rand() * 20;
    const end = Math.min(180_000, t + 30_000);
    for (; t < end; t += -Math.log(1 - rand()) * (60_000 / perMinute)) {
      const m = users[Math.floor(rand() * users.length)]!;
      const text = rand() < 0.3 ? words.short('ja') : words.unique('ja');
      out.push({ at_ms: t, guild: 'g01', user: m.user, name: m.name, voice: m.voice, lang: 'ja', kind: 'auto', text });
    }
  }
  return out;
}

/**
 * Several voice channels in one server: g01 has two busy voice channels (`v1`, `v2`, 10 messages a
 * minute each, members of their own), four other servers are as busy in their one channel, and 14
 * quiet servers have a burst or two each (about 8 messages in all); 180 s, names read. About 2.7x what the budget carries one
 * message per request. Fair between audiences, each of g01's channels gets what each busy server gets.
 */
function voicesTrace(seed: number): TraceLine[] {
  const rand = mulberry32(seed);
  const words = new Vocabulary(mulberry32(seed + 1));
  const out: TraceLine[] = [];
  for (let g = 0; g < 19; g++) {
    const lang = langOf(g);
    const guild = guildName(g);
    const channels = g === 0 ? ['v1', 'v2'] : [undefined];
    channels.forEach((channel, c) => {
      const users = members(g, lang, rand).map((m) => (channel ? { ...m, user: `${m.user}-${channel}` } : m));
      if (c === 1) users.forEach((m, u) => (m.name = (lang === 'ja' ? JA_NAMES : EN_NAMES)[(u * 5 + 11) % 16]!));
      const perMinute = g <= 4 ? 10 : 1.5;
      chat(out, { rand, words, guild, users, lang, ...(channel ? { channel } : {}) }, rand() * 10_000, 180_000, perMinute);
    });
  }
  return out.sort((a, b) => a.at_ms - b.at_ms);
}

/**
 * No pressure: 3 servers with a burst or two each over 60 s (well under the 15 requests a minute
 * beyond which the limiter starts pacing, and half the service's 30), names read.
 */
function lightTrace(seed: number): TraceLine[] {
  const rand = mulberry32(seed);
  const words = new Vocabulary(mulberry32(seed + 1));
  const out: TraceLine[] = [];
  for (let g = 0; g < 3; g++) {
    const lang = langOf(g);
    chat(out, { rand, words, guild: guildName(g), users: members(g, lang, rand), lang }, rand() * 40_000, 60_000, 1);
  }
  return out.sort((a, b) => a.at_ms - b.at_ms);
}

/** The built-in trace of `scenario` (the same seed gives the same trace). */
export function scenarioTrace(scenario: Scenario, seed: number): TraceLine[] {
  switch (scenario) {
    case 'cached':
    case 'names':
    case 'unique':
      return burstyTrace(seed, scenario);
    case 'staggered':
      return staggeredTrace(seed);
    case 'overload':
      return overloadTrace(seed);
    case 'busy':
      return busyTrace(seed);
    case 'voices':
      return voicesTrace(seed);
    case 'light':
      return lightTrace(seed);
  }
}

/**
 * The waits (unscaled ms) if every message were synthesised alone the moment it arrived, with no
 * rate limit: only its audience's playback ahead of it delays it (the emulator's audio lengths). No
 * mode that speaks every message can wait less; a wait target below this floor is out of reach.
 */
export function playbackFloor(trace: readonly TraceMessage[]): number[] {
  const freeAt = new Map<string, number>();
  return trace.map((m) => {
    const start = Math.max(m.at_ms, freeAt.get(m.audience) ?? 0);
    freeAt.set(
      m.audience,
      start + 1000 * expectedSeconds({ kind: 'standard', text: m.prefix + m.body, voice: m.voice, speed: 1, pitch: 0 }),
    );
    return start - m.at_ms;
  });
}
