import type { Db } from './database.ts';
import { KeyedDictionary } from './keyed-dictionary.ts';
import { rowMapping, type RowOf } from './rows.ts';
import type { Clock } from '../util/clock.ts';

export { DICTIONARY_MAX_ENTRIES, type DictionaryFull } from './keyed-dictionary.ts';

// The dictionary_entries table (migrations/001) and each guild's dictionary version
// (dictionary_versions, migrations/004), bumped in the same transaction as every change.

export interface DictionaryEntry {
  guildId: string;
  word: string;
  reading: string;
  createdBy: string;
  createdAt: number;
}

type Row = RowOf<DictionaryEntry>;

/** Each member's own entries (personal-dictionary.ts), applied after the guild's; the same array while they do not change. */
export interface PersonalEntriesSource {
  own(userId: string): readonly { word: string; reading: string }[];
}

/** The operator's bot-wide entries, applied under each guild's own; `version` changes when they do. */
export interface GlobalDictionarySource {
  entries(): readonly { word: string; reading: string }[];
  version(): number;
}
const rows = rowMapping<DictionaryEntry, Row>();

/**
 * Guilds whose lists (and lists merged with the global dictionary) are kept between messages; past
 * this the cache starts again (a list is one query away), so guilds the bot left or that went quiet
 * are not kept for the life of the process.
 */
export const CACHED_GUILDS = 10_000;

/**
 * A server's dictionary: add (with who wrote it), remove, import and own (what /dictionary lists and
 * exports, longest word first) as every keyed dictionary, and list, what is read in the guild.
 */
export class DictionaryRepo extends KeyedDictionary<DictionaryEntry, string> {
  readonly #effective = new Map<string, { own: readonly DictionaryEntry[]; globalVersion: number; entries: readonly DictionaryEntry[] }>();
  /** (guild, member) -> the guild's list merged with the member's own, while neither changes. */
  readonly #withPersonal = new Map<
    string,
    { base: readonly DictionaryEntry[]; mine: readonly unknown[]; entries: readonly DictionaryEntry[] }
  >();
  #global: GlobalDictionarySource | undefined;
  readonly #personal: PersonalEntriesSource | undefined;

  constructor(db: Db, clock?: Clock, personal?: PersonalEntriesSource) {
    super(
      db,
      clock,
      { entries: 'dictionary_entries', versions: 'dictionary_versions', owner: 'guild_id', stamped: ['created_by'] },
      {
        rows,
        record: (guildId, word, reading, createdAt, createdBy) => ({ guildId, word, reading, createdBy, createdAt }),
        // Entries written before dictionary_versions existed have no version: read as version 0.
        versionedFromStart: false,
        cachedOwners: CACHED_GUILDS,
      },
    );
    this.#personal = personal;
  }

  /** The operator's bot-wide dictionary, applied under every guild's own entries (see list). */
  setGlobal(source: GlobalDictionarySource | undefined): void {
    this.#global = source;
  }

  /**
   * Everything read in the guild: its own entries, the member's personal ones (`userId`: the author
   * whose message or name is read) for words the guild has not defined, and the operator's global
   * ones for words neither has, longest word first (the order to apply them in). The server's entry
   * wins a word both define, so a server's reading of a word holds for everyone in it; the member's
   * fill in what the server does not cover. The same array while nothing changes: treat it as immutable.
   */
  list(guildId: string, userId?: string): readonly DictionaryEntry[] {
    const mine = userId === undefined ? [] : (this.#personal?.own(userId) ?? []);
    if (mine.length === 0) return this.#guildList(guildId);
    const own = this.own(guildId);
    const key = `${guildId}\0${userId}`;
    const cached = this.#withPersonal.get(key);
    const base = this.#guildList(guildId);
    if (cached?.base === base && cached.mine === mine) return cached.entries;
    const entries = merged(guildId, [own, mine, this.#global?.entries() ?? []]);
    if (this.#withPersonal.size >= 1_000) this.#withPersonal.clear();
    this.#withPersonal.set(key, { base, mine, entries });
    return entries;
  }

  #guildList(guildId: string): readonly DictionaryEntry[] {
    const own = this.own(guildId);
    const global = this.#global;
    if (!global || global.entries().length === 0) return own;
    const globalVersion = global.version();
    const cached = this.#effective.get(guildId);
    if (cached?.own === own && cached.globalVersion === globalVersion) return cached.entries;
    const entries = merged(guildId, [own, global.entries()]);
    if (this.#effective.size >= CACHED_GUILDS) this.#effective.clear();
    this.#effective.set(guildId, { own, globalVersion, entries });
    return entries;
  }
}

/**
 * Layers of entries merged, an earlier layer's entry winning a word a later one also has (ASCII
 * letters compared case-blind, as the matcher compares them), sorted longest word first.
 */
function merged(guildId: string, layers: readonly (readonly { word: string; reading: string }[])[]): readonly DictionaryEntry[] {
  const seen = new Set<string>();
  const out: DictionaryEntry[] = [];
  for (const [i, layer] of layers.entries())
    for (const e of layer) {
      const key = e.word.replace(/[A-Z]/g, (c) => c.toLowerCase());
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(
        i === 0
          ? (e as DictionaryEntry)
          : { guildId, word: e.word, reading: e.reading, createdBy: i === layers.length - 1 ? 'operator' : 'member', createdAt: 0 },
      );
    }
  // Stable: among words of one length, the earlier layer's entry stays first.
  return Object.freeze(out.sort((a, b) => [...b.word].length - [...a.word].length));
}
