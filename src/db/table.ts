import type { Statement } from 'better-sqlite3';
import type { Db } from './database.ts';
import { definedOnly, type RowMapping } from './rows.ts';
import { writeTx } from './write.ts';
import type { Patch } from '../domain/patch.ts';
import { systemClock, type Clock } from '../util/clock.ts';

/**
 * What every table module holds: the connection, the clock that stamps its rows, and its
 * statements, prepared once by the module's own `statements(db)`. Writes go through
 * `write`: one IMMEDIATE transaction that never waits for a lock on this thread (src/db/write.ts).
 */
export abstract class Repo<S> {
  protected readonly db: Db;
  protected readonly clock: Clock;
  protected readonly sql: S;

  constructor(db: Db, clock: Clock | undefined, statements: (db: Db) => S) {
    this.db = db;
    this.clock = clock ?? systemClock;
    this.sql = statements(db);
  }

  /** Runs `fn` in one write transaction; `fn` must only touch the database (it may run more than once). */
  protected write<T>(fn: () => T): Promise<T> {
    return writeTx(this.db, fn);
  }
}

/** The statements of a table of one row per guild: its row by guild id, and an upsert of a whole row. */
interface GuildRowStatements<R> {
  select: Statement<[string], R>;
  upsert: Statement<[R]>;
}

/**
 * A table of one row per guild (settings, controls): read with the defaults of a guild that never
 * changed one, changed field by field in one IMMEDIATE read-modify-write, so two processes' partial
 * updates do not clobber each other. `updatedAt` is null while the guild has no row.
 */
export abstract class GuildRowRepo<T extends { guildId: string; updatedAt: number | null }, R> extends Repo<GuildRowStatements<R>> {
  readonly #rows: RowMapping<T & { updatedAt: number }, R>;
  readonly #defaults: Omit<T, 'guildId' | 'updatedAt'>;

  constructor(
    db: Db,
    clock: Clock | undefined,
    statements: (db: Db) => GuildRowStatements<R>,
    rows: RowMapping<T & { updatedAt: number }, R>,
    defaults: Omit<T, 'guildId' | 'updatedAt'>,
  ) {
    super(db, clock, statements);
    this.#rows = rows;
    this.#defaults = defaults;
  }

  /** The guild's row, or the defaults for a guild that never changed anything. */
  get(guildId: string): T {
    const row = this.sql.select.get(guildId);
    return row ? this.#rows.fromRow(row) : ({ guildId, ...this.#defaults, updatedAt: null } as T);
  }

  /** Changes only the given fields (an `undefined` value leaves the field as it is); returns the result. */
  update(guildId: string, patch: Patch<T>): Promise<T> {
    return this.write(() => {
      const next = { ...this.get(guildId), ...definedOnly(patch), guildId, updatedAt: this.clock.now() } as T & { updatedAt: number };
      this.sql.upsert.run(this.#rows.toRow(next));
      return next;
    });
  }
}
