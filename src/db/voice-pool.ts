import type { Db } from './database.ts';
import { Repo } from './table.ts';
import { VOICE_POOL_MAX } from '../domain/voice-pool.ts';
import type { Clock } from '../util/clock.ts';

// The voice_pool table (migrations/020): the standard voices a server gives its members who have
// none of their own (the rule: src/domain/voice-pool.ts).

const statements = (db: Db) => ({
  insert: db.prepare<[string, string, number]>(
    'INSERT INTO voice_pool (guild_id, voice, added_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING',
  ),
  delete: db.prepare<[string, string]>('DELETE FROM voice_pool WHERE guild_id = ? AND voice = ?'),
  list: db.prepare<[string], string>('SELECT voice FROM voice_pool WHERE guild_id = ? ORDER BY added_at, voice').pluck(),
});

export class VoicePoolRepo extends Repo<ReturnType<typeof statements>> {
  constructor(db: Db, clock?: Clock) {
    super(db, clock, statements);
  }

  /** The server's pool, oldest first (empty: every member without a voice speaks with the server's). */
  list(guildId: string): string[] {
    return this.sql.list.all(guildId);
  }

  /** Adds a voice; 'exists' when it is in the pool already, 'full' at VOICE_POOL_MAX (nothing changes then). */
  add(guildId: string, voice: string): Promise<'added' | 'exists' | 'full'> {
    return this.write(() => {
      const pool = this.list(guildId);
      if (pool.includes(voice)) return 'exists';
      if (pool.length >= VOICE_POOL_MAX) return 'full';
      this.sql.insert.run(guildId, voice, this.clock.now());
      return 'added';
    });
  }

  /** Resolves false when the voice was not in the pool. */
  remove(guildId: string, voice: string): Promise<boolean> {
    return this.write(() => this.sql.delete.run(guildId, voice).changes > 0);
  }
}
