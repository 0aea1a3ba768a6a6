/**
 * Reading the author's name before a message, and join/leave announcements
 * (as the read-aloud bots people use today do: the author's name, join/leave announcements).
 */
import { truncateChars } from '../../tts/chars.ts';
import type { Clock } from '../../util/clock.ts';
import { systemClock } from '../../util/clock.ts';
import { applyDictionary, type Dictionary } from './dictionary.ts';
import { applyFilters } from './filter.ts';
import type { FilterEntry } from '../../domain/filters.ts';
import { capRuns, cleanName, NAME_MAX_CHARS, sanitise } from './text.ts';
import { WORDS, type ReadLang } from './words.ts';
import { SlidingCounts, type SlidingLimit } from '../../util/sliding-counts.ts';

interface NameReaderOptions {
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
 * A name as it is spoken: the server's filters and dictionary applied (a name a 'skip' filter
 * matches is not spoken, so a member cannot be named with a filtered word; a hard-to-read name gets
 * its reading), emoji and markup dropped, never a mention or URL, capped at `maxChars`. '' when
 * nothing speakable is left.
 */
export function speakableName(
  name: string,
  lang: ReadLang,
  dictionary: Dictionary = [],
  maxChars = NAME_MAX_CHARS,
  filters: readonly FilterEntry[] = [],
): string {
  // Clean without a cap first, so a dictionary word that is the whole (long) name still matches.
  const written = applyFilters(cleanName(name, Number.POSITIVE_INFINITY), filters);
  if (written.skipped) return '';
  const dictionaryRead = applyFilters(applyDictionary(written.text, dictionary), filters);
  if (dictionaryRead.skipped) return '';
  const read = dictionaryRead.text;
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
    dictionary: Dictionary = [],
    filters: readonly FilterEntry[] = [],
  ): string {
    const now = this.#clock.now();
    const last = this.#last.get(audienceKey);
    // The window slides with each message: a steady monologue is one speaker, named once.
    const repeated = last !== undefined && last.authorId === authorId && now - last.at < this.#windowMs;
    this.#last.set(audienceKey, { authorId, at: now });
    if (!enabled || repeated) return '';
    const spoken = speakableName(name, lang, dictionary, this.#maxNameChars, filters);
    return spoken ? WORDS[lang].namePrefix(spoken) : '';
  }

  /** Forgets who spoke last to one audience (`{guildId}:{audience}`), or to every audience of `{guildId}:`, so the next message is named. */
  forget(key: string): void {
    if (!key.endsWith(':')) return void this.#last.delete(key);
    for (const k of this.#last.keys()) if (k.startsWith(key)) this.#last.delete(k);
  }
}

/** "{name}さんが入室しました。" / "{name} joined." (or left); the name goes through the dictionary. */
export function joinAnnouncement(name: string, lang: ReadLang, kind: 'join' | 'leave', dictionary: Dictionary = []): string {
  return announcementOf(speakableName(name, lang, dictionary), lang, kind);
}

/** The announcement of a name as spoken (speakableName); '' gives the unnamed one ("誰かが入室しました。"). */
export function announcementOf(spoken: string, lang: ReadLang, kind: 'join' | 'leave'): string {
  const words = WORDS[lang];
  if (!spoken) return kind === 'join' ? words.joinUnknown : words.leaveUnknown;
  return kind === 'join' ? words.join(spoken) : words.leave(spoken);
}

/**
 * What one member may cause the server to pay for in join/leave announcements (docs/usage.md): the
 * announcements of one member in one server, joins and leaves together, and the different names
 * announced for them. A name already announced is the same text again (a cached clip, free); a new
 * one is a new request.
 */
const ANNOUNCEMENT_LIMITS = {
  /** Announcements in any 10 minutes; more are not spoken (someone flapping or hopping in and out). */
  announcements: { max: 4, windowMs: 10 * 60_000 },
  /** Different names in any 24 hours; past them the member is announced unnamed (one fixed, cached text). */
  names: { max: 3, windowMs: 24 * 60 * 60_000 },
} as const satisfies Record<string, SlidingLimit>;

/** How an announcement is spoken: with the member's name, without it, or not at all. */
type AnnouncementForm = 'named' | 'unnamed' | 'silent';

/**
 * Decides each join/leave announcement of a member, so that renaming and re-joining cannot make
 * the server pay without limit (ANNOUNCEMENT_LIMITS). In memory, per process: keys of members not
 * announced for a day are forgotten, and at most `maxKeys` members are remembered.
 */
export class AnnouncementAllowance {
  readonly #now: () => number;
  readonly #limits: typeof ANNOUNCEMENT_LIMITS;
  readonly #maxKeys: number;
  readonly #counts: SlidingCounts;
  /** `{guildId}:{userId}` -> spoken name -> when it was last announced; least recently announced member first. */
  readonly #names = new Map<string, Map<string, number>>();

  constructor(options: { now: () => number; limits?: typeof ANNOUNCEMENT_LIMITS; maxKeys?: number }) {
    this.#now = options.now;
    this.#limits = options.limits ?? ANNOUNCEMENT_LIMITS;
    this.#maxKeys = options.maxKeys ?? 100_000;
    this.#counts = new SlidingCounts({ ...this.#limits.announcements, now: this.#now, maxKeys: this.#maxKeys });
  }

  /** Counts one announcement of the member, spoken as `spoken` (speakableName; '' when it has none), and says in what form. */
  decide(guildId: string, userId: string, spoken: string): AnnouncementForm {
    const key = `${guildId}:${userId}`;
    if (this.#counts.take(key) > 0) return 'silent';
    if (!spoken) return 'unnamed';
    const now = this.#now();
    const names = this.#names.get(key) ?? new Map<string, number>();
    for (const [name, at] of names) if (at <= now - this.#limits.names.windowMs) names.delete(name);
    const known = names.has(spoken);
    if (!known && names.size >= this.#limits.names.max) return 'unnamed';
    names.set(spoken, now);
    this.#names.delete(key);
    this.#names.set(key, names);
    for (const [k, held] of this.#names) {
      if (this.#names.size <= this.#maxKeys && Math.max(...held.values()) > now - this.#limits.names.windowMs) break;
      this.#names.delete(k);
    }
    return 'named';
  }
}
