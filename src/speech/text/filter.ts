/**
 * A server's filters applied to what is about to be read (src/domain/filters.ts): a message one
 * 'skip' filter matches is not read at all, and each match of a 'replace' filter is read as its
 * word. Words match as written (ASCII letters in either case, whole where they start or end with
 * one); r/…/ filters are patterns of the safe engine, so a filter costs linear time whatever it is.
 * Pure; each list is compiled once (per array: the cached list is one array per version).
 */
import { isPatternWord, patternSource } from '../../domain/dictionary-patterns.ts';
import type { FilterEntry } from '../../domain/filters.ts';
import { compilePattern, literalPattern, PatternScanner, type Pattern } from './safe-pattern.ts';

/** A list as the reader runs it: its skip patterns together, its replace patterns together with their words. */
interface CompiledFilter {
  skip: PatternScanner | undefined;
  replace: PatternScanner | undefined;
  readings: string[];
}

const compiledLists = new WeakMap<readonly FilterEntry[], CompiledFilter>();

function compiledOf(entries: readonly FilterEntry[]): CompiledFilter {
  const known = compiledLists.get(entries);
  if (known) return known;
  const skip: Pattern[] = [];
  const replace: { pattern: Pattern; reading: string }[] = [];
  // Longest first, as the list shows them: of two filters matching at one place, the longer is tried first.
  const sorted = [...entries].sort((a, b) => b.word.length - a.word.length || (a.word < b.word ? -1 : 1));
  for (const e of sorted) {
    let pattern: Pattern;
    if (isPatternWord(e.word)) {
      const compiled = compilePattern(patternSource(e.word));
      if (!compiled.ok) continue; // checked when added; one a stricter limit refuses since is left out
      pattern = compiled.value;
    } else if (e.word.length > 0) pattern = literalPattern(e.word);
    else continue;
    if (e.action === 'skip') skip.push(pattern);
    else replace.push({ pattern, reading: e.reading });
  }
  const list: CompiledFilter = {
    skip: skip.length > 0 ? new PatternScanner(skip) : undefined,
    replace: replace.length > 0 ? new PatternScanner(replace.map((r) => r.pattern)) : undefined,
    readings: replace.map((r) => r.reading),
  };
  compiledLists.set(entries, list);
  return list;
}

/** What a filter list makes of a text: skipped whole, or the text with each replaced match read as its word. */
type Filtered = { skipped: true } | { skipped: false; text: string };

/** Applies a server's filters to `text` (already in one spelling, src/speech/text/spelling.ts). */
export function applyFilters(text: string, entries: readonly FilterEntry[]): Filtered {
  if (entries.length === 0 || text.length === 0) return { skipped: false, text };
  const list = compiledOf(entries);
  if (list.skip?.test(text)) return { skipped: true };
  if (!list.replace) return { skipped: false, text };
  let out = '';
  let at = 0;
  for (const m of list.replace.all(text)) {
    out += text.slice(at, m.start) + list.readings[m.pattern]!;
    at = m.end;
  }
  return { skipped: false, text: out + text.slice(at) };
}
