import type { Db } from '../db/database.ts';
import { shardOf } from '../util/shards.ts';
import { TransferError } from './errors.ts';
import { describeIssues, exportSchema } from './guild-export-schema.ts';

// Moving guilds between hosts with their shard range (docs/scaling.md "Move a shard
// range"): every row of a guild in this host's SQLite, as one JSON document, and back. The
// command line is src/ops/guild-cli.ts (`npm run guild`).

/** Tables with a guild_id whose rows move with the guild, in import order. */
export const MOVED_TABLES = [
  'guild_settings',
  'auto_read_channels',
  'user_settings',
  'dictionary_entries',
  'dictionary_versions',
  'voice_sessions',
  'character_ledger',
  'generation_history',
  'advanced_jobs',
  'pending_utterances',
  'guild_controls',
  'role_allowances',
  'reading_settings',
  'reading_lists',
  'voice_pool',
  'audit_log',
  'message_fates',
  'text_filters',
  'text_filter_settings',
  // Whether others may follow it, and what it follows (a followed server on another host is not read there).
  'dictionary_sharing',
  'dictionary_follows',
] as const;

/** Tables that do not move, and why (a new table must be put in one list or the other: test/ops/guild-transfer.test.ts). */
export const STAYING_TABLES = {
  // Rebuilt on import from the moved character_ledger rows (the account scope included).
  ledger_totals: 'derived',
  // Account-wide; the rows the guild's ledger names are copied (a repeat stays free on the new host).
  paid_audio: 'copied by audio key',
  // The host's own: its IP's window, its audio files, its schema, its copies to the account pool.
  rate_grants: 'host',
  rate_blocks: 'host',
  rate_demand: 'host',
  audio_cache: 'host',
  schema_migrations: 'host',
  pool_outbox: 'host',
  pool_seeded: 'host',
  // A member's own readings, for every server of this host: not one guild's to take along.
  personal_dictionary_entries: 'member',
  personal_dictionary_versions: 'member',
} as const;

/** Columns a table numbers itself: not carried over (the target numbers the rows anew, in order). */
const OWN_KEYS: Partial<Record<(typeof MOVED_TABLES)[number], string>> = {
  character_ledger: 'id',
  generation_history: 'id',
  pending_utterances: 'seq',
  audit_log: 'id',
};
const ORDER: Partial<Record<(typeof MOVED_TABLES)[number], string>> = {
  character_ledger: 'id',
  generation_history: 'id',
  pending_utterances: 'seq',
  audit_log: 'id',
};

const EXPORT_FORMAT = 'yomiage-guilds/1' as const;

type Row = Record<string, unknown>;

export interface GuildExport {
  format: typeof EXPORT_FORMAT;
  /** The database's migration version: an import needs the same (same bot version on both hosts). */
  schemaVersion: number;
  exportedAt: string;
  guilds: string[];
  tables: Record<string, Row[]>;
}

/** The guild ids with any row in this database. */
function guildsIn(db: Db): string[] {
  const union = MOVED_TABLES.map((t) => `SELECT guild_id FROM ${t}`).join(' UNION ');
  return (db.prepare(`SELECT guild_id FROM (${union}) ORDER BY guild_id`).pluck().all() as string[]).filter((g) => g !== '');
}

/** The guilds of shards `ids` out of `count` that have rows here. */
export function guildsOfShards(db: Db, ids: readonly number[], count: number): string[] {
  return guildsIn(db).filter((g) => /^\d+$/.test(g) && ids.includes(shardOf(g, count)));
}

/** Every row of `guilds`, read in one transaction (the bot may keep running meanwhile). */
export function exportGuilds(db: Db, guilds: readonly string[], now = new Date()): GuildExport {
  return db.transaction(() => {
    const tables: Record<string, Row[]> = {};
    const marks = guilds.map(() => '?').join(', ');
    for (const t of MOVED_TABLES) {
      const order = ORDER[t] ? ` ORDER BY ${ORDER[t]}` : '';
      tables[t] =
        guilds.length === 0 ? [] : (db.prepare(`SELECT * FROM ${t} WHERE guild_id IN (${marks})${order}`).all(...guilds) as Row[]);
    }
    const keys = [...new Set(tables.character_ledger!.map((r) => r.audio_key).filter((k): k is string => typeof k === 'string'))];
    tables.paid_audio = keys.flatMap((k) => db.prepare('SELECT * FROM paid_audio WHERE audio_key = ?').all(k) as Row[]);
    return { format: EXPORT_FORMAT, schemaVersion: schemaVersion(db), exportedAt: now.toISOString(), guilds: [...guilds], tables };
  })();
}

/**
 * Writes an export into this database in one transaction: refused when it is not exactly what
 * `exportGuilds` writes for this schema version (every problem named by table, row and field), or
 * when any of its guilds already has rows here; nothing is written then. The ledger's running
 * totals (member, server, account) grow by the imported rows.
 */
export function importGuilds(db: Db, file: unknown): { guilds: number; rows: number } {
  const head = file as Partial<GuildExport> | null;
  if (head?.format !== EXPORT_FORMAT) {
    const theirs = JSON.stringify(head?.format)?.slice(0, 60);
    throw new TransferError('not_an_export', { message: `not a guild export (format ${theirs}, expected ${EXPORT_FORMAT})` });
  }
  const here = schemaVersion(db);
  if (head.schemaVersion !== here) {
    const theirs = JSON.stringify(head.schemaVersion)?.slice(0, 20);
    throw new TransferError('schema_mismatch', {
      message: `the export is of database version ${theirs}, this database is at ${here}: run the same bot version on both hosts`,
    });
  }
  const checked = exportSchema(db, [...MOVED_TABLES, 'paid_audio']).safeParse(file);
  if (!checked.success) {
    throw new TransferError('invalid_export', { message: `not what export writes:\n${describeIssues(checked.error.issues)}` });
  }
  const data = checked.data as GuildExport;
  let rows = 0;
  db.transaction(() => {
    const present = new Set(guildsIn(db));
    const clash = data.guilds.filter((g) => present.has(g));
    if (clash.length > 0)
      throw new TransferError('guild_exists', {
        message: `guild ${clash.join(', ')} already has rows in this database; remove them first (npm run guild -- remove ${clash.join(' ')})`,
      });
    for (const t of [...MOVED_TABLES, 'paid_audio'] as const) {
      for (const row of data.tables[t] ?? []) {
        const own = OWN_KEYS[t as keyof typeof OWN_KEYS];
        // The keys are this database's own column names: the schema accepts no others.
        const columns = Object.keys(row).filter((c) => c !== own);
        const conflict = t === 'paid_audio' ? ' ON CONFLICT DO NOTHING' : '';
        db.prepare(`INSERT INTO ${t} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})${conflict}`).run(
          ...columns.map((c) => row[c] as never),
        );
        rows += 1;
      }
    }
    moveTotals(db, data.tables.character_ledger ?? [], +1);
  }).immediate();
  return { guilds: data.guilds.length, rows };
}

/** Deletes every row of `guilds` (after they moved to another host); the running totals shrink with them. */
export function removeGuilds(db: Db, guilds: readonly string[]): { rows: number } {
  let rows = 0;
  db.transaction(() => {
    const marks = guilds.map(() => '?').join(', ');
    if (guilds.length === 0) return;
    const ledger = db.prepare(`SELECT * FROM character_ledger WHERE guild_id IN (${marks})`).all(...guilds) as Row[];
    moveTotals(db, ledger, -1);
    for (const t of [...MOVED_TABLES].reverse()) rows += db.prepare(`DELETE FROM ${t} WHERE guild_id IN (${marks})`).run(...guilds).changes;
    db.prepare(`DELETE FROM ledger_totals WHERE guild_id IN (${marks}) AND reserved = 0 AND charged = 0 AND uncertain = 0`).run(...guilds);
  }).immediate();
  return { rows };
}

function schemaVersion(db: Db): number {
  return (db.prepare('SELECT MAX(version) FROM schema_migrations').pluck().get() as number | null) ?? 0;
}

/** Adds (sign 1) or subtracts (-1) ledger rows to the running totals of their member, server and the account. */
function moveTotals(db: Db, ledger: readonly Row[], sign: 1 | -1): void {
  const upsert = db.prepare(
    `INSERT INTO ledger_totals (guild_id, user_id, period_start, endpoint, reserved, charged, uncertain) VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (guild_id, user_id, period_start, endpoint) DO UPDATE SET
       reserved = reserved + excluded.reserved, charged = charged + excluded.charged, uncertain = uncertain + excluded.uncertain`,
  );
  const sub = db.prepare(
    `UPDATE ledger_totals SET reserved = reserved - ?, charged = charged - ?, uncertain = uncertain - ?
     WHERE guild_id = ? AND user_id = ? AND period_start = ? AND endpoint = ?`,
  );
  for (const r of ledger) {
    const state = r.state as string;
    if (state === 'released') continue;
    const chars = Number(r.chars);
    const d = {
      reserved: state === 'reserved' ? chars : 0,
      charged: state === 'charged' ? chars : 0,
      uncertain: state === 'uncertain' ? chars : 0,
    };
    for (const [guild, user] of [
      [r.guild_id, r.user_id],
      [r.guild_id, ''],
      ['', ''],
    ] as const) {
      if (sign > 0)
        upsert.run(guild as string, user as string, r.period_start as number, r.endpoint as string, d.reserved, d.charged, d.uncertain);
      else sub.run(d.reserved, d.charged, d.uncertain, guild as string, user as string, r.period_start as number, r.endpoint as string);
    }
  }
}
