import { CodedError, type CodedErrorOptions } from '../util/coded-error.ts';

// Errors of src/db: one module, stable codes (STYLE #4, /work/brief/ERRORS.md). Messages name
// versions and counts, never a row's content.

export type DbErrorCode = 'migrations_not_contiguous' | 'schema_too_new' | 'db_busy';

/** Base error of src/db; `code` is stable. */
export class DbError extends CodedError<DbErrorCode> {
  /** Default messages, one per code (tests check every code from this table). */
  static override readonly messages: Readonly<Record<DbErrorCode, string>> = {
    migrations_not_contiguous: 'migrations must be numbered 001, 002, ... without gaps',
    schema_too_new: 'the database schema is newer than this code knows; refusing to start. Run a newer version of the bot.',
    db_busy: 'the database stayed locked by another process',
  };
  override name = 'DbError';
}

/** The migrations on disk or in the database cannot be applied (a packaging bug, or an older bot). */
export class MigrationError extends DbError {
  override name = 'MigrationError';
  constructor(code: 'migrations_not_contiguous' | 'schema_too_new', options: CodedErrorOptions = {}) {
    super(code, options);
  }
}

/** The write lock stayed taken past the write policy's deadline (src/db/write.ts). */
export class DbBusyError extends DbError {
  override name = 'DbBusyError';
  readonly attempts: number;
  constructor(options: CodedErrorOptions & { attempts: number }) {
    super('db_busy', { message: `${DbError.messages.db_busy} (${options.attempts} attempts)`, ...options });
    this.attempts = options.attempts;
  }
}
