import type { Db } from './database.ts';
import { Repo } from './repo.ts';
import { rowMapping, type RowOf } from './rows.ts';
import type { Clock } from '../util/clock.ts';

/** A voice channel the bot was reading in (migrations/005_restart_safety.sql). */
export interface SavedVoiceSession {
  guildId: string;
  voiceChannelId: string;
  textChannelId: string | null;
  updatedAt: number;
}

type Row = RowOf<SavedVoiceSession>;
const rows = rowMapping<SavedVoiceSession, Row>();

const statements = (db: Db) => ({
  upsert: db.prepare<[Row]>(`
    INSERT INTO voice_sessions (guild_id, voice_channel_id, text_channel_id, updated_at)
    VALUES (@guild_id, @voice_channel_id, @text_channel_id, @updated_at)
    ON CONFLICT (guild_id) DO UPDATE SET voice_channel_id = excluded.voice_channel_id,
      text_channel_id = excluded.text_channel_id, updated_at = excluded.updated_at`),
  delete: db.prepare<[string]>('DELETE FROM voice_sessions WHERE guild_id = ?'),
  all: db.prepare<[], Row>('SELECT * FROM voice_sessions ORDER BY guild_id'),
});

/**
 * The voice_sessions table: each guild's voice session, so a restart rejoins it.
 * Saved on join and move, forgotten when the bot leaves for good (/leave, nobody left,
 * disconnected by someone); a shutdown keeps it.
 */
export class VoiceSessionStore extends Repo<ReturnType<typeof statements>> {
  constructor(db: Db, options: { clock?: Clock } = {}) {
    super(db, options.clock, statements);
  }

  async save(guildId: string, voiceChannelId: string, textChannelId: string | null): Promise<void> {
    const row = rows.toRow({ guildId, voiceChannelId, textChannelId, updatedAt: this.clock.now() });
    await this.write(() => this.sql.upsert.run(row));
  }

  async forget(guildId: string): Promise<void> {
    await this.write(() => this.sql.delete.run(guildId));
  }

  list(): SavedVoiceSession[] {
    return this.sql.all.all().map(rows.fromRow);
  }
}
