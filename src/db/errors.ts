import { codedError, type CodedErrorOptions } from '@yomiage/coded-error';

// Errors of src/db: one module, stable codes (docs/architecture.md, "Errors"). Messages name
// versions and counts, never a row's content.

/** Base error of src/db; `code` is stable. */
export class DbError extends codedError({
  migrations_not_contiguous: 'migrations must be numbered 001, 002, ... without gaps',
  schema_too_new: 'the database schema is newer than this code knows; refusing to start. Run a newer version of the bot.',
  db_busy: 'the database stayed locked by another process',
  account_pool_unavailable:
    'the shared account ledger (ACCOUNT_LEDGER_URL) did not answer; nothing is sent while it cannot count the characters',
  rate_store_unavailable: 'the shared rate window (RATE_STORE_URL) did not answer; nothing is sent while it cannot count the requests',
}) {
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

/** A PostgreSQL store shared by several hosts did not answer: what needs it fails closed. */
export class SharedStoreError extends DbError {
  override name = 'SharedStoreError';
  constructor(code: 'account_pool_unavailable' | 'rate_store_unavailable', options: CodedErrorOptions = {}) {
    super(code, options);
  }
}
