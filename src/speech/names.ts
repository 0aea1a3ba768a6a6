/**
 * Reading the author's name before a message, and join/leave announcements
 * (as the read-aloud bots people use today do: the author's name, join/leave announcements).
 */
import { truncateChars } from '../tts/chars.ts';
import type { Clock } from '../util/clock.ts';
import { systemClock } from '../util/clock.ts';
import { applyDictionary, type DictionaryEntry } from './dictionary.ts';
import { capRuns, cleanName, NAME_MAX_CHARS, sanitise } from './text.ts';
import { WORDS, type ReadLang } from './words.ts';

export interface NameReaderOptions {
  clock?: Clock;
  /** The same author speaking again within this window is not named again (the anchors use 10-60 s). */
  repeatWindowMs?: number;
  /** Longest name read, in characters (code points), after the dictionary. */
  maxNameChars?: number;
}

const DEFAULTS = {
  clock: systemClock,
  repeatWindowMs: 30_000,
  maxNameChars: NAME_MAX_CHARS,
} as const satisfies Required<NameReaderOptions>;

/**
 * A name as it is spoken: dictionary applied (so a hard-to-read name gets its reading), emoji and
 * markup dropped, never a mention or URL, capped at `maxChars`. '' when nothing speakable is left.
 */
export function speakableName(
  name: string,
  lang: ReadLang,
  dictionary: readonly DictionaryEntry[] = [],
  maxChars = NAME_MAX_CHARS,
): string {
  // Clean without a cap first, so a dictionary word that is the whole (long) name still matches.
  const read = applyDictionary(cleanName(name, Number.POSITIVE_INFINITY), dictionary);
  // Runs are capped before the length cut, so a long "ーーー…" prefix does not eat the whole name.
  const s = truncateChars(capRuns(cleanName(sanitise(read, lang), Number.POSITIVE_INFINITY)), maxChars).trim();
  return /[\p{L}\p{N}]/u.test(s) ? s : '';
}

/**
 * Decides, per audience (what one group of people hears: a guild's voice session, or a text
 * channel's posts), whether the next message is prefixed with its author's name: two voice
 * channels of one server each name their own speakers. Keys are `{guildId}:{audience}`.
 */
export class NameReader {
  readonly #clock: Clock;
  readonly #windowMs: number;
  readonly #maxNameChars: number;
  /** `{guildId}:{audience}` -> who spoke last and when; one entry per audience, so no pruning is needed. */
  readonly #last = new Map<string, { authorId: string; at: number }>();

  constructor(options: NameReaderOptions = {}) {
    const o = { ...DEFAULTS, ...options };
    this.#clock = o.clock;
    this.#windowMs = o.repeatWindowMs;
    this.#maxNameChars = o.maxNameChars;
  }

  /**
   * The spoken prefix for a message ("{name}、" / "{name} said, "), or '' when name reading is
   * disabled, the name has nothing speakable, or the same author spoke last to this audience within
   * the window (anyone else speaking in between resets it). Every call records the speaker.
   */
  prefix(
    audienceKey: string,
    authorId: string,
    name: string,
    lang: ReadLang,
    enabled: boolean,
    dictionary: readonly DictionaryEntry[] = [],
  ): string {
    const now = this.#clock.now();
    const last = this.#last.get(audienceKey);
    // The window slides with each message: a steady monologue is one speaker, named once.
    const repeated = last !== undefined && last.authorId === authorId && now - last.at < this.#windowMs;
    this.#last.set(audienceKey, { authorId, at: now });
    if (!enabled || repeated) return '';
    const spoken = speakableName(name, lang, dictionary, this.#maxNameChars);
    return spoken ? WORDS[lang].namePrefix(spoken) : '';
  }

  /** Forgets who spoke last to one audience (`{guildId}:{audience}`), or to every audience of `{guildId}:`, so the next message is named. */
  forget(key: string): void {
    if (!key.endsWith(':')) return void this.#last.delete(key);
    for (const k of this.#last.keys()) if (k.startsWith(key)) this.#last.delete(k);
  }
}

/** "{name}さんが入室しました。" / "{name} joined." (or left); the name goes through the dictionary. */
export function joinAnnouncement(
  name: string,
  lang: ReadLang,
  kind: 'join' | 'leave',
  dictionary: readonly DictionaryEntry[] = [],
): string {
  const words = WORDS[lang];
  const spoken = speakableName(name, lang, dictionary);
  if (!spoken) return kind === 'join' ? words.joinUnknown : words.leaveUnknown;
  return kind === 'join' ? words.join(spoken) : words.leave(spoken);
}
