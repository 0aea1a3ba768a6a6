import { z } from 'zod';
import type { Db } from '../db/database.ts';

// What `npm run guild -- export` writes, as a zod schema built from this database's own tables
// (the import requires the same schema version, so the same columns): an import takes nothing
// else. Column names come from here, never from the file's keys, and values are checked before
// any is written: types, NULLs, and no negative counts or times (a negative ledger row would give
// characters back to a budget).

/** Integer columns that may be negative: the service's int32 seed. Every other integer is a count, a time or an id. */
const SIGNED = new Set(['advanced_jobs.seed']);

/** Values with a fixed set of meanings the budgets rely on (the tables' CHECKs say the same). */
const ENUMS: Record<string, readonly [string, ...string[]]> = {
  'character_ledger.state': ['reserved', 'charged', 'uncertain', 'released'],
  'character_ledger.endpoint': ['standard', 'advanced'],
  'generation_history.endpoint': ['standard', 'advanced'],
};

interface ColumnInfo {
  name: string;
  type: string;
  notnull: number;
  pk: number;
}

/** The message for a wrong value, or "missing" when the field is not there. */
const need = (what: string) => ({ error: (issue: { input?: unknown }) => (issue.input === undefined ? 'missing' : what) });

/** The zod type of one column of `table`, from its declared type (the tables are STRICT). */
function columnSchema(table: string, c: ColumnInfo): z.ZodType {
  const key = `${table}.${c.name}`;
  const enumValues = ENUMS[key];
  let type: z.ZodType;
  if (enumValues) type = z.enum(enumValues, need(`must be one of ${enumValues.map((v) => JSON.stringify(v)).join(', ')}`));
  else if (c.type === 'INTEGER') {
    const int = z.int(need('must be a whole number'));
    type = SIGNED.has(key) ? int : int.min(0, { error: 'must not be negative' });
  } else if (c.type === 'REAL') type = z.number(need('must be a number'));
  else if (c.type === 'TEXT') type = z.string(need('must be a string'));
  else throw new Error(`column ${key} has a type the guild export does not carry: ${c.type}`);
  // An INTEGER PRIMARY KEY is never NULL even without NOT NULL.
  return c.notnull || c.pk ? type : type.nullable();
}

/** One row of `table`: exactly its columns. */
function rowSchema(db: Db, table: string): z.ZodType {
  const columns = db.prepare('SELECT name, type, "notnull", pk FROM pragma_table_info(?) ORDER BY cid').all(table) as ColumnInfo[];
  return z.strictObject(Object.fromEntries(columns.map((c) => [c.name, columnSchema(table, c)])));
}

/** The export's schema for this database: `format` and `schemaVersion` are checked before (their own errors). */
export function exportSchema(db: Db, tables: readonly string[]) {
  return z
    .strictObject({
      format: z.string(),
      schemaVersion: z.number(),
      exportedAt: z.iso.datetime({ error: 'must be a date and time (ISO 8601)' }),
      guilds: z.array(z.string().regex(/^\d{1,20}$/, 'must be a guild id (digits)')),
      tables: z.strictObject(Object.fromEntries(tables.map((t) => [t, z.array(rowSchema(db, t))]))),
    })
    .superRefine((data, ctx) => {
      const listed = new Set(data.guilds);
      for (const [table, rows] of Object.entries(data.tables as Record<string, Array<{ guild_id?: unknown }>>)) {
        rows.forEach((row, i) => {
          if ('guild_id' in row && !listed.has(String(row.guild_id))) {
            ctx.addIssue({ code: 'custom', path: ['tables', table, i, 'guild_id'], message: 'a guild the export does not list' });
          }
        });
      }
    });
}

/** Where an issue is, for the operator: "character_ledger row 3, chars", "tables", "guilds[2]". */
function placeOf(path: readonly PropertyKey[]): string {
  if (path[0] === 'tables' && path.length >= 2) {
    const [, table, row, field] = path;
    if (row === undefined) return `table ${String(table)}`;
    return `${String(table)} row ${Number(row) + 1}${field === undefined ? '' : `, field ${String(field)}`}`;
  }
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i ? '.' : ''}${String(p)}`)).join('') || 'the file';
}

/** Each problem on a line of its own, naming the table, row and field; at most `max` (then how many more). */
export function describeIssues(issues: readonly z.core.$ZodIssue[], max = 10): string {
  const lines = issues.slice(0, max).map((issue) => {
    if (issue.code !== 'unrecognized_keys') return `  ${placeOf(issue.path)}: ${issue.message}`;
    const kind = issue.path.length === 1 && issue.path[0] === 'tables' ? 'table' : 'field';
    const what = `unknown ${kind}(s) ${issue.keys.map((k) => JSON.stringify(k.slice(0, 60))).join(', ')}`;
    return `  ${placeOf(issue.path)}: ${what}`;
  });
  if (issues.length > max) lines.push(`  ... and ${issues.length - max} more`);
  return lines.join('\n');
}
