import type { Db } from './database.ts';
import { Repo } from './table.ts';
import { rowMapping, type RowOf } from './rows.ts';
import type { Clock } from '../util/clock.ts';
import { MAX_FOLLOWS, type Follow, type FollowedSource } from '../domain/shared-dictionaries.ts';

// The dictionary_sharing and dictionary_follows tables (migrations/022): which servers let others
// follow their dictionary, and what each server follows, oldest first (the order they are read in).

type Row = RowOf<Follow>;
const rows = rowMapping<Follow, Row>();

/** Most followable servers listed at once (the candidates an admin is offered are those they are in). */
const FOLLOWABLE_LISTED = 500;

const statements = (db: Db) => ({
  followable: db.prepare<[string], number>('SELECT followable FROM dictionary_sharing WHERE guild_id = ?').pluck(),
  setFollowable: db.prepare<[string, number, number]>(`
    INSERT INTO dictionary_sharing (guild_id, followable, updated_at) VALUES (?, ?, ?)
    ON CONFLICT (guild_id) DO UPDATE SET followable = excluded.followable, updated_at = excluded.updated_at`),
  allFollowable: db
    .prepare<[number], string>('SELECT guild_id FROM dictionary_sharing WHERE followable = 1 ORDER BY guild_id LIMIT ?')
    .pluck(),
  follows: db.prepare<[string], Row>('SELECT * FROM dictionary_follows WHERE guild_id = ? ORDER BY created_at, kind, source'),
  count: db.prepare<[string], number>('SELECT count(*) FROM dictionary_follows WHERE guild_id = ?').pluck(),
  exists: db
    .prepare<[string, string, string], number>('SELECT 1 FROM dictionary_follows WHERE guild_id = ? AND kind = ? AND source = ?')
    .pluck(),
  insert: db.prepare<[Row]>(
    'INSERT INTO dictionary_follows (guild_id, kind, source, created_by, created_at) VALUES (@guild_id, @kind, @source, @created_by, @created_at)',
  ),
  delete: db.prepare<[string, string, string]>('DELETE FROM dictionary_follows WHERE guild_id = ? AND kind = ? AND source = ?'),
});

export class DictionarySharingRepo extends Repo<ReturnType<typeof statements>> {
  constructor(db: Db, clock?: Clock) {
    super(db, clock, statements);
  }

  /** Whether the server's admins let other servers follow its dictionary. */
  isFollowable(guildId: string): boolean {
    return this.sql.followable.get(guildId) === 1;
  }

  setFollowable(guildId: string, followable: boolean): Promise<void> {
    return this.write(() => void this.sql.setFollowable.run(guildId, followable ? 1 : 0, this.clock.now()));
  }

  /** The servers that let others follow their dictionary (at most FOLLOWABLE_LISTED). */
  followableGuilds(): string[] {
    return this.sql.allFollowable.all(FOLLOWABLE_LISTED);
  }

  /** What the server follows, in the order it is read (oldest first). */
  follows(guildId: string): Follow[] {
    return this.sql.follows.all(guildId).map((row) => rows.fromRow(row));
  }

  /** Follows `source`; 'exists' when it already did, 'full' at MAX_FOLLOWS (counted in the write's transaction; nothing written). */
  follow(guildId: string, followed: FollowedSource, by: string): Promise<'added' | 'exists' | 'full'> {
    return this.write(() => {
      if (this.sql.exists.get(guildId, followed.kind, followed.source) !== undefined) return 'exists';
      if ((this.sql.count.get(guildId) ?? 0) >= MAX_FOLLOWS) return 'full';
      this.sql.insert.run(rows.toRow({ guildId, ...followed, createdBy: by, createdAt: this.clock.now() }));
      return 'added';
    });
  }

  /** Resolves false when the server did not follow it. */
  unfollow(guildId: string, followed: FollowedSource): Promise<boolean> {
    return this.write(() => this.sql.delete.run(guildId, followed.kind, followed.source).changes > 0);
  }
}
