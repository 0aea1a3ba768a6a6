import type { Db } from './database.ts';
import { Repo } from './table.ts';
import { json, rowMapping, type Codec, type RowOf } from './rows.ts';
import type { Clock } from '../util/clock.ts';

/** A voice channel one of the bot's accounts was reading in (migrations/013 and 019). */
interface SavedVoiceSession {
  guildId: string;
  voiceChannelId: string;
  /** The account's bot user id; '' for rows written before there were several accounts (the main account). */
  accountId: string;
  /** The first text channel read in the call. */
  textChannelId: string | null;
  /** The other text channels read in the call, in the order they were added. */
  alsoRead: string[];
  updatedAt: number;
}

type Row = RowOf<SavedVoiceSession, { alsoRead: string }>;
const rows = rowMapping<SavedVoiceSession, Row>({ codecs: { alsoRead: json as Codec<string[], string> } });

const statements = (db: Db) => ({
  // An account is in one voice channel per server: its row of that server is replaced, whichever channel it names.
  deleteAccount: db.prepare<[string, string, string]>(
    'DELETE FROM voice_sessions WHERE guild_id = ? AND account_id = ? AND voice_channel_id <> ?',
  ),
  upsert: db.prepare<[Row]>(`
    INSERT INTO voice_sessions (voice_channel_id, guild_id, account_id, text_channel_id, also_read, updated_at)
    VALUES (@voice_channel_id, @guild_id, @account_id, @text_channel_id, @also_read, @updated_at)
    ON CONFLICT (voice_channel_id) DO UPDATE SET guild_id = excluded.guild_id, account_id = excluded.account_id,
      text_channel_id = excluded.text_channel_id, also_read = excluded.also_read, updated_at = excluded.updated_at`),
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

  /** Remembers the session with the text channels it reads (the first one, then the others in order). */
  async save(session: { guildId: string; voiceChannelId: string; textChannelIds: readonly string[]; accountId: string }): Promise<void> {
    const { textChannelIds, ...where } = session;
    const [first = null, ...alsoRead] = textChannelIds;
    const row = rows.toRow({ ...where, textChannelId: first, alsoRead, updatedAt: this.clock.now() });
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
