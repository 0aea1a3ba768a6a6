// A server's filters against 荒らし (/filter, the dashboard): words and patterns (r/…/,
// src/domain/dictionary-patterns.ts) whose messages are never read, or whose matches are read as a
// word the admins chose; and the flood limit, past which a member's messages are summarised.
// Stored by src/db/text-filters.ts, applied by src/speech/text/filter.ts.

/** 'skip': a message it matches is not read at all; 'replace': each match is read as `reading`. */
export type FilterAction = 'skip' | 'replace';

/** One filter as the reader needs it (the shape of a dictionary entry: what it matches, what is read instead). */
export interface FilterEntry {
  /** A word matched as written (ASCII letters in either case, whole where it starts or ends with one), or r/…/. */
  word: string;
  /** What a match is read as ('' for a skip). */
  reading: string;
  action: FilterAction;
}

/** One filter as it is listed: who added it and when. */
export interface FilterRecord extends FilterEntry {
  guildId: string;
  createdBy: string;
  createdAt: number;
}

/** Per server: filters in all, patterns among them (each is tried on every message), and a replacement's length. */
export const FILTER_LIMITS = { maxEntries: 100, maxPatterns: 20, replacementMaxChars: 20 } as const;

/** What a match is read as when the admin names nothing, in the server's reading language. */
export const DEFAULT_FILTER_READING = { ja: 'ピー', en: 'beep' } as const;

/**
 * The flood limit: more than `max` messages of one member within `windowMs` and the rest are not
 * read one by one but counted in one spoken summary. Off (null) by default.
 */
export const FLOOD_LIMITS = { windowMs: 10_000, min: 2, max: 30 } as const;

/** A server's filter settings besides the list. */
export interface FilterSettings {
  guildId: string;
  /** Messages per member per FLOOD_LIMITS.windowMs read one by one; null: no limit. */
  floodMax: number | null;
}
