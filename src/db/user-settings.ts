import type { Db } from './database.ts';
import { Repo } from './table.ts';
import type { UserSettings, UserSettingsPatch } from '../domain/member-settings.ts';
import { bool, definedOnly, rowMapping, type RowOf } from './rows.ts';
import type { Clock } from '../util/clock.ts';

// The user_settings table (migrations/001, 018): per-member overrides within one guild.

type Stored = UserSettings & { updatedAt: number };
type Row = RowOf<Stored, { muted: number }>;
const rows = rowMapping<Stored, Row>({ codecs: { muted: bool } });

const statements = (db: Db) => ({
  select: db.prepare<[string, string], Row>('SELECT * FROM user_settings WHERE guild_id = ? AND user_id = ?'),
  upsert: db.prepare<[Row]>(`
    INSERT INTO user_settings (guild_id, user_id, voice, speed, pitch, nickname, muted, volume, admin_volume, updated_at)
    VALUES (@guild_id, @user_id, @voice, @speed, @pitch, @nickname, @muted, @volume, @admin_volume, @updated_at)
    ON CONFLICT (guild_id, user_id) DO UPDATE SET voice = excluded.voice, speed = excluded.speed,
      pitch = excluded.pitch, nickname = excluded.nickname, muted = excluded.muted, volume = excluded.volume,
      admin_volume = excluded.admin_volume, updated_at = excluded.updated_at`),
  delete: db.prepare<[string, string]>('DELETE FROM user_settings WHERE guild_id = ? AND user_id = ?'),
  muted: db
    .prepare<[string], string>('SELECT user_id FROM user_settings WHERE guild_id = ? AND muted = 1 ORDER BY updated_at, user_id')
    .pluck(),
  adminVolumes: db.prepare<[string], { user_id: string; admin_volume: number }>(
    'SELECT user_id, admin_volume FROM user_settings WHERE guild_id = ? AND admin_volume IS NOT NULL ORDER BY updated_at, user_id',
  ),
});

export class UserSettingsRepo extends Repo<ReturnType<typeof statements>> {
  constructor(db: Db, clock?: Clock) {
    super(db, clock, statements);
  }

  /** The user's settings in the guild; all null / not muted when never set. */
  get(guildId: string, userId: string): UserSettings {
    const row = this.sql.select.get(guildId, userId);
    return row
      ? rows.fromRow(row)
      : {
          guildId,
          userId,
          voice: null,
          speed: null,
          pitch: null,
          nickname: null,
          muted: false,
          volume: null,
          adminVolume: null,
          updatedAt: null,
        };
  }

  /** Changes the given fields (null voice/speed/pitch/nickname/volume = back to the default; undefined = unchanged). */
  set(guildId: string, userId: string, patch: UserSettingsPatch): Promise<UserSettings> {
    return this.write(() => {
      const next = { ...this.get(guildId, userId), ...definedOnly(patch), guildId, userId, updatedAt: this.clock.now() };
      this.sql.upsert.run(rows.toRow(next));
      return next;
    });
  }

  /** Members of the guild whose reading is muted, longest muted first. */
  muted(guildId: string): string[] {
    return this.sql.muted.all(guildId);
  }

  /** Members of the guild an admin set a volume for (/config volume), with it, oldest change first. */
  adminVolumes(guildId: string): { userId: string; volume: number }[] {
    return this.sql.adminVolumes.all(guildId).map((r) => ({ userId: r.user_id, volume: r.admin_volume }));
  }

  /** Forgets everything about the user in this guild (voice, nickname, mute). */
  reset(guildId: string, userId: string): Promise<boolean> {
    return this.write(() => this.sql.delete.run(guildId, userId).changes > 0);
  }
}
