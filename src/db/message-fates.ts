import type { Db } from './database.ts';
import { Repo } from './table.ts';
import { json, rowMapping, type RowOf } from './rows.ts';

// The message_fates table (migrations/017): what became of each message auto-read considered, by
// guild and message id. The record's vocabulary is the Discord layer's (src/discord/diagnosis/fates.ts);
// this module keeps rows of ids, a code and a JSON detail, never a message's text.

/** One message's fate as stored. */
export interface StoredFate {
  guildId: string;
  messageId: string;
  channelId: string;
  userId: string;
  arrivedAt: number;
  fate: string;
  decidedAt: number;
  detail: Record<string, unknown>;
}

type Row = RowOf<StoredFate, { detail: string }>;
const rows = rowMapping<StoredFate, Row>({ codecs: { detail: json as never } });

const statements = (db: Db) => ({
  upsert: db.prepare<[Row]>(`
    INSERT INTO message_fates (guild_id, message_id, channel_id, user_id, arrived_at, fate, decided_at, detail)
    VALUES (@guild_id, @message_id, @channel_id, @user_id, @arrived_at, @fate, @decided_at, @detail)
    ON CONFLICT (guild_id, message_id) DO UPDATE SET fate = excluded.fate, decided_at = excluded.decided_at, detail = excluded.detail`),
  prune: db.prepare<[number]>('DELETE FROM message_fates WHERE arrived_at < ?'),
  trim: db.prepare<[string, string, number]>(`
    DELETE FROM message_fates WHERE guild_id = ? AND message_id IN (
      SELECT message_id FROM message_fates WHERE guild_id = ? ORDER BY arrived_at DESC, message_id DESC LIMIT -1 OFFSET ?)`),
  get: db.prepare<[string, string], Row>('SELECT * FROM message_fates WHERE guild_id = ? AND message_id = ?'),
  recentOf: db.prepare<[string, string, number, number], Row>(
    'SELECT * FROM message_fates WHERE guild_id = ? AND user_id = ? AND arrived_at >= ? ORDER BY arrived_at DESC, message_id DESC LIMIT ?',
  ),
});

/** How much is kept: rows of messages that arrived within `keepMs` of now, at most `perGuild` per guild. */
export interface FateRetention {
  keepMs: number;
  perGuild: number;
}

export class MessageFatesTable extends Repo<ReturnType<typeof statements>> {
  constructor(db: Db) {
    super(db, undefined, statements);
  }

  /**
   * Writes `fates` (a later fate of a message replaces its earlier one; where and when it arrived
   * stay) in one transaction, and forgets what falls outside `keep` at `now`.
   */
  save(fates: readonly StoredFate[], now: number, keep: FateRetention): Promise<void> {
    const written = fates.map((f) => rows.toRow(f));
    const guilds = new Set(fates.map((f) => f.guildId));
    return this.write(() => {
      for (const row of written) this.sql.upsert.run(row);
      this.sql.prune.run(now - keep.keepMs);
      for (const guildId of guilds) this.sql.trim.run(guildId, guildId, keep.perGuild);
    });
  }

  get(guildId: string, messageId: string): StoredFate | undefined {
    const row = this.sql.get.get(guildId, messageId);
    return row && rows.fromRow(row);
  }

  /** The member's latest messages in the guild that arrived at or after `since`, newest first. */
  recentOf(guildId: string, userId: string, since: number, limit: number): StoredFate[] {
    return this.sql.recentOf.all(guildId, userId, since, limit).map((r) => rows.fromRow(r));
  }
}
