/**
 * The per-server reading dictionary: word -> reading replacements (as in the read-aloud bots people use today).
 * An entry's word may be a pattern written r/…/ (src/domain/dictionary-patterns.ts, src/speech/text/safe-pattern.ts).
 * Pure: the store lives elsewhere; this module validates entries and applies them to text.
 */
import { countChars } from '../../tts/chars.ts';
import { isPatternWord, patternSource } from '../../domain/dictionary-patterns.ts';
import { normaliseSpelling } from './spelling.ts';
import { compilePattern, PatternScanner, type Pattern } from './safe-pattern.ts';
import type { PatternErrorIdentifier } from './pattern-syntax.ts';

export interface DictionaryEntry {
  word: string;
  reading: string;
}

export const DICTIONARY_LIMITS = { wordMaxChars: 50, readingMaxChars: 100 } as const;

/** Identifiers of the validation failures: the i18n keys of their texts (src/i18n/locales). */
export type DictionaryErrorIdentifier =
  | 'dictionary.word_empty'
  | 'dictionary.word_too_long'
  | 'dictionary.word_mention'
  | 'dictionary.word_invalid_character'
  | 'dictionary.reading_empty'
  | 'dictionary.reading_too_long'
  | 'dictionary.reading_mention'
  | 'dictionary.reading_url'
  | 'dictionary.reading_invalid_character'
  | PatternErrorIdentifier;

export interface DictionaryError {
  identifier: DictionaryErrorIdentifier;
  /** `position`: where in a pattern it went wrong (1-based). */
  context: { max?: number; length?: number; position?: number };
}

type ParseResult<T> = { ok: true; value: T } | { ok: false; error: DictionaryError };

/** Mentions and mass pings as Discord writes them in message content. */
const MENTION_LIKE = /<[@#]|@everyone|@here/i;
/** What text.ts replaces with the URL word; a reading must not bring one back. */
const URL_LIKE = /https?:\/\/|\bwww\.[^\s.]|\bdiscord(?:\.gg|(?:app)?\.com\/invite)\//i;
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

/**
 * Validates a dictionary word (see parsePart), or a pattern written r/…/: checked and compiled as
 * the engine reads it (the limits of PATTERN_LIMITS, and nothing a backtracking engine needs).
 */
export function parseDictionaryWord(input: string): ParseResult<string> {
  const written = normaliseSpelling(input).trim();
  if (isPatternWord(written)) {
    // Its length is the pattern's (PATTERN_LIMITS), positions counted in the word as written.
    const part = parsePart('word', written, Infinity, [[INVALID_CHARACTER, 'dictionary.word_invalid_character']]);
    if (!part.ok) return part;
    const compiled = compilePattern(patternSource(written));
    if (compiled.ok) return part;
    const { position, ...context } = compiled.error.context;
    return {
      ok: false,
      error: { identifier: compiled.error.identifier, context: { ...context, ...(position ? { position: position + 2 } : {}) } },
    };
  }
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

/**
 * Dictionaries read together, in order of precedence: the first one that defines a word wins it
 * (a server's entries, then the author's own, then the operator's). Each is kept and compiled once
 * on its own and shared by everyone it applies to, never copied into one merged list per server or
 * per member (src/db/dictionary-entries.ts serves them so).
 */
interface LayeredDictionary {
  readonly layers: readonly (readonly DictionaryEntry[])[];
}

/** What applyDictionary reads: one list of entries, or several in order of precedence. Treat either as immutable. */
export type Dictionary = readonly DictionaryEntry[] | LayeredDictionary;

const layersOf = (d: Dictionary): readonly (readonly DictionaryEntry[])[] => ('layers' in d ? d.layers : [d]);

// ASCII-only case folding keeps string lengths (and so match positions) identical to the input;
// a string without an upper-case ASCII letter is kept as it is (not copied).
const ASCII_UPPER = /[A-Z]/;
function foldAscii(s: string): string {
  return ASCII_UPPER.test(s) ? s.replace(/[A-Z]/g, (c) => c.toLowerCase()) : s;
}

const ASCII_ALNUM = /[A-Za-z0-9]/;

/**
 * One list of entries as the matcher reads it: each folded word's reading (the first entry of a
 * word wins), and per first UTF-16 unit the lengths of the words starting with it, longest first.
 * About the size of the words and readings themselves: the strings are the entries' own, and a
 * word costs one map entry (a trie cost one map per character, ~55 MB for 5,000 words of 50).
 */
interface Lexicon {
  readings: Map<string, string>;
  lengths: Map<number, number[]>;
  /** The list's patterns (r/…/ entries), longest first as the list shows them, each with its reading. */
  patterns: { pattern: Pattern; reading: string }[];
}

/** Compiled per entries array (a cached list is one array per version), so each list is compiled once while it is kept. */
const lexicons = new WeakMap<readonly DictionaryEntry[], Lexicon>();
let compiled = 0;

/** How many lists this process has compiled (a cached list is compiled once, not per message or per click). */
export function dictionaryCompilations(): number {
  return compiled;
}

function lexiconOf(entries: readonly DictionaryEntry[]): Lexicon {
  const known = lexicons.get(entries);
  if (known) return known;
  const readings = new Map<string, string>();
  const lengths = new Map<number, number[]>();
  const patterns: Lexicon['patterns'] = [];
  for (const e of entries) {
    if (e.word.length === 0) continue; // an empty word would match everywhere
    if (isPatternWord(e.word)) {
      // Checked when written; one that no longer compiles (a stricter limit since) is left out.
      const compiled = compilePattern(patternSource(e.word));
      if (compiled.ok) patterns.push({ pattern: compiled.value, reading: e.reading });
      continue;
    }
    const folded = foldAscii(e.word);
    if (readings.has(folded)) continue; // the first entry for a word wins
    readings.set(folded, e.reading);
    const first = folded.charCodeAt(0);
    const list = lengths.get(first);
    if (!list) lengths.set(first, [folded.length]);
    else if (!list.includes(folded.length)) list.push(folded.length);
  }
  for (const list of lengths.values()) list.sort((x, y) => y - x);
  patterns.sort((a, b) => b.pattern.source.length - a.pattern.source.length || (a.pattern.source < b.pattern.source ? -1 : 1));
  const lexicon = { readings, lengths, patterns };
  lexicons.set(entries, lexicon);
  compiled++;
  return lexicon;
}

/** The longest word of `lexicon` at `i` of the folded text that respects the ASCII word boundaries, if any. */
function longestAt(lexicon: Lexicon, folded: string, i: number): { length: number; reading: string } | undefined {
  const lengths = lexicon.lengths.get(folded.charCodeAt(i));
  if (!lengths) return undefined;
  for (const length of lengths) {
    const end = i + length;
    if (end > folded.length) continue;
    const word = folded.slice(i, end);
    const reading = lexicon.readings.get(word);
    if (reading === undefined) continue;
    // A word starting (ending) with an ASCII letter or digit only matches where none precedes (follows) it.
    if (ASCII_ALNUM.test(word[0]!) && i > 0 && ASCII_ALNUM.test(folded[i - 1]!)) continue;
    if (ASCII_ALNUM.test(word[word.length - 1]!) && end < folded.length && ASCII_ALNUM.test(folded[end]!)) continue;
    return { length, reading };
  }
  return undefined;
}

/**
 * Replaces dictionary words with their readings (or with `cover`, when given): at each position
 * the longest matching word of any layer wins (of one length, the earlier layer's), in one
 * left-to-right pass, so a reading is never itself replaced again. Then the patterns, in what no
 * word replaced: the leftmost match of any layer's patterns wins (at one place, the earlier
 * layer's, then the longer pattern), again never inside a reading.
 */
function rewrite(text: string, dictionary: Dictionary, cover?: string): string {
  const layers = layersOf(dictionary)
    .filter((entries) => entries.length > 0)
    .map(lexiconOf);
  if (layers.length === 0 || text.length === 0) return text;
  const words = layers.filter((l) => l.readings.size > 0);
  const patterns = layers.flatMap((l) => l.patterns);
  // One scan for every layer's patterns together: linear in the text times their size.
  const scanner = patterns.length > 0 ? new PatternScanner(patterns.map((p) => p.pattern)) : undefined;
  const folded = foldAscii(text);
  let out = '';
  /** Where the text not replaced by a word starts. */
  let run = 0;
  const flush = (end: number) => {
    if (!scanner) return void (out += text.slice(run, end));
    let at = run;
    for (const m of scanner.all(text, run, end)) {
      out += text.slice(at, m.start) + (cover ?? patterns[m.pattern]!.reading);
      at = m.end;
    }
    out += text.slice(at, end);
  };
  let i = 0;
  while (i < text.length) {
    let best: { length: number; reading: string } | undefined;
    for (const lexicon of words) {
      const found = longestAt(lexicon, folded, i);
      if (found && (!best || found.length > best.length)) best = found;
    }
    if (best) {
      flush(i);
      out += cover ?? best.reading;
      i += best.length;
      run = i;
    } else {
      // A whole code point, so a surrogate pair is never split between iterations.
      i += text.codePointAt(i)! > 0xffff ? 2 : 1;
    }
  }
  flush(text.length);
  return out;
}

/**
 * Replaces dictionary words with their readings: at each position the longest matching word wins,
 * in one left-to-right pass, so a reading is never itself replaced again. ASCII letters match
 * case-insensitively; a word starting (ending) with an ASCII letter or digit only matches where it
 * is not preceded (followed) by another one, so "on" -> "オン" leaves "done" alone.
 */
export function applyDictionary(text: string, dictionary: Dictionary): string {
  return rewrite(text, dictionary);
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
export function misreadCandidates(text: string, dictionary: Dictionary, max = 5, maxChars = 45): string[] {
  const plain = normaliseSpelling(text).replace(MARKUP, ' ');
  // The dictionaries as they are read (compiled once while cached), every word covered by one mark.
  const masked = rewrite(plain, dictionary, COVERED);
  const words = new Set<string>();
  for (const [word] of masked.matchAll(CANDIDATE)) {
    if (/^[A-Za-z]$/.test(word) || countChars(word) > maxChars) continue;
    words.add(word);
  }
  // Stable: words of one length keep the order they are written in.
  return [...words].sort((a, b) => countChars(b) - countChars(a)).slice(0, max);
}
