import type { Repositories } from '../db/repositories.ts';
import type { Actor } from '../domain/audit.ts';
import { UserError } from '../i18n/errors.ts';
import { DICTIONARY_MAX_ENTRIES } from '../db/keyed-dictionary.ts';
import { DICTIONARY_MAX_PATTERNS } from '../domain/dictionary-patterns.ts';
import type { DictionaryFull } from '../db/keyed-dictionary.ts';
import { parseDictionaryWord, parseReading, type DictionaryEntry } from '../speech/text/dictionary.ts';
import { t, type Lang } from '../i18n/texts.ts';
import { parseDictionaryFile } from '../speech/text/dictionary-file.ts';
import { describeDictionaryFileProblem, describeDictionaryProblem } from './dictionary-problems.ts';

// The two dictionaries a member edits: the server's (dictionary editors only, checked by the
// command) and their own personal one (every member, in every server). One shape, so /dictionary's
// subcommands and the Fix reading modal write either the same way.

/** Where an entry goes: the server's dictionary, or the member's own. */
export type DictionaryScope = 'server' | 'me';

/** One dictionary as the commands edit it. */
export interface DictionaryStore {
  readonly scope: DictionaryScope;
  own(): readonly DictionaryEntry[];
  add(word: string, reading: string): Promise<'added' | 'updated' | 'full' | 'patterns_full'>;
  remove(word: string): Promise<boolean>;
  /** All of `entries` or nothing, the limit counted in the same transaction. */
  import(entries: readonly DictionaryEntry[], mode: 'merge' | 'replace'): Promise<{ ok: true; total: number } | DictionaryFull>;
}

/**
 * The dictionary of `scope`: the guild's (changes stamped with the member, and recorded in the
 * audit log when `actor` says who made them), or the member's own.
 */
export function dictionaryStore(
  repos: Repositories,
  scope: DictionaryScope,
  guildId: string,
  userId: string,
  actor?: Actor,
): DictionaryStore {
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
  const audit = async (action: string, detail: Record<string, unknown>) => {
    if (actor) await repos.audit.record(guildId, actor, action, detail);
  };
  return {
    scope,
    own: () => server.own(guildId),
    async add(word, reading) {
      const result = await server.add(guildId, word, reading, userId);
      if (result === 'added' || result === 'updated') await audit('dictionary.add', { word, reading });
      return result;
    },
    async remove(word) {
      const removed = await server.remove(guildId, word);
      if (removed) await audit('dictionary.remove', { word });
      return removed;
    },
    async import(entries, mode) {
      const result = await server.import(guildId, entries, mode, userId);
      if (result.ok) await audit('dictionary.import', { mode, count: entries.length, total: result.total });
      return result;
    },
  };
}

/** /dictionary add's rule: the entry checked, then added (or changed) within the limit; what to tell the member otherwise. */
export async function addEntry(store: DictionaryStore, lang: Lang, word: string, reading: string): Promise<DictionaryEntry> {
  const entry = checkEntry(lang, word, reading);
  if (!entry.ok) throw new UserError('dictionary.invalid', { vars: { reason: entry.reason } });
  // Counted in the write's own transaction: a dictionary holds at most DICTIONARY_MAX_ENTRIES, of them DICTIONARY_MAX_PATTERNS patterns.
  const result = await store.add(entry.value.word, entry.value.reading);
  if (result === 'full')
    throw new UserError(store.scope === 'me' ? 'dictionary.mine_full' : 'dictionary.full', { vars: { max: DICTIONARY_MAX_ENTRIES } });
  if (result === 'patterns_full') throw new UserError('dictionary.patterns_full', { vars: { max: DICTIONARY_MAX_PATTERNS } });
  return entry.value;
}

/** Why an import was refused where it was written (a limit passed since the summary), as the member reads it. */
export function importRefusal(lang: Lang, refused: DictionaryFull): string {
  return t(lang, refused.kind === 'patterns' ? 'dictionary.import_over_patterns' : 'dictionary.import_over_total', {
    count: refused.total,
    max: refused.max,
  });
}

/** /dictionary remove's rule: the word removed, or what to tell the member when it was not there. */
export async function removeEntry(store: DictionaryStore, word: string): Promise<string> {
  const trimmed = word.trim();
  if (!(await store.remove(trimmed)))
    throw new UserError(store.scope === 'me' ? 'dictionary.mine_not_found' : 'dictionary.not_found', { vars: { word: trimmed } });
  return trimmed;
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

/** Problems of an import file listed at most; the rest are counted. */
const SHOWN_PROBLEMS = 15;

/**
 * Whether a member may edit the server's dictionary: Manage Server, or the role the admins allowed
 * (/dictionary editors). The one rule for the command and the web dashboard.
 */
export function mayEditDictionary(
  repos: Repositories,
  guildId: string,
  member: { manageGuild: boolean; hasRole(roleId: string): boolean },
): boolean {
  if (member.manageGuild) return true;
  const roleId = repos.controls.get(guildId).dictionaryRoleId;
  return roleId !== null && member.hasRole(roleId);
}

/** What an import would do: the summary /dictionary import shows before Merge or Replace (nothing changed yet). */
interface ImportSummary {
  count: number;
  added: number;
  changed: number;
  unchanged: number;
  removed: number;
  total: number;
}

/**
 * A dictionary file read and checked whole, as /dictionary import and the dashboard read it: its
 * entries and what merging or replacing would do, or the problems as the member reads them.
 */
export function checkImport(
  lang: Lang,
  store: DictionaryStore,
  fileName: string,
  bytes: Uint8Array,
): { ok: true; entries: DictionaryEntry[]; summary: ImportSummary } | { ok: false; problems: string[] } {
  const parsed = parseDictionaryFile(fileName, bytes);
  if (!parsed.ok) {
    const problems = parsed.file ? [parsed.file] : parsed.rows;
    const lines = problems.slice(0, SHOWN_PROBLEMS).map((p) => describeDictionaryFileProblem(lang, parsed.format, p));
    if (problems.length > SHOWN_PROBLEMS) lines.push(t(lang, 'dictionary.import_more', { count: problems.length - SHOWN_PROBLEMS }));
    return { ok: false, problems: lines };
  }
  const entries = parsed.entries;
  const own = new Map(store.own().map((e) => [e.word, e.reading]));
  const added = entries.filter((e) => !own.has(e.word)).length;
  const changed = entries.filter((e) => own.has(e.word) && own.get(e.word) !== e.reading).length;
  const inFile = new Set(entries.map((e) => e.word));
  const removed = [...own.keys()].filter((w) => !inFile.has(w)).length;
  return {
    ok: true,
    entries: [...entries],
    summary: { count: entries.length, added, changed, unchanged: entries.length - added - changed, removed, total: own.size },
  };
}
