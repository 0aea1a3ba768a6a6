// A dictionary entry or a filter written r/…/ is a pattern (src/speech/text/safe-pattern.ts), as
// ゆっくりボイス writes its regular-expression entries; any other is a word matched as written.
// Stored as written, in the same column as words, so listing, removing, import and export keep it.

/** Whether an entry's word is a pattern: r/, at least one character, / (in SQL: PATTERN_WORD_GLOB). */
export function isPatternWord(word: string): boolean {
  return word.length >= 4 && word.startsWith('r/') && word.endsWith('/');
}

/** The pattern inside r/…/. */
export function patternSource(word: string): string {
  return word.slice(2, -1);
}

/** The same rule as isPatternWord, for SQL (GLOB is case-sensitive, as the rule is). */
export const PATTERN_WORD_GLOB = 'r/?*/';

/**
 * Most patterns one dictionary (a server's, a member's, a shared list) holds: each is tried on every
 * message it reads, so they are counted apart from words (DICTIONARY_MAX_ENTRIES counts both).
 */
export const DICTIONARY_MAX_PATTERNS = 20;
