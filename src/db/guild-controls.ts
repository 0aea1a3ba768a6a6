import type { Db } from './database.ts';
import { Repo } from './repo.ts';
import { definedOnly, rowMapping, type RowOf } from './rows.ts';
import type { Clock } from '../util/clock.ts';

// The guild_controls table (migrations/009): who edits the dictionary, when /narrate asks first.

export interface GuildControls {
  guildId: string;
  /** Members with this role may edit the dictionary besides Manage Server; null = Manage Server only. */
  dictionaryRoleId: string | null;
  /** /narrate texts longer than this (characters) show their cost and ask to confirm. */
  narrateConfirmChars: number;
  updatedAt: number | null;
}

export type GuildControlsPatch = Partial<Pick<GuildControls, 'dictionaryRoleId' | 'narrateConfirmChars'>>;

/** Must match the column defaults of 009. */
export const GUILD_CONTROLS_DEFAULTS = { dictionaryRoleId: null, narrateConfirmChars: 200 } as const satisfies Required<GuildControlsPatch>;

type Stored = GuildControls & { updatedAt: number };
type Row = RowOf<Stored>;
const rows = rowMapping<Stored, Row>();

const statements = (db: Db) => ({
  select: db.prepare<[string], Row>('SELECT * FROM guild_controls WHERE guild_id = ?'),
  upsert: db.prepare<[Row]>(`
    INSERT INTO guild_controls (guild_id, dictionary_role_id, narrate_confirm_chars, updated_at)
    VALUES (@guild_id, @dictionary_role_id, @narrate_confirm_chars, @updated_at)
    ON CONFLICT (guild_id) DO UPDATE SET dictionary_role_id = excluded.dictionary_role_id,
      narrate_confirm_chars = excluded.narrate_confirm_chars, updated_at = excluded.updated_at`),
});

export class GuildControlsRepo extends Repo<ReturnType<typeof statements>> {
  constructor(db: Db, clock?: Clock) {
    super(db, clock, statements);
  }

  /** The guild's controls, with defaults for a guild that never changed one. */
  get(guildId: string): GuildControls {
    const row = this.sql.select.get(guildId);
    return row ? rows.fromRow(row) : { guildId, ...GUILD_CONTROLS_DEFAULTS, updatedAt: null };
  }

  /** Changes only the given fields (undefined leaves a field; null dictionaryRoleId clears it). */
  update(guildId: string, patch: GuildControlsPatch): Promise<GuildControls> {
    return this.write(() => {
      const next = { ...this.get(guildId), ...definedOnly(patch), guildId, updatedAt: this.clock.now() };
      this.sql.upsert.run(rows.toRow(next));
      return next;
    });
  }
}
