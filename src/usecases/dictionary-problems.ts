import type { DictionaryError } from '../speech/text/dictionary.ts';
import type { DictionaryFileFormat, DictionaryFileProblem } from '../speech/text/dictionary-file.ts';
import { t, type Lang, type MessageKey, type Vars } from '../i18n/texts.ts';

// The speech layer names a dictionary problem by its identifier; the identifiers are i18n keys
//, so an identifier without a text in locales/*.json is a type error here.

/** A rejected word or reading as the member reads it (/dictionary add's {reason}). */
export function describeDictionaryProblem(lang: Lang, problem: DictionaryError | DictionaryFileProblem): string {
  const key: MessageKey = problem.identifier;
  // A context value left out keeps its placeholder visible rather than reading "undefined".
  const vars: Vars = Object.fromEntries(Object.entries(problem.context).filter(([, v]) => v !== undefined));
  return t(lang, key, vars);
}

/** One problem of an import file as a line the member reads: "line 3: …" ("entry 3: …" for JSON). */
export function describeDictionaryFileProblem(
  lang: Lang,
  format: DictionaryFileFormat | undefined,
  problem: DictionaryFileProblem,
): string {
  const text = describeDictionaryProblem(lang, problem);
  if (!('at' in problem)) return text;
  return t(lang, format === 'json' ? 'dictfile.at_entry' : 'dictfile.at_line', { at: problem.at, problem: text });
}
