import type { Db } from './database.ts';
import { Repo } from './table.ts';
import { rowMapping, type RowOf } from './rows.ts';
import type { Clock } from '../util/clock.ts';
import { DictionaryCache } from './dictionary-cache.ts';
import { isPatternWord, PATTERN_WORD_GLOB } from '../domain/dictionary-patterns.ts';
import { FILTER_LIMITS, type FilterAction, type FilterEntry, type FilterRecord, type FilterSettings } from '../domain/filters.ts';

// The text_filters and text_filter_settings tables (migrations/021): a server's filters and flood
// limit. The list read for every message is kept in the dictionaries' cache (bounded by what the
// lists hold) by version, so it is the same array, compiled once, until it changes in any process.

type Row = RowOf<FilterRecord>;
const rows = rowMapping<FilterRecord, Row>();

const statements = (db: Db) => ({
  exists: db.prepare<[string, string], number>('SELECT 1 FROM text_filters WHERE guild_id = ? AND word = ?').pluck(),
  count: db.prepare<[string], number>('SELECT count(*) FROM text_filters WHERE guild_id = ?').pluck(),
  patterns: db
    .prepare<[string], number>(`SELECT count(*) FROM text_filters WHERE guild_id = ? AND word GLOB '${PATTERN_WORD_GLOB}'`)
    .pluck(),
  upsert: db.prepare<[Row]>(`
    INSERT INTO text_filters (guild_id, word, action, reading, created_by, created_at)
    VALUES (@guild_id, @word, @action, @reading, @created_by, @created_at)
    ON CONFLICT (guild_id, word) DO UPDATE SET action = excluded.action, reading = excluded.reading,
      created_by = excluded.created_by, created_at = excluded.created_at`),
  delete: db.prepare<[string, string]>('DELETE FROM text_filters WHERE guild_id = ? AND word = ?'),
  list: db.prepare<[string], Row>('SELECT * FROM text_filters WHERE guild_id = ? ORDER BY length(word) DESC, word'),
  entries: db.prepare<[string], FilterEntry>('SELECT word, reading, action FROM text_filters WHERE guild_id = ? ORDER BY word'),
  settings: db.prepare<[string], { flood_max: number | null; version: number }>(
    'SELECT flood_max, version FROM text_filter_settings WHERE guild_id = ?',
  ),
  bump: db.prepare<[string, number]>(`
    INSERT INTO text_filter_settings (guild_id, version, updated_at) VALUES (?, 1, ?)
    ON CONFLICT (guild_id) DO UPDATE SET version = version + 1, updated_at = excluded.updated_at`),
  flood: db.prepare<[string, number | null, number]>(`
    INSERT INTO text_filter_settings (guild_id, flood_max, updated_at) VALUES (?, ?, ?)
    ON CONFLICT (guild_id) DO UPDATE SET flood_max = excluded.flood_max, updated_at = excluded.updated_at`),
});

const NONE: readonly never[] = Object.freeze([]);

/** A server's filters: add (or change), remove, list; what is read for a message; the flood limit. */
export class TextFiltersRepo extends Repo<ReturnType<typeof statements>> {
  readonly #cache: DictionaryCache;

  constructor(db: Db, clock?: Clock, cache?: DictionaryCache) {
    super(db, clock, statements);
    this.#cache = cache ?? new DictionaryCache();
  }

  /**
   * Adds the filter, or changes what it does; says which, or (nothing written) 'full' past
   * FILTER_LIMITS.maxEntries, 'patterns_full' past maxPatterns, counted in the write's transaction.
   */
  add(
    guildId: string,
    entry: { word: string; action: FilterAction; reading: string },
    by: string,
  ): Promise<'added' | 'updated' | 'full' | 'patterns_full'> {
    return this.write(() => {
      const existed = this.sql.exists.get(guildId, entry.word) !== undefined;
      if (!existed && (this.sql.count.get(guildId) ?? 0) >= FILTER_LIMITS.maxEntries) return 'full';
      if (!existed && isPatternWord(entry.word) && (this.sql.patterns.get(guildId) ?? 0) >= FILTER_LIMITS.maxPatterns)
        return 'patterns_full';
      this.sql.upsert.run(rows.toRow({ guildId, ...entry, createdBy: by, createdAt: this.clock.now() }));
      this.sql.bump.run(guildId, this.clock.now());
      return existed ? 'updated' : 'added';
    });
  }

  /** Resolves false when the word was not a filter. */
  remove(guildId: string, word: string): Promise<boolean> {
    return this.write(() => {
      const removed = this.sql.delete.run(guildId, word).changes > 0;
      if (removed) this.sql.bump.run(guildId, this.clock.now());
      return removed;
    });
  }

  /** The server's filters with who added them, longest first (what is listed; read each time). */
  own(guildId: string): FilterRecord[] {
    return this.sql.list.all(guildId).map((row) => rows.fromRow(row));
  }

  /** What is applied to the server's messages: the same frozen array until the list changes, while the cache keeps it. */
  readable(guildId: string): readonly FilterEntry[] {
    const version = this.sql.settings.get(guildId)?.version;
    if (version === undefined || version === 0) return NONE; // never had a filter
    const key = `text_filters\0${guildId}`;
    const kept = this.#cache.get(key, version) as readonly FilterEntry[] | undefined;
    if (kept) return kept;
    const entries = Object.freeze(this.sql.entries.all(guildId));
    this.#cache.set(key, version, entries);
    return entries;
  }

  settings(guildId: string): FilterSettings {
    return { guildId, floodMax: this.sql.settings.get(guildId)?.flood_max ?? null };
  }

  /** Sets the flood limit (null: none); checked by the use case. */
  setFlood(guildId: string, floodMax: number | null): Promise<FilterSettings> {
    return this.write(() => {
      this.sql.flood.run(guildId, floodMax, this.clock.now());
      return { guildId, floodMax };
    });
  }
}
