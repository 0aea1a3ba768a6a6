import type { Db } from './database.ts';
import { GuildRowRepo } from './table.ts';
import { GUILD_CONTROLS_DEFAULTS, type GuildControls } from '../domain/controls.ts';
import { rowMapping, type RowOf } from './rows.ts';
import type { Clock } from '../util/clock.ts';

// The guild_controls table (migrations/009): who edits the dictionary, when /narrate asks first.

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

/** The guild_controls rows: `get` with defaults, `update` field by field (null dictionaryRoleId clears it). */
export class GuildControlsRepo extends GuildRowRepo<GuildControls, Row> {
  constructor(db: Db, clock?: Clock) {
    super(db, clock, statements, rows, GUILD_CONTROLS_DEFAULTS);
  }
}
