// Rows are mapped from snake_case to camelCase in one place per table (as yuudachi's
// transformCase does): a table module declares its record type once, its row type follows from it
// (`RowOf`), and `rowMapping` converts both ways, naming only the columns stored differently
// (0/1 for a boolean, JSON text, NULL for an absent optional field).

type Snake<S extends string> = S extends `${infer H}${infer T}` ? `${H extends Lowercase<H> ? H : `_${Lowercase<H>}`}${Snake<T>}` : S;
type Stored<V> = undefined extends V ? Exclude<V, undefined> | null : V;

/**
 * The row SQLite returns for record type `T`: snake_case columns, an optional field as a nullable
 * column; `Override` gives the stored type of the fields stored differently (by their field names).
 */
export type RowOf<T, Override = object> = {
  [K in keyof T & string as K extends keyof Override ? never : Snake<K>]-?: Stored<T[K]>;
} & { [K in keyof Override & string as Snake<K>]: Override[K] };

/** How a field whose column type differs is stored. */
export interface Codec<V = never, C = never> {
  read(column: C): V;
  write(value: V): C;
}

/** A 0/1 INTEGER column (SQLite has no boolean). */
export const bool: Codec<boolean, number> = { read: (v) => v === 1, write: (v) => (v ? 1 : 0) };

/** A TEXT column holding JSON data (`undefined` is stored as JSON null). */
export const json: Codec<unknown, string> = { read: (v) => JSON.parse(v) as unknown, write: (v) => JSON.stringify(v ?? null) ?? 'null' };

export interface RowMapping<T, R> {
  fromRow(row: R): T;
  toRow(record: T): R;
}

const snakeCache = new Map<string, string>();
const camelCache = new Map<string, string>();
const snake = (field: string) =>
  snakeCache.get(field) ??
  snakeCache
    .set(
      field,
      field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`),
    )
    .get(field)!;
const camel = (column: string) =>
  camelCache.get(column) ??
  camelCache
    .set(
      column,
      column.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()),
    )
    .get(column)!;

/**
 * Both directions of one table's mapping. Columns map to fields by name (`text_hash` <->
 * `textHash`); `codecs` converts the fields stored differently. A NULL column reads as an absent
 * field when the field is listed in `optional`, and an absent field writes NULL.
 */
export function rowMapping<T extends object, R extends object>(
  options: { codecs?: { [K in keyof T]?: Codec<Exclude<T[K], undefined>, unknown> }; optional?: readonly (keyof T & string)[] } = {},
): RowMapping<T, R> {
  const codecs = (options.codecs ?? {}) as Record<string, Codec<unknown, unknown> | undefined>;
  const optional = new Set<string>(options.optional ?? []);
  return {
    fromRow(row) {
      const out: Record<string, unknown> = {};
      for (const [column, value] of Object.entries(row)) {
        const field = camel(column);
        if (value === null && optional.has(field)) continue;
        const codec = codecs[field];
        out[field] = codec ? codec.read(value) : value;
      }
      return out as T;
    },
    toRow(record) {
      const out: Record<string, unknown> = {};
      for (const [field, value] of Object.entries(record)) {
        const codec = codecs[field];
        out[snake(field)] = value === undefined && optional.has(field) ? null : codec ? codec.write(value) : value;
      }
      for (const field of optional) if (!(field in record)) out[snake(field)] = null;
      return out as R;
    },
  };
}

/** Drops keys whose value is `undefined`, so a patch `{voice: undefined}` does not erase a setting. */
export function definedOnly<T extends object>(patch: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) as { [K in keyof T]?: Exclude<T[K], undefined> };
}
