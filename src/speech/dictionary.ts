/**
 * The per-server reading dictionary: word -> reading replacements (as in the read-aloud bots people use today).
 * Pure: the store lives elsewhere; this module validates entries and applies them to text.
 */
import { countChars } from '../tts/chars.ts';
import { normaliseSpelling } from './spelling.ts';

export interface DictionaryEntry {
  word: string;
  reading: string;
}

export const DICTIONARY_LIMITS = { wordMaxChars: 50, readingMaxChars: 100 } as const;

/** Identifiers of the validation failures: the i18n keys of their texts (src/discord/locales). */
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
 * The rules of one half of an entry, checked in order after trimming and NFKC normalisation,
 * because text.ts matches against NFKC-normalised message text (so "ｗ" and "w", "ｶﾅ" and "カナ"
 * are the same word). A reading must not bring back what text.ts replaced (a URL).
 */
function parsePart(
  part: 'word' | 'reading',
  input: string,
  maxChars: number,
  forbidden: readonly [RegExp, DictionaryErrorIdentifier][],
): ParseResult<string> {
  const value = normaliseSpelling(input).trim();
  if (value.length === 0) return fail(`dictionary.${part}_empty`);
  const length = countChars(value);
  if (length > maxChars) return fail(`dictionary.${part}_too_long`, { max: maxChars, length });
  for (const [pattern, identifier] of forbidden) if (pattern.test(value)) return fail(identifier);
  return { ok: true, value };
}

/** Validates a dictionary word (see parsePart). */
export function parseDictionaryWord(input: string): ParseResult<string> {
  return parsePart('word', input, DICTIONARY_LIMITS.wordMaxChars, [
    [MENTION_LIKE, 'dictionary.word_mention'],
    [INVALID_CHARACTER, 'dictionary.word_invalid_character'],
  ]);
}

/** Validates a reading (what the word is replaced with); trimmed and NFKC-normalised like words. */
export function parseReading(input: string): ParseResult<string> {
  return parsePart('reading', input, DICTIONARY_LIMITS.readingMaxChars, [
    [MENTION_LIKE, 'dictionary.reading_mention'],
    [URL_LIKE, 'dictionary.reading_url'],
    [INVALID_CHARACTER, 'dictionary.reading_invalid_character'],
  ]);
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

interface TrieNode {
  next: Map<string, TrieNode>;
  /** The entry whose (folded) word ends here, if any. */
  entry?: { reading: string; length: number; boundStart: boolean; boundEnd: boolean };
}

/** A trie over the folded words, one edge per code point, cached per entries array (treat it as immutable). */
const compiledCache = new WeakMap<readonly DictionaryEntry[], TrieNode>();

// A trie keeps a pass linear in text length x longest word, however many words share a prefix
// (a sorted candidate list per first character was quadratic with 1000 words starting "a").
function compile(entries: readonly DictionaryEntry[]): TrieNode {
  const cached = compiledCache.get(entries);
  if (cached) return cached;
  const root: TrieNode = { next: new Map() };
  for (const e of entries) {
    if (e.word.length === 0) continue; // an empty word would match everywhere
    const folded = foldAscii(e.word);
    let node = root;
    for (const unit of folded) {
      // code points, as the matcher walks them
      let child = node.next.get(unit);
      if (!child) node.next.set(unit, (child = { next: new Map() }));
      node = child;
    }
    if (node.entry) continue; // the first entry for a word wins
    node.entry = {
      reading: e.reading,
      length: folded.length,
      boundStart: ASCII_ALNUM.test(folded[0]!),
      boundEnd: ASCII_ALNUM.test(folded[folded.length - 1]!),
    };
  }
  compiledCache.set(entries, root);
  return root;
}

/**
 * Replaces dictionary words with their readings: at each position the longest matching word wins,
 * in one left-to-right pass, so a reading is never itself replaced again. ASCII letters match
 * case-insensitively; a word starting (ending) with an ASCII letter or digit only matches where it
 * is not preceded (followed) by another one, so "on" -> "オン" leaves "done" alone.
 */
export function applyDictionary(text: string, entries: readonly DictionaryEntry[]): string {
  if (entries.length === 0 || text.length === 0) return text;
  const root = compile(entries);
  const folded = foldAscii(text);
  const afterAlnum = (i: number) => i > 0 && ASCII_ALNUM.test(folded[i - 1]!);
  let out = '';
  let i = 0;
  while (i < text.length) {
    // Walk the trie from i; remember the longest word that ends here and respects the boundaries.
    let best: TrieNode['entry'];
    let node: TrieNode | undefined = root;
    let j = i;
    while (node && j < folded.length) {
      const cp = folded.codePointAt(j)!;
      const unit = String.fromCodePoint(cp);
      node = node.next.get(unit);
      j += unit.length;
      const e = node?.entry;
      if (!e) continue;
      if (e.boundStart && afterAlnum(i)) continue;
      if (e.boundEnd && j < folded.length && ASCII_ALNUM.test(folded[j]!)) continue;
      best = e;
    }
    if (best) {
      out += best.reading;
      i += best.length;
    } else {
      // Copy a whole code point so a surrogate pair is never split between iterations.
      const width = text.codePointAt(i)! > 0xffff ? 2 : 1;
      out += text.slice(i, i + width);
      i += width;
    }
  }
  return out;
}

/** Discord markup (mentions, channels, roles, custom emoji, timestamps) and links: never a word to fix. */
const MARKUP = /<[^<>\s]+>|https?:\/\/\S+/g;
/** Kanji runs (with 々 and 〆), and Latin words (letters and digits, joined by ' . - inside a word). */
const CANDIDATE = /[\p{Script=Han}々〆ヶ]+|[A-Za-z][A-Za-z0-9]*(?:['’.-][A-Za-z0-9]+)*/gu;
// Covered text is masked with a private-use character, which no word or reading may contain (INVALID_CHARACTER).
const COVERED = '\uE000';

/**
 * The words of a message most likely misread, to offer for a reading: the longest kanji runs and
 * Latin words the dictionary does not already cover (one letter alone is spelled out, not offered),
 * each once, longest first, at most `max` and at most `maxChars` characters each.
 */
export function misreadCandidates(text: string, entries: readonly DictionaryEntry[], max = 5, maxChars = 45): string[] {
  const plain = normaliseSpelling(text).replace(MARKUP, ' ');
  const masked = applyDictionary(
    plain,
    entries.map((e) => ({ word: e.word, reading: COVERED })),
  );
  const words = new Set<string>();
  for (const [word] of masked.matchAll(CANDIDATE)) {
    if (/^[A-Za-z]$/.test(word) || countChars(word) > maxChars) continue;
    words.add(word);
  }
  // Stable: words of one length keep the order they are written in.
  return [...words].sort((a, b) => countChars(b) - countChars(a)).slice(0, max);
}
