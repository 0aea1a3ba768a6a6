import type { Db } from './database.ts';
import { KeyedDictionary } from './keyed-dictionary.ts';
import { rowMapping, type RowOf } from './rows.ts';
import type { Clock } from '../util/clock.ts';
import type { DictionaryCache, ReadingPair } from './dictionary-cache.ts';
import type { DictionarySharingRepo } from './dictionary-sharing.ts';

// The dictionary_entries table (migrations/001) and each guild's dictionary version
// (dictionary_versions, migrations/004), bumped in the same transaction as every change.

interface DictionaryEntry {
  guildId: string;
  word: string;
  reading: string;
  createdBy: string;
  createdAt: number;
}

type Row = RowOf<DictionaryEntry>;

/** Each member's own entries (personal-dictionary.ts), read after the guild's; the same array while they do not change. */
interface PersonalEntriesSource {
  readable(userId: string): readonly ReadingPair[];
}

/** The operator's bot-wide entries, applied under each guild's own: one array, shared by every guild. */
interface GlobalDictionarySource {
  entries(): readonly ReadingPair[];
}

/** The operator's curated lists (CURATED_DICTIONARIES_DIR), which servers may follow: each one array, shared by its followers. */
interface CuratedDictionarySource {
  /** The list's entries, or undefined when there is no such list (now). */
  entries(name: string): readonly ReadingPair[] | undefined;
  /** Every list's name. */
  names(): readonly string[];
}
const rows = rowMapping<DictionaryEntry, Row>();

/**
 * What is read for one author in one guild: the dictionaries in order of precedence, each the
 * array its owner's cache keeps (src/speech/text/dictionary.ts LayeredDictionary compiles each once).
 */
interface ReadingLayers {
  readonly layers: readonly (readonly ReadingPair[])[];
}

/**
 * A server's dictionary: add (with who wrote it), remove, import, own (what /dictionary lists and
 * exports, longest word first) and readable as every keyed dictionary, and list, what is read in the guild.
 */
export class DictionaryRepo extends KeyedDictionary<DictionaryEntry, string> {
  #global: GlobalDictionarySource | undefined;
  #curated: CuratedDictionarySource | undefined;
  readonly #personal: PersonalEntriesSource | undefined;
  readonly #sharing: DictionarySharingRepo | undefined;

  constructor(db: Db, clock?: Clock, personal?: PersonalEntriesSource, cache?: DictionaryCache, sharing?: DictionarySharingRepo) {
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
    this.#sharing = sharing;
  }

  /** The operator's bot-wide dictionary, applied under every guild's own entries (see list). */
  setGlobal(source: GlobalDictionarySource | undefined): void {
    this.#global = source;
  }

  /** The operator's curated lists, which a guild may follow (see list). */
  setCurated(source: CuratedDictionarySource | undefined): void {
    this.#curated = source;
  }

  /** The curated lists' names (none without CURATED_DICTIONARIES_DIR). */
  curatedNames(): readonly string[] {
    return this.#curated?.names() ?? [];
  }

  /** Whether a curated list of that name exists now. */
  hasCurated(name: string): boolean {
    return this.#curated?.entries(name) !== undefined;
  }

  /**
   * What the guild follows, as read now, in the order it follows them: another server's own entries
   * (the array its cache keeps, so one compiled list for its followers and itself) while that server
   * lets others follow it, a curated list while it exists; else nothing for that one.
   */
  followed(guildId: string): (readonly ReadingPair[])[] {
    const follows = this.#sharing?.follows(guildId) ?? [];
    return follows.map((f) =>
      f.kind === 'guild'
        ? this.#sharing!.isFollowable(f.source)
          ? this.readable(f.source)
          : []
        : (this.#curated?.entries(f.source) ?? []),
    );
  }

  /**
   * Everything read in the guild for an author (`userId`: whose message or name is read), in order
   * of precedence: the guild's own entries, the member's personal ones, the dictionaries the guild
   * follows (another server's, a curated list), the operator's global ones. The server's entry wins
   * a word several define, so a server's reading of a word holds for everyone in it; the member's
   * and the followed ones fill in what the server does not cover. Nothing is merged or copied: each
   * layer is the one array its owner has (a followed or global list is the same for every guild).
   */
  list(guildId: string, userId?: string): ReadingLayers {
    const layers = [
      this.readable(guildId),
      userId === undefined ? [] : (this.#personal?.readable(userId) ?? []),
      ...this.followed(guildId),
      this.#global?.entries() ?? [],
    ];
    return { layers: layers.filter((l) => l.length > 0) };
  }
}
