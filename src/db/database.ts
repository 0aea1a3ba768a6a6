import Database from 'better-sqlite3';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { makePrivate, type ModeChange } from '../util/private-files.ts';
import { MigrationError } from './errors.ts';

export type Db = Database.Database;

/** The project's migrations/ folder. */
const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'migrations');

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** Reads `NNN_name.sql` files in version order; a gap or a duplicate version is a packaging bug. */
export function loadMigrations(dir = MIGRATIONS_DIR): Migration[] {
  const migrations = readdirSync(dir)
    .filter((file) => /^\d{3}_[\w-]+\.sql$/.test(file))
    .map((file) => ({
      version: Number(file.slice(0, 3)),
      name: file.slice(4, -4),
      sql: readFileSync(join(dir, file), 'utf8'),
    }))
    .sort((a, b) => a.version - b.version);
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) {
      throw new MigrationError('migrations_not_contiguous', {
        message: `migrations must be numbered 001, 002, ... without gaps (found ${m.version} at position ${i + 1})`,
      });
    }
  });
  return migrations;
}

/**
 * Applies every migration newer than the database, each in its own transaction and recorded in
 * `schema_migrations`. Refuses a database whose version is newer than the code (forward-only).
 * Returns the versions applied.
 */
export function migrate(db: Db, migrations = loadMigrations()): number[] {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at INTEGER NOT NULL
  )`);
  const current = (db.prepare('SELECT MAX(version) AS v FROM schema_migrations').get() as { v: number | null }).v ?? 0;
  const latest = migrations.at(-1)?.version ?? 0;
  if (current > latest) {
    throw new MigrationError('schema_too_new', {
      message: `database schema version ${current} is newer than this code knows (${latest}); refusing to start. Run a newer version of the bot.`,
    });
  }
  const record = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
  const applied: number[] = [];
  for (const m of migrations) {
    if (m.version <= current) continue;
    // IMMEDIATE: two processes starting at once must not both apply the same migration.
    db.transaction(() => {
      const done = db.prepare('SELECT 1 FROM schema_migrations WHERE version = ?').get(m.version);
      if (done) return;
      db.exec(m.sql);
      record.run(m.version, m.name, Date.now());
      applied.push(m.version);
    }).immediate();
  }
  return applied;
}

/**
 * Sets the connection to fail fast on a lock another process holds: writes are retried
 * asynchronously by src/db/write.ts instead of blocking the thread that drives the audio.
 */
export function failFastOnLock(db: Db): void {
  db.pragma('busy_timeout = 0');
}

interface OpenOptions {
  /** Apply pending migrations (default true). */
  migrate?: boolean;
  migrations?: Migration[];
  /** Told the database files whose wider modes were narrowed to owner-only (or could not be), once at open. */
  onModes?: (changes: ModeChange[]) => void;
}

/**
 * Opens (creating if needed, owner-only: files 0600, a new directory 0700) the SQLite database:
 * WAL, foreign keys, migrated. Once open, a write that finds another process's lock fails at once
 * instead of blocking the thread (src/db/write.ts retries it asynchronously), so a lock held
 * elsewhere can never stall the audio loop.
 */
export function openDatabase(file: string, options: OpenOptions = {}): Db {
  if (file !== ':memory:') {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    // Owner-only before SQLite opens it: SQLite creates the -wal and -shm files with the database file's mode.
    const changes = [makePrivate(file, 'file', { create: true }), makePrivate(`${file}-wal`, 'file'), makePrivate(`${file}-shm`, 'file')];
    options.onModes?.(changes.filter((c): c is ModeChange => c !== undefined));
  }
  const db = new Database(file);
  // Start-up (before any audio plays) may wait for shards starting at the same moment.
  db.pragma('busy_timeout = 5000');
  db.pragma('journal_mode = WAL');
  db.pragma('foreign_keys = ON');
  db.pragma('synchronous = NORMAL');
  if (options.migrate ?? true) migrate(db, options.migrations);
  failFastOnLock(db);
  return db;
}
