import type { Db } from './database.ts';
import { Repo } from './table.ts';
import { READING_DEFAULTS, type ReadingSettings, type ReadingSettingsPatch } from '../domain/reading.ts';
import { bool, definedOnly, rowMapping, type RowOf } from './rows.ts';
import type { Clock } from '../util/clock.ts';

// The reading_settings table (migrations/008, threads: 011, freshness: 016): who and what auto-read reads, and how fresh.

type Stored = ReadingSettings & { updatedAt: number };
type Flags = { forwards: number; emoji: number; requireInVoice: number; staleNotice: number; threads: number; speedUp: number };
type Row = RowOf<Stored, Flags>;
const rows = rowMapping<Stored, Row>({
  codecs: { forwards: bool, emoji: bool, requireInVoice: bool, staleNotice: bool, threads: bool, speedUp: bool },
});

const statements = (db: Db) => ({
  select: db.prepare<[string], Row>('SELECT * FROM reading_settings WHERE guild_id = ?'),
  upsert: db.prepare<[Row]>(`
    INSERT INTO reading_settings (guild_id, bots, forwards, emoji, required_role_id, require_in_voice, stale_notice, threads,
      fresh_seconds, speed_up, updated_at)
    VALUES (@guild_id, @bots, @forwards, @emoji, @required_role_id, @require_in_voice, @stale_notice, @threads,
      @fresh_seconds, @speed_up, @updated_at)
    ON CONFLICT (guild_id) DO UPDATE SET bots = excluded.bots, forwards = excluded.forwards, emoji = excluded.emoji,
      required_role_id = excluded.required_role_id, require_in_voice = excluded.require_in_voice,
      stale_notice = excluded.stale_notice, threads = excluded.threads, fresh_seconds = excluded.fresh_seconds,
      speed_up = excluded.speed_up, updated_at = excluded.updated_at`),
});

export class ReadingSettingsRepo extends Repo<ReturnType<typeof statements>> {
  constructor(db: Db, clock?: Clock) {
    super(db, clock, statements);
  }

  /** The guild's reading settings, with defaults for a guild that never changed one. */
  get(guildId: string): ReadingSettings {
    const row = this.sql.select.get(guildId);
    return row ? rows.fromRow(row) : { guildId, ...READING_DEFAULTS, updatedAt: null };
  }

  /** Changes only the given fields (`undefined` leaves a field as it is; null clears the role). */
  update(guildId: string, patch: ReadingSettingsPatch): Promise<ReadingSettings> {
    return this.write(() => {
      const next = { ...this.get(guildId), ...definedOnly(patch), guildId, updatedAt: this.clock.now() };
      this.sql.upsert.run(rows.toRow(next));
      return next;
    });
  }
}
