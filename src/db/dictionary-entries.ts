import type { Db } from './database.ts';
import { KeyedDictionary } from './keyed-dictionary.ts';
import { rowMapping, type RowOf } from './rows.ts';
import type { Clock } from '../util/clock.ts';
import type { DictionaryCache, ReadingPair } from './dictionary-cache.ts';

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

/** Each member's own entries (personal-dictionary.ts), read after the guild's; the same array while they do not change. */
export interface PersonalEntriesSource {
  readable(userId: string): readonly ReadingPair[];
}

/** The operator's bot-wide entries, applied under each guild's own: one array, shared by every guild. */
export interface GlobalDictionarySource {
  entries(): readonly ReadingPair[];
}
const rows = rowMapping<DictionaryEntry, Row>();

/**
 * What is read for one author in one guild: the dictionaries in order of precedence, each the
 * array its owner's cache keeps (src/speech/text/dictionary.ts LayeredDictionary compiles each once).
 */
export interface ReadingLayers {
  readonly layers: readonly (readonly ReadingPair[])[];
}

/**
 * A server's dictionary: add (with who wrote it), remove, import, own (what /dictionary lists and
 * exports, longest word first) and readable as every keyed dictionary, and list, what is read in the guild.
 */
export class DictionaryRepo extends KeyedDictionary<DictionaryEntry, string> {
  #global: GlobalDictionarySource | undefined;
  readonly #personal: PersonalEntriesSource | undefined;

  constructor(db: Db, clock?: Clock, personal?: PersonalEntriesSource, cache?: DictionaryCache) {
    super(
      db,
      clock,
      { entries: 'dictionary_entries', versions: 'dictionary_versions', owner: 'guild_id', stamped: ['created_by'] },
      {
        rows,
        record: (guildId, word, reading, createdAt, createdBy) => ({ guildId, word, reading, createdBy, createdAt }),
        // Entries written before dictionary_versions existed have no version: read as version 0.
        versionedFromStart: false,
        ...(cache ? { cache } : {}),
      },
    );
    this.#personal = personal;
  }

  /** The operator's bot-wide dictionary, applied under every guild's own entries (see list). */
  setGlobal(source: GlobalDictionarySource | undefined): void {
    this.#global = source;
  }

  /**
   * Everything read in the guild for an author (`userId`: whose message or name is read), in order
   * of precedence: the guild's own entries, the member's personal ones, the operator's global ones.
   * The server's entry wins a word several define, so a server's reading of a word holds for
   * everyone in it; the member's fill in what the server does not cover. Nothing is merged or
   * copied: each layer is the one array its owner has (the global list is the same for every guild).
   */
  list(guildId: string, userId?: string): ReadingLayers {
    const layers = [
      this.readable(guildId),
      userId === undefined ? [] : (this.#personal?.readable(userId) ?? []),
      this.#global?.entries() ?? [],
    ];
    return { layers: layers.filter((l) => l.length > 0) };
  }
}
