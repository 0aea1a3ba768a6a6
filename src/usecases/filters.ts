import type { Actor } from '../domain/audit.ts';
import {
  DEFAULT_FILTER_READING,
  FILTER_LIMITS,
  FLOOD_LIMITS,
  type FilterAction,
  type FilterEntry,
  type FilterRecord,
} from '../domain/filters.ts';
import { UserError } from '../i18n/errors.ts';
import { guildLang, type Lang } from '../i18n/texts.ts';
import { countChars } from '../tts/chars.ts';
import { parseDictionaryWord, parseReading } from '../speech/text/dictionary.ts';
import { describeDictionaryProblem } from './dictionary-problems.ts';
import type { UseCaseDeps } from './deps.ts';

// A server's filters against 荒らし, changed by its admins: one rule for /filter and the web
// dashboard (the caller has checked Manage Server). A filter's word is checked as a dictionary's
// (a word, or a pattern written r/…/ the safe engine accepts); what bad input is refused for is said
// in the member's language and nothing is written; every change is in the audit log.

const ACTIONS: readonly FilterAction[] = ['skip', 'replace'];

/** What an admin asks to filter: the word or r/…/, skip or replace (the default), and what a match is read as. */
interface FilterChange {
  word: unknown;
  action?: unknown;
  /** For 'replace': empty or left out reads the server's default ("ピー" / "beep"). */
  reading?: unknown;
}

/** Checks `change` whole, then adds the filter (or changes what it does) and records it; what is stored. */
export async function addFilter(
  ctx: Pick<UseCaseDeps, 'repos'>,
  guildId: string,
  actor: Actor,
  lang: Lang,
  change: FilterChange,
): Promise<FilterEntry> {
  const word = parseDictionaryWord(typeof change.word === 'string' ? change.word : '');
  if (!word.ok) throw new UserError('filter.invalid', { vars: { reason: describeDictionaryProblem(lang, word.error) } });
  const action = change.action ?? 'replace';
  if (!ACTIONS.includes(action as FilterAction)) throw new UserError('filter.bad_action', { vars: { value: String(action).slice(0, 20) } });
  let reading = '';
  if (action === 'replace') {
    const typed = typeof change.reading === 'string' ? change.reading.trim() : '';
    if (typed === '') reading = DEFAULT_FILTER_READING[guildLang(ctx.repos.guildSettings.get(guildId).locale)];
    else {
      const parsed = parseReading(typed);
      if (!parsed.ok) throw new UserError('filter.invalid', { vars: { reason: describeDictionaryProblem(lang, parsed.error) } });
      if (countChars(parsed.value) > FILTER_LIMITS.replacementMaxChars)
        throw new UserError('filter.reading_too_long', { vars: { max: FILTER_LIMITS.replacementMaxChars } });
      reading = parsed.value;
    }
  }
  const entry: FilterEntry = { word: word.value, action: action as FilterAction, reading };
  const result = await ctx.repos.filters.add(guildId, entry, actor.userId);
  if (result === 'full') throw new UserError('filter.full', { vars: { max: FILTER_LIMITS.maxEntries } });
  if (result === 'patterns_full') throw new UserError('filter.patterns_full', { vars: { max: FILTER_LIMITS.maxPatterns } });
  await ctx.repos.audit.record(guildId, actor, 'filter.add', { ...entry });
  return entry;
}

/** Removes a filter; the word, or what to tell the admin when it was not one. */
export async function removeFilter(ctx: Pick<UseCaseDeps, 'repos'>, guildId: string, actor: Actor, typed: unknown): Promise<string> {
  const word = typeof typed === 'string' ? typed.trim() : '';
  if (!(await ctx.repos.filters.remove(guildId, word))) throw new UserError('filter.not_found', { vars: { word: word.slice(0, 110) } });
  await ctx.repos.audit.record(guildId, actor, 'filter.remove', { word });
  return word;
}

/**
 * Sets the flood limit: messages per member per 10 s read one by one (FLOOD_LIMITS), 0 or null
 * for none. Anything else is refused with the range; nothing changes then.
 */
export async function setFloodLimit(
  ctx: Pick<UseCaseDeps, 'repos'>,
  guildId: string,
  actor: Actor,
  messages: unknown,
): Promise<number | null> {
  const off = messages === null || messages === 0;
  if (!off && (typeof messages !== 'number' || !Number.isInteger(messages) || messages < FLOOD_LIMITS.min || messages > FLOOD_LIMITS.max))
    throw new UserError('filter.bad_flood', { vars: { min: FLOOD_LIMITS.min, max: FLOOD_LIMITS.max } });
  const floodMax = off ? null : (messages as number);
  await ctx.repos.filters.setFlood(guildId, floodMax);
  await ctx.repos.audit.record(guildId, actor, 'filter.flood', { floodMax });
  return floodMax;
}

/** The server's filters (longest first) and flood limit, as /filter list and the dashboard show them. */
export function filtersOf(ctx: Pick<UseCaseDeps, 'repos'>, guildId: string): { entries: FilterRecord[]; floodMax: number | null } {
  return { entries: ctx.repos.filters.own(guildId), floodMax: ctx.repos.filters.settings(guildId).floodMax };
}
