import type { Db } from '../db/database.ts';
import { writeTx } from '../db/write.ts';
import { systemClock, type Clock } from '../util/clock.ts';

/** A voice channel the bot was reading in (migrations/005_restart_safety.sql). */
export interface SavedVoiceSession {
  guildId: string;
  voiceChannelId: string;
  textChannelId: string | null;
  updatedAt: number;
}

interface Row {
  guild_id: string;
  voice_channel_id: string;
  text_channel_id: string | null;
  updated_at: number;
}

/**
 * Remembers each guild's voice session so a restart rejoins it (issue 9 §3). Saved on join and
 * move, forgotten when the bot leaves for good (/leave, nobody left, disconnected by someone);
 * a shutdown keeps it.
 */
export class VoiceSessionStore {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #upsert;
  readonly #delete;
  readonly #all;

  constructor(db: Db, options: { clock?: Clock } = {}) {
    this.#db = db;
    this.#clock = options.clock ?? systemClock;
    this.#upsert = db.prepare<[Row]>(`
      INSERT INTO voice_sessions (guild_id, voice_channel_id, text_channel_id, updated_at)
      VALUES (@guild_id, @voice_channel_id, @text_channel_id, @updated_at)
      ON CONFLICT (guild_id) DO UPDATE SET voice_channel_id = excluded.voice_channel_id,
        text_channel_id = excluded.text_channel_id, updated_at = excluded.updated_at`);
    this.#delete = db.prepare<[string]>('DELETE FROM voice_sessions WHERE guild_id = ?');
    this.#all = db.prepare<[], Row>('SELECT * FROM voice_sessions ORDER BY guild_id');
  }

  /** Writes never wait on the audio thread (src/db/write.ts). */
  async save(guildId: string, voiceChannelId: string, textChannelId: string | null): Promise<void> {
    const row = { guild_id: guildId, voice_channel_id: voiceChannelId, text_channel_id: textChannelId, updated_at: this.#clock.now() };
    await writeTx(this.#db, () => this.#upsert.run(row));
  }

  async forget(guildId: string): Promise<void> {
    await writeTx(this.#db, () => this.#delete.run(guildId));
  }

  list(): SavedVoiceSession[] {
    return this.#all.all().map((r) => ({ guildId: r.guild_id, voiceChannelId: r.voice_channel_id, textChannelId: r.text_channel_id, updatedAt: r.updated_at }));
  }
}
