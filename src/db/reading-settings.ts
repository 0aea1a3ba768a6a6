import type { Db } from './database.ts';
import { Repo, type Patch } from './repo.ts';
import { bool, definedOnly, rowMapping, type RowOf } from './rows.ts';
import type { Clock } from '../util/clock.ts';

// The reading_settings table (migrations/008, threads: 011, freshness: 016): who and what auto-read reads, and how fresh.

/** Messages from bots and webhooks: none, only the allow-list, or all. */
export type BotReading = 'off' | 'listed' | 'all';

export interface ReadingSettings {
  guildId: string;
  bots: BotReading;
  /** Forwarded messages are read (their snapshot, after a lead-in). */
  forwards: boolean;
  /** Unicode emoji are read by name instead of dropped. */
  emoji: boolean;
  /** Only members with this role are read; null = everyone. */
  requiredRoleId: string | null;
  /** Only members in the bot's voice channel are read. */
  requireInVoice: boolean;
  /** Spoken notice when stale auto-read messages were dropped. */
  staleNotice: boolean;
  /** Messages in threads (and forum posts) of a read channel are read. */
  threads: boolean;
  /**
   * The freshness horizon (seconds): when a voice channel is busier than it can be read, what could
   * not be heard within this long of being written is dropped with the spoken summary.
   */
  freshSeconds: number;
  /** Speech may speed up (to at most 1.5x) while a voice channel is behind. */
  speedUp: boolean;
  updatedAt: number | null;
}

export type ReadingSettingsPatch = Patch<ReadingSettings>;

/** The range /reading freshness accepts (and the column's CHECK). */
export const FRESH_SECONDS = { min: 5, max: 600 } as const;

/** Must match the column defaults of migrations 008, 011 and 016 (test/db/reading-controls.test.ts). */
export const READING_DEFAULTS = {
  bots: 'off',
  forwards: true,
  emoji: false,
  requiredRoleId: null,
  requireInVoice: false,
  staleNotice: true,
  threads: true,
  freshSeconds: 20,
  speedUp: true,
} as const satisfies Required<ReadingSettingsPatch>;

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
