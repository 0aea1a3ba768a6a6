import type { Repositories } from '../../src/db/repositories.ts';
import type { DictionaryFull } from '../../src/db/dictionary-entries.ts';
import { parseDictionaryWord, parseReading, type DictionaryEntry } from '../../src/speech/dictionary.ts';
import type { Lang } from '../../src/discord/i18n.ts';
import { describeDictionaryProblem } from './dictionary-problems.ts';

// The two dictionaries a member edits: the server's (dictionary editors only, checked by the
// command) and their own personal one (every member, in every server). One shape, so /dictionary's
// subcommands and the Fix reading modal write either the same way.

/** Where an entry goes: the server's dictionary, or the member's own. */
export type DictionaryScope = 'server' | 'me';

/** One dictionary as the commands edit it. */
export interface DictionaryStore {
  readonly scope: DictionaryScope;
  own(): readonly DictionaryEntry[];
  add(word: string, reading: string): Promise<'added' | 'updated' | 'full'>;
  remove(word: string): Promise<boolean>;
  /** All of `entries` or nothing, the limit counted in the same transaction. */
  import(entries: readonly DictionaryEntry[], mode: 'merge' | 'replace'): Promise<{ ok: true; total: number } | DictionaryFull>;
}

/** The dictionary of `scope`: the guild's (changes stamped with the member), or the member's own. */
export function dictionaryStore(repos: Repositories, scope: DictionaryScope, guildId: string, userId: string): DictionaryStore {
  if (scope === 'me') {
    const mine = repos.personalDictionary;
    return {
      scope,
      own: () => mine.own(userId),
      add: (word, reading) => mine.add(userId, word, reading),
      remove: (word) => mine.remove(userId, word),
      import: (entries, mode) => mine.import(userId, entries, mode),
    };
  }
  const server = repos.dictionary;
  return {
    scope,
    own: () => server.own(guildId),
    add: (word, reading) => server.add(guildId, word, reading, userId),
    remove: (word) => server.remove(guildId, word),
    import: (entries, mode) => server.import(guildId, entries, mode, userId),
  };
}

/** A word and its reading checked as /dictionary add checks them: the entry, or the reason as the member reads it. */
export function checkEntry(
  lang: Lang,
  word: string,
  reading: string,
): { ok: true; value: DictionaryEntry } | { ok: false; reason: string } {
  const w = parseDictionaryWord(word);
  if (!w.ok) return { ok: false, reason: describeDictionaryProblem(lang, w.error) };
  const r = parseReading(reading);
  if (!r.ok) return { ok: false, reason: describeDictionaryProblem(lang, r.error) };
  return { ok: true, value: { word: w.value, reading: r.value } };
}
