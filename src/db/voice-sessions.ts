import type { Db } from './database.ts';
import { Repo } from './table.ts';
import { rowMapping, type RowOf } from './rows.ts';
import type { Clock } from '../util/clock.ts';

/** A voice channel one of the bot's accounts was reading in (migrations/013_voice_sessions_per_channel.sql). */
export interface SavedVoiceSession {
  guildId: string;
  voiceChannelId: string;
  /** The account's bot user id; '' for rows written before there were several accounts (the main account). */
  accountId: string;
  textChannelId: string | null;
  updatedAt: number;
}

type Row = RowOf<SavedVoiceSession>;
const rows = rowMapping<SavedVoiceSession, Row>();

const statements = (db: Db) => ({
  // An account is in one voice channel per server: its row of that server is replaced, whichever channel it names.
  deleteAccount: db.prepare<[string, string, string]>(
    'DELETE FROM voice_sessions WHERE guild_id = ? AND account_id = ? AND voice_channel_id <> ?',
  ),
  upsert: db.prepare<[Row]>(`
    INSERT INTO voice_sessions (voice_channel_id, guild_id, account_id, text_channel_id, updated_at)
    VALUES (@voice_channel_id, @guild_id, @account_id, @text_channel_id, @updated_at)
    ON CONFLICT (voice_channel_id) DO UPDATE SET guild_id = excluded.guild_id, account_id = excluded.account_id,
      text_channel_id = excluded.text_channel_id, updated_at = excluded.updated_at`),
  delete: db.prepare<[string, string]>('DELETE FROM voice_sessions WHERE guild_id = ? AND voice_channel_id = ?'),
  all: db.prepare<[], Row>('SELECT * FROM voice_sessions ORDER BY guild_id, updated_at, rowid'),
});

/**
 * The voice_sessions table: each listening session (an account in a voice channel), so a restart
 * rejoins it. Saved on join and move, forgotten when it ends for good (/leave, nobody left,
 * disconnected by someone); a shutdown keeps it.
 */
export class VoiceSessionStore extends Repo<ReturnType<typeof statements>> {
  constructor(db: Db, options: { clock?: Clock } = {}) {
    super(db, options.clock, statements);
  }

  async save(session: { guildId: string; voiceChannelId: string; textChannelId: string | null; accountId: string }): Promise<void> {
    const row = rows.toRow({ ...session, updatedAt: this.clock.now() });
    await this.write(() => {
      this.sql.deleteAccount.run(session.guildId, session.accountId, session.voiceChannelId);
      this.sql.upsert.run(row);
    });
  }

  async forget(guildId: string, voiceChannelId: string): Promise<void> {
    await this.write(() => this.sql.delete.run(guildId, voiceChannelId));
  }

  list(): SavedVoiceSession[] {
    return this.sql.all.all().map(rows.fromRow);
  }
}
