import { describe, expect, it } from 'vitest';
import { DbBusyError, DbError, MigrationError, SharedStoreError } from '../../src/db/errors.ts';

type DbErrorCode = DbError['code'];

// One row per code: [code, an error of it as the code builds it, its class name].
const TABLE: [DbErrorCode, DbError, string][] = [
  ['migrations_not_contiguous', new MigrationError('migrations_not_contiguous'), 'MigrationError'],
  ['schema_too_new', new MigrationError('schema_too_new'), 'MigrationError'],
  ['db_busy', new DbBusyError({ attempts: 3 }), 'DbBusyError'],
  ['account_pool_unavailable', new SharedStoreError('account_pool_unavailable'), 'SharedStoreError'],
  ['rate_store_unavailable', new SharedStoreError('rate_store_unavailable'), 'SharedStoreError'],
];

describe('db errors', () => {
  it('the table covers every code, each with its own default message', () => {
    expect(TABLE.map(([code]) => code).sort()).toEqual(Object.keys(DbError.messages).sort());
    expect(new Set(Object.values(DbError.messages)).size).toBe(TABLE.length);
  });

  it.each(TABLE)('GIVEN code %s THEN a DbError of that code, named for its class, with the default message', (code, error, name) => {
    expect(error).toBeInstanceOf(DbError);
    expect(error.name).toBe(name);
    expect(error.code).toBe(code);
    expect(error.message.startsWith(DbError.messages[code])).toBe(true);
    expect(code).toMatch(/^[a-z]+(_[a-z]+)*$/);
  });

  it('GIVEN a busy answer THEN DbBusyError counts the attempts and keeps the SQLite error as its cause', () => {
    const cause = Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
    const error = new DbBusyError({ attempts: 7, cause });
    expect(error).toMatchObject({ code: 'db_busy', attempts: 7, message: 'the database stayed locked by another process (7 attempts)' });
    expect(error.cause).toBe(cause);
  });

  it('GIVEN a detail THEN a MigrationError says it instead of the default', () => {
    const error = new MigrationError('schema_too_new', { message: 'database schema version 9 is newer than this code knows (5)' });
    expect(error).toMatchObject({ code: 'schema_too_new', message: 'database schema version 9 is newer than this code knows (5)' });
  });
});
