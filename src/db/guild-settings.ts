import type { Db } from './database.ts';
import { GuildRowRepo } from './table.ts';
import { GUILD_SETTINGS_DEFAULTS, type GuildSettings } from '../domain/guild-settings.ts';
import { bool, rowMapping, type RowOf } from './rows.ts';
import type { Clock } from '../util/clock.ts';

// The guild_settings table (migrations/001). Its only owner: everything else reads a guild's
// settings through GuildSettingsRepo.

type Stored = GuildSettings & { updatedAt: number };
type Row = RowOf<Stored, { readAuthorNames: number; announceJoinLeave: number }>;
const rows = rowMapping<Stored, Row>({ codecs: { readAuthorNames: bool, announceJoinLeave: bool } });

const statements = (db: Db) => ({
  select: db.prepare<[string], Row>('SELECT * FROM guild_settings WHERE guild_id = ?'),
  upsert: db.prepare<[Row]>(`
    INSERT INTO guild_settings (guild_id, voice, speed, pitch, read_author_names, announce_join_leave,
      max_length, fast_reading_ceiling, ignore_prefix, user_monthly_limit, guild_monthly_limit, auto_join_channel_id, text_channels_per_call, locale, updated_at)
    VALUES (@guild_id, @voice, @speed, @pitch, @read_author_names, @announce_join_leave,
      @max_length, @fast_reading_ceiling, @ignore_prefix, @user_monthly_limit, @guild_monthly_limit, @auto_join_channel_id, @text_channels_per_call, @locale, @updated_at)
    ON CONFLICT (guild_id) DO UPDATE SET voice = excluded.voice, speed = excluded.speed, pitch = excluded.pitch,
      read_author_names = excluded.read_author_names, announce_join_leave = excluded.announce_join_leave,
      max_length = excluded.max_length, fast_reading_ceiling = excluded.fast_reading_ceiling, ignore_prefix = excluded.ignore_prefix,
      user_monthly_limit = excluded.user_monthly_limit, guild_monthly_limit = excluded.guild_monthly_limit,
      auto_join_channel_id = excluded.auto_join_channel_id, text_channels_per_call = excluded.text_channels_per_call,
      locale = excluded.locale, updated_at = excluded.updated_at`),
});

/** The guild_settings rows: `get` with defaults, `update` field by field. */
export class GuildSettingsRepo extends GuildRowRepo<GuildSettings, Row> {
  constructor(db: Db, clock?: Clock) {
    super(db, clock, statements, rows, GUILD_SETTINGS_DEFAULTS);
  }
}
