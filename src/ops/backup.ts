import Database from 'better-sqlite3';
import { closeSync, existsSync, linkSync, mkdirSync, openSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { BackupError } from './errors.ts';

// `npm run backup`: a copy of the bot's database taken while the bot runs (docs/operating.md,
// "Backup and restore"). SQLite's VACUUM INTO reads the database in one read transaction, so the
// copy is the database as it was at one instant, with what is still in the write-ahead log, while
// the bot goes on writing (in WAL mode a reader never blocks a writer). A `cp` of bot.sqlite3 misses
// the commits still in bot.sqlite3-wal, or catches a checkpoint half-way.

interface Backup {
  /** The copy's path. */
  file: string;
  bytes: number;
  /** The copy's schema version (its last migration): a bot restoring it must be at least this version. */
  schema: number;
}

/** Where a backup made at `now` goes by default: DATA_DIR/backups/bot-<UTC time>.sqlite3. */
export function defaultBackupFile(dataDir: string, now: Date): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  return join(dataDir, 'backups', `bot-${stamp}.sqlite3`);
}

/**
 * Copies DATA_DIR/bot.sqlite3 into `file`, owner-only (it holds queued chat text and interaction
 * tokens, as the database does). The copy is made under a temporary name and takes `file`'s name
 * only once it passed SQLite's integrity check: `file` is a whole, checked copy or nothing. An
 * existing `file` is never replaced.
 */
export function backupDatabase(dataDir: string, file: string): Backup {
  const source = join(dataDir, 'bot.sqlite3');
  if (!existsSync(source) || statSync(source).size === 0)
    throw new BackupError('no_database', { message: `no database at ${source}: check DATA_DIR; nothing was written` });
  const exists = () => new BackupError('target_exists', { message: `${file} already exists: name another file; nothing was written` });
  if (existsSync(file)) throw exists();
  const partial = `${file}.partial-${process.pid}`;
  try {
    copyInto(source, partial);
    const schema = checked(partial);
    try {
      // A link, not a rename: it fails rather than replace a file that appeared meanwhile.
      linkSync(partial, file);
    } catch (error) {
      throw (error as NodeJS.ErrnoException).code === 'EEXIST' ? exists() : error;
    }
    return { file, bytes: statSync(file).size, schema };
  } catch (error) {
    if (error instanceof BackupError) throw error;
    const reason = (error as NodeJS.ErrnoException).code;
    throw new BackupError('copy_failed', {
      message: `${file}: ${BackupError.messages.copy_failed}${reason ? ` (${reason})` : ''}; nothing was written`,
      cause: error,
    });
  } finally {
    removePartial(partial);
  }
}

function removePartial(partial: string): void {
  try {
    rmSync(partial, { force: true });
  } catch {
    // its folder could not be made: there is no partial file either
  }
}

function copyInto(source: string, partial: string): void {
  mkdirSync(dirname(partial), { recursive: true, mode: 0o700 });
  // VACUUM INTO fills an empty file as it finds it: created owner-only first.
  closeSync(openSync(partial, 'wx', 0o600));
  const db = new Database(source, { fileMustExist: true });
  try {
    // The bot's writes are short: a moment's wait for one holding the lock is enough.
    db.pragma('busy_timeout = 5000');
    db.prepare('VACUUM INTO ?').run(partial);
  } finally {
    db.close();
  }
}

/** The copy's schema version, once SQLite found it whole. */
function checked(partial: string): number {
  const copy = new Database(partial, { fileMustExist: true });
  try {
    const result = copy.pragma('integrity_check', { simple: true });
    if (result !== 'ok') throw new BackupError('copy_damaged', { message: `${BackupError.messages.copy_damaged}: ${String(result)}` });
    return (copy.prepare('SELECT MAX(version) AS v FROM schema_migrations').get() as { v: number | null }).v ?? 0;
  } finally {
    copy.close();
  }
}
