import type { Db } from './database.ts';
import { writeTx } from './write.ts';
import { systemClock, type Clock } from '../util/clock.ts';

/**
 * What every table module holds: the connection, the clock that stamps its rows, and its
 * statements, prepared once (STYLE #13) by the module's own `statements(db)`. Writes go through
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
