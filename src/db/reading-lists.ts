import type { Db } from './database.ts';
import { Repo } from './table.ts';
import { READING_LIST_MAX, type ReadingListKind } from '../domain/reading.ts';
import type { Clock } from '../util/clock.ts';

// The reading_lists table (migrations/008): a guild's allowed bots and webhooks, and the
// roles whose members are never read.

const statements = (db: Db) => ({
  insert: db.prepare<[string, string, string, number]>(
    'INSERT INTO reading_lists (guild_id, kind, target_id, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
  ),
  delete: db.prepare<[string, string, string]>('DELETE FROM reading_lists WHERE guild_id = ? AND kind = ? AND target_id = ?'),
  list: db
    .prepare<[string, string], string>('SELECT target_id FROM reading_lists WHERE guild_id = ? AND kind = ? ORDER BY created_at, target_id')
    .pluck(),
  count: db.prepare<[string, string], number>('SELECT COUNT(*) FROM reading_lists WHERE guild_id = ? AND kind = ?').pluck(),
});

export class ReadingListsRepo extends Repo<ReturnType<typeof statements>> {
  constructor(db: Db, clock?: Clock) {
    super(db, clock, statements);
  }

  /** Ids on the guild's list, oldest first. */
  list(guildId: string, kind: ReadingListKind): string[] {
    return this.sql.list.all(guildId, kind);
  }

  /**
   * Adds an id; 'added', 'exists' when it was listed already, or 'full' at READING_LIST_MAX
   * (nothing changes then).
   */
  add(guildId: string, kind: ReadingListKind, targetId: string): Promise<'added' | 'exists' | 'full'> {
    return this.write(() => {
      if (this.list(guildId, kind).includes(targetId)) return 'exists';
      if (this.sql.count.get(guildId, kind)! >= READING_LIST_MAX) return 'full';
      this.sql.insert.run(guildId, kind, targetId, this.clock.now());
      return 'added';
    });
  }

  /** Resolves false when the id was not listed. */
  remove(guildId: string, kind: ReadingListKind, targetId: string): Promise<boolean> {
    return this.write(() => this.sql.delete.run(guildId, kind, targetId).changes > 0);
  }
}
