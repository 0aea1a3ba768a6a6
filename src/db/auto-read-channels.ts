import type { Db } from './database.ts';
import { Repo } from './table.ts';
import type { AutoReadChannel } from '../domain/reading.ts';
import type { Clock } from '../util/clock.ts';

const statements = (db: Db) => {
  const where = 'WHERE guild_id = ? AND channel_id = ?';
  return {
    insert: db.prepare<[string, string, number, number]>(
      'INSERT INTO auto_read_channels (guild_id, channel_id, created_at, post_audio) VALUES (?, ?, ?, ?) ON CONFLICT DO UPDATE SET post_audio = excluded.post_audio',
    ),
    postAudio: db.prepare<[string, string], number>(`SELECT post_audio FROM auto_read_channels ${where}`).pluck(),
    entries: db.prepare<[string], { channel_id: string; post_audio: number }>(
      'SELECT channel_id, post_audio FROM auto_read_channels WHERE guild_id = ? ORDER BY created_at, channel_id',
    ),
    delete: db.prepare<[string, string]>(`DELETE FROM auto_read_channels ${where}`),
  };
};

/** The auto_read_channels table: text channels read aloud whenever the bot is in voice. */
export class AutoReadRepo extends Repo<ReturnType<typeof statements>> {
  constructor(db: Db, clock?: Clock) {
    super(db, clock, statements);
  }

  /**
   * Reads the channel aloud while the bot is in voice; with `postAudio`, also posts MP3s while it is
   * not (migrations/005). Adding a listed channel again updates that option; resolves false then.
   */
  add(guildId: string, channelId: string, options: { postAudio?: boolean } = {}): Promise<boolean> {
    // One IMMEDIATE transaction: whether it existed decides the answer.
    return this.write(() => {
      const existed = this.isAutoRead(guildId, channelId);
      this.sql.insert.run(guildId, channelId, this.clock.now(), options.postAudio ? 1 : 0);
      return !existed;
    });
  }

  /** Whether the channel is auto-read with MP3 posts while the bot is in no voice channel. */
  postsAudio(guildId: string, channelId: string): boolean {
    return this.sql.postAudio.get(guildId, channelId) === 1;
  }

  /** Whether messages in this channel are read aloud automatically. */
  isAutoRead(guildId: string, channelId: string): boolean {
    return this.sql.postAudio.get(guildId, channelId) !== undefined;
  }

  /** Channels with their option, oldest first. */
  entries(guildId: string): AutoReadChannel[] {
    return this.sql.entries.all(guildId).map((r) => ({ channelId: r.channel_id, postAudio: r.post_audio === 1 }));
  }

  /** Resolves false when the channel was not auto-read. */
  remove(guildId: string, channelId: string): Promise<boolean> {
    return this.write(() => this.sql.delete.run(guildId, channelId).changes > 0);
  }
}
