import type { Db } from './database.ts';
import { Repo } from './repo.ts';
import { rowMapping, type RowOf } from './rows.ts';
import type { Clock } from '../util/clock.ts';

// The dictionary_entries table (migrations/001) and each guild's dictionary version
// (dictionary_versions, migrations/004), bumped in the same transaction as every change.

/**
 * Most entries one server's own dictionary holds (the operator's global file is not counted).
 * Checked inside the transaction of every change, so two imports summarised side by side cannot
 * both be merged past it.
 */
export const DICTIONARY_MAX_ENTRIES = 5_000;

/** A change refused because the dictionary would hold more than `max` entries (`total`); nothing was written. */
export interface DictionaryFull {
  ok: false;
  total: number;
  max: number;
}

export interface DictionaryEntry {
  guildId: string;
  word: string;
  reading: string;
  createdBy: string;
  createdAt: number;
}

const statements = (db: Db) => ({
  exists: db.prepare<[string, string], number>('SELECT 1 FROM dictionary_entries WHERE guild_id = ? AND word = ?').pluck(),
  upsert: db.prepare<[Row]>(`
    INSERT INTO dictionary_entries (guild_id, word, reading, created_by, created_at)
    VALUES (@guild_id, @word, @reading, @created_by, @created_at)
    ON CONFLICT (guild_id, word) DO UPDATE SET reading = excluded.reading, created_by = excluded.created_by,
      created_at = excluded.created_at`),
  delete: db.prepare<[string, string]>('DELETE FROM dictionary_entries WHERE guild_id = ? AND word = ?'),
  deleteAll: db.prepare<[string]>('DELETE FROM dictionary_entries WHERE guild_id = ?'),
  count: db.prepare<[string], number>('SELECT count(*) FROM dictionary_entries WHERE guild_id = ?').pluck(),
  // Longest word first, so "GitHub Actions" is replaced before "GitHub" (SQLite length() counts characters).
  list: db.prepare<[string], Row>('SELECT * FROM dictionary_entries WHERE guild_id = ? ORDER BY length(word) DESC, word'),
  version: db.prepare<[string], number>('SELECT version FROM dictionary_versions WHERE guild_id = ?').pluck(),
  bump: db.prepare<[string]>(
    'INSERT INTO dictionary_versions (guild_id, version) VALUES (?, 1) ON CONFLICT (guild_id) DO UPDATE SET version = version + 1',
  ),
});

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

export class DictionaryRepo extends Repo<ReturnType<typeof statements>> {
  /**
   * The last list read per guild with its version: the same array is returned until the guild's
   * dictionary changes (in any process), so the compiled trie cached per array (dictionary.ts)
   * is built once per version instead of once per message.
   */
  readonly #lists = new Map<string, { version: number; entries: DictionaryEntry[] }>();
  readonly #effective = new Map<string, { own: readonly DictionaryEntry[]; globalVersion: number; entries: readonly DictionaryEntry[] }>();
  /** (guild, member) -> the guild's list merged with the member's own, while neither changes. */
  readonly #withPersonal = new Map<
    string,
    { base: readonly DictionaryEntry[]; mine: readonly unknown[]; entries: readonly DictionaryEntry[] }
  >();
  #global: GlobalDictionarySource | undefined;
  readonly #personal: PersonalEntriesSource | undefined;

  constructor(db: Db, clock?: Clock, personal?: PersonalEntriesSource) {
    super(db, clock, statements);
    this.#personal = personal;
  }

  /** The operator's bot-wide dictionary, applied under every guild's own entries (see list). */
  setGlobal(source: GlobalDictionarySource | undefined): void {
    this.#global = source;
  }

  /** Adds the word, or replaces its reading; says which, or 'full' (nothing written) when a new word would pass DICTIONARY_MAX_ENTRIES. */
  add(guildId: string, word: string, reading: string, createdBy: string): Promise<'added' | 'updated' | 'full'> {
    return this.write(() => {
      const existed = this.sql.exists.get(guildId, word) !== undefined;
      if (!existed && (this.sql.count.get(guildId) ?? 0) >= DICTIONARY_MAX_ENTRIES) return 'full';
      this.sql.upsert.run(rows.toRow({ guildId, word, reading, createdBy, createdAt: this.clock.now() }));
      this.sql.bump.run(guildId);
      return existed ? 'updated' : 'added';
    });
  }

  /** Resolves false when the word was not in the dictionary. */
  remove(guildId: string, word: string): Promise<boolean> {
    return this.write(() => {
      const removed = this.sql.delete.run(guildId, word).changes > 0;
      if (removed) this.sql.bump.run(guildId);
      return removed;
    });
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
    this.#effective.set(guildId, { own, globalVersion, entries });
    return entries;
  }

  /**
   * Replaces the guild's whole dictionary (`replace`) or adds and updates the given words, keeping
   * the others (`merge`), in one transaction: all of it or nothing. Refused whole (nothing written)
   * when the result would hold more than DICTIONARY_MAX_ENTRIES, counted in that same transaction.
   */
  import(
    guildId: string,
    entries: readonly { word: string; reading: string }[],
    mode: 'merge' | 'replace',
    createdBy: string,
  ): Promise<{ ok: true; total: number } | DictionaryFull> {
    return this.write(() => {
      const words = new Set(entries.map((e) => e.word));
      const kept = mode === 'replace' ? 0 : (this.sql.count.get(guildId) ?? 0);
      const total = mode === 'replace' ? words.size : kept + [...words].filter((w) => this.sql.exists.get(guildId, w) === undefined).length;
      if (total > DICTIONARY_MAX_ENTRIES) return { ok: false as const, total, max: DICTIONARY_MAX_ENTRIES };
      if (mode === 'replace') this.sql.deleteAll.run(guildId);
      const now = this.clock.now();
      for (const e of entries) this.sql.upsert.run(rows.toRow({ guildId, word: e.word, reading: e.reading, createdBy, createdAt: now }));
      this.sql.bump.run(guildId);
      return { ok: true as const, total: this.sql.count.get(guildId) ?? 0 };
    });
  }

  /** The guild's own entries (what /dictionary lists and exports), longest word first; cached like list. */
  own(guildId: string): readonly DictionaryEntry[] {
    const version = this.sql.version.get(guildId) ?? 0;
    const cached = this.#lists.get(guildId);
    if (cached?.version === version) return cached.entries;
    const entries = this.sql.list.all(guildId).map(rows.fromRow);
    Object.freeze(entries);
    this.#lists.set(guildId, { version, entries });
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
