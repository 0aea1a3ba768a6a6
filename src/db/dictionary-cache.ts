// The dictionary lists kept in memory for reading (every message reads its server's and its
// author's), bounded by what they hold, not by how many: one member's 5,000 entries of long words
// weigh as much as a thousand small server dictionaries. Shared by the servers' and the members'
// dictionaries, least recently read first out.

import { isPatternWord } from '../domain/dictionary-patterns.ts';

/** One entry as the reader needs it. */
export interface ReadingPair {
  word: string;
  reading: string;
}

/**
 * What one entry costs besides its characters, counted as characters: its object, its place in the
 * matcher's map (src/speech/text/dictionary.ts) and the strings' headers, about 100 bytes.
 */
export const ENTRY_OVERHEAD_CHARS = 48;

/**
 * What a pattern entry (r/…/) costs besides, counted as characters: its compiled program (up to
 * PATTERN_LIMITS.maxStates instructions with their character sets, src/speech/text/safe-pattern.ts),
 * held while its list is. An upper bound, so a cache of patterns stays within its bound too.
 */
const PATTERN_OVERHEAD_CHARS = 16_000;

/** The default bound: about 24-40 MB of heap at two bytes a character (Japanese), with everything an entry costs. */
export const DICTIONARY_CACHE_CHARS = 12_000_000;

/** What a list weighs in the cache: its words' and readings' characters, plus each entry's overhead. */
function listWeight(entries: readonly ReadingPair[]): number {
  let chars = 0;
  for (const e of entries)
    chars += e.word.length + e.reading.length + ENTRY_OVERHEAD_CHARS + (isPatternWord(e.word) ? PATTERN_OVERHEAD_CHARS : 0);
  return chars;
}

/** Lists by key and version, at most `maxChars` of them (listWeight) in all; a list alone heavier than that is never kept. */
export class DictionaryCache {
  readonly maxChars: number;
  /** key -> its list; re-inserted when read, so the map's order is least recently read first. */
  readonly #lists = new Map<string, { version: number; entries: readonly ReadingPair[]; weight: number }>();
  #held = 0;

  constructor(maxChars = DICTIONARY_CACHE_CHARS) {
    this.maxChars = maxChars;
  }

  /** The list kept for `key` at `version`, if any (a list of another version is dropped). */
  get(key: string, version: number): readonly ReadingPair[] | undefined {
    const kept = this.#lists.get(key);
    if (!kept) return undefined;
    this.#lists.delete(key);
    if (kept.version !== version) {
      this.#held -= kept.weight;
      return undefined;
    }
    this.#lists.set(key, kept);
    return kept.entries;
  }

  /** Keeps `entries` for `key` at `version`, dropping the least recently read lists until it fits. */
  set(key: string, version: number, entries: readonly ReadingPair[]): void {
    const before = this.#lists.get(key);
    if (before) {
      this.#lists.delete(key);
      this.#held -= before.weight;
    }
    const weight = listWeight(entries);
    if (weight > this.maxChars) return;
    for (const [k, kept] of this.#lists) {
      if (this.#held + weight <= this.maxChars) break;
      this.#lists.delete(k);
      this.#held -= kept.weight;
    }
    this.#lists.set(key, { version, entries, weight });
    this.#held += weight;
  }

  /** The weight of the lists kept now (listWeight), never above maxChars. */
  get heldChars(): number {
    return this.#held;
  }

  /** How many lists are kept now. */
  get size(): number {
    return this.#lists.size;
  }
}
