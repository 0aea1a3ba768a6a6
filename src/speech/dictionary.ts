/**
 * The per-server reading dictionary: word -> reading replacements (read-aloud-bots.md, "dictionary").
 * Pure: the store lives elsewhere; this module validates entries and applies them to text.
 */
import { countChars } from '../tts/chars.ts';

export interface DictionaryEntry {
  word: string;
  reading: string;
}

export const DICTIONARY_LIMITS = { wordMaxChars: 50, readingMaxChars: 100 } as const;

/** Identifiers of the validation failures, the i18n keys the UI shows (STYLE.md #5). */
export type DictionaryErrorIdentifier =
  | 'dictionary.word_empty'
  | 'dictionary.word_too_long'
  | 'dictionary.word_mention'
  | 'dictionary.word_invalid_character'
  | 'dictionary.reading_empty'
  | 'dictionary.reading_too_long'
  | 'dictionary.reading_mention'
  | 'dictionary.reading_url'
  | 'dictionary.reading_invalid_character';

export interface DictionaryError {
  identifier: DictionaryErrorIdentifier;
  context: { max?: number; length?: number };
}

export type ParseResult<T> = { ok: true; value: T } | { ok: false; error: DictionaryError };

/** A human explanation of each identifier, ja/en, for the lead's `dictionary.invalid` {reason}. */
export const DICTIONARY_ERROR_TEXT = {
  'dictionary.word_empty': { ja: '語句が空です。', en: 'The word is empty.' },
  'dictionary.word_too_long': { ja: '語句は{max}文字までです。', en: 'The word can be at most {max} characters.' },
  'dictionary.word_mention': { ja: '語句にメンションは使えません。', en: 'The word cannot contain a mention.' },
  'dictionary.word_invalid_character': { ja: '語句に改行や制御文字は使えません。', en: 'The word cannot contain line breaks or control characters.' },
  'dictionary.reading_empty': { ja: '読み方が空です。', en: 'The reading is empty.' },
  'dictionary.reading_too_long': { ja: '読み方は{max}文字までです。', en: 'The reading can be at most {max} characters.' },
  'dictionary.reading_mention': { ja: '読み方にメンションは使えません。', en: 'The reading cannot contain a mention.' },
  'dictionary.reading_url': { ja: '読み方にURLは使えません。', en: 'The reading cannot contain a URL.' },
  'dictionary.reading_invalid_character': { ja: '読み方に改行や制御文字は使えません。', en: 'The reading cannot contain line breaks or control characters.' },
} as const satisfies Record<DictionaryErrorIdentifier, { ja: string; en: string }>;

/** Mentions and mass pings as Discord writes them in message content. */
export const MENTION_LIKE = /<[@#]|@everyone|@here/i;
/** What text.ts replaces with the URL word; a reading must not bring one back. */
export const URL_LIKE = /https?:\/\/|\bwww\.[^\s.]|\bdiscord(?:\.gg|(?:app)?\.com\/invite)\//i;
// Control and format characters (newline, tab, zero-width, bidi), private-use characters (text.ts
// uses them internally) and lone surrogates never belong in a word or reading.
const INVALID_CHARACTER = /[\p{Cc}\p{Cf}\p{Co}\p{Cs}]/u;

function fail<T>(identifier: DictionaryErrorIdentifier, context: DictionaryError['context'] = {}): ParseResult<T> {
  return { ok: false, error: { identifier, context } };
}

/**
 * Validates a dictionary word. The value is trimmed and NFKC-normalised, because text.ts matches
 * against NFKC-normalised message text (so "ｗ" and "w", "ｶﾅ" and "カナ" are the same word).
 */
export function parseDictionaryWord(input: string): ParseResult<string> {
  const value = input.normalize('NFKC').trim();
  if (value.length === 0) return fail('dictionary.word_empty');
  const length = countChars(value);
  if (length > DICTIONARY_LIMITS.wordMaxChars) return fail('dictionary.word_too_long', { max: DICTIONARY_LIMITS.wordMaxChars, length });
  if (MENTION_LIKE.test(value)) return fail('dictionary.word_mention');
  if (INVALID_CHARACTER.test(value)) return fail('dictionary.word_invalid_character');
  return { ok: true, value };
}

/** Validates a reading (what the word is replaced with); trimmed and NFKC-normalised like words. */
export function parseReading(input: string): ParseResult<string> {
  const value = input.normalize('NFKC').trim();
  if (value.length === 0) return fail('dictionary.reading_empty');
  const length = countChars(value);
  if (length > DICTIONARY_LIMITS.readingMaxChars) return fail('dictionary.reading_too_long', { max: DICTIONARY_LIMITS.readingMaxChars, length });
  if (MENTION_LIKE.test(value)) return fail('dictionary.reading_mention');
  if (URL_LIKE.test(value)) return fail('dictionary.reading_url');
  if (INVALID_CHARACTER.test(value)) return fail('dictionary.reading_invalid_character');
  return { ok: true, value };
}

/** Validates both halves of an entry; the first failure wins (word before reading). */
export function parseDictionaryEntry(word: string, reading: string): ParseResult<DictionaryEntry> {
  const w = parseDictionaryWord(word);
  if (!w.ok) return w;
  const r = parseReading(reading);
  if (!r.ok) return r;
  return { ok: true, value: { word: w.value, reading: r.value } };
}

// ASCII-only case folding keeps string lengths (and so match positions) identical to the input.
function foldAscii(s: string): string {
  return s.replace(/[A-Z]/g, (c) => c.toLowerCase());
}

const ASCII_ALNUM = /[A-Za-z0-9]/;

interface Compiled {
  folded: string;
  reading: string;
  /** The word starts/ends with an ASCII letter or digit, so it must not match inside a longer ASCII word. */
  boundStart: boolean;
  boundEnd: boolean;
}

/** Entries grouped by their first (folded) UTF-16 unit, longest word first; cached per entries array. */
const compiledCache = new WeakMap<readonly DictionaryEntry[], Map<string, Compiled[]>>();

function compile(entries: readonly DictionaryEntry[]): Map<string, Compiled[]> {
  const cached = compiledCache.get(entries);
  if (cached) return cached;
  const byFirst = new Map<string, Compiled[]>();
  const seen = new Set<string>();
  for (const e of entries) {
    if (e.word.length === 0) continue; // an empty word would match everywhere
    const folded = foldAscii(e.word);
    if (seen.has(folded)) continue; // the first entry for a word wins
    seen.add(folded);
    const c: Compiled = {
      folded,
      reading: e.reading,
      boundStart: ASCII_ALNUM.test(folded[0]!),
      boundEnd: ASCII_ALNUM.test(folded[folded.length - 1]!),
    };
    const key = folded[0]!;
    const list = byFirst.get(key);
    if (list) list.push(c);
    else byFirst.set(key, [c]);
  }
  // Stable sort: longest first, ties keep the given order.
  for (const list of byFirst.values()) list.sort((a, b) => b.folded.length - a.folded.length);
  compiledCache.set(entries, byFirst);
  return byFirst;
}

/**
 * Replaces dictionary words with their readings: at each position the longest matching word wins,
 * in one left-to-right pass, so a reading is never itself replaced again. ASCII letters match
 * case-insensitively; a word starting (ending) with an ASCII letter or digit only matches where it
 * is not preceded (followed) by another one, so "on" -> "オン" leaves "done" alone.
 */
export function applyDictionary(text: string, entries: readonly DictionaryEntry[]): string {
  if (entries.length === 0 || text.length === 0) return text;
  const byFirst = compile(entries);
  const folded = foldAscii(text);
  let out = '';
  let i = 0;
  while (i < text.length) {
    const candidates = byFirst.get(folded[i]!);
    let matched: Compiled | undefined;
    if (candidates) {
      for (const c of candidates) {
        if (!folded.startsWith(c.folded, i)) continue;
        if (c.boundStart && i > 0 && ASCII_ALNUM.test(folded[i - 1]!)) continue;
        const end = i + c.folded.length;
        if (c.boundEnd && end < folded.length && ASCII_ALNUM.test(folded[end]!)) continue;
        matched = c;
        break;
      }
    }
    if (matched) {
      out += matched.reading;
      i += matched.folded.length;
    } else {
      // Copy a whole code point so a surrogate pair is never split between iterations.
      const cp = text.codePointAt(i)!;
      const width = cp > 0xffff ? 2 : 1;
      out += text.slice(i, i + width);
      i += width;
    }
  }
  return out;
}
