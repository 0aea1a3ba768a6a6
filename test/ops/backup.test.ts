import Database from 'better-sqlite3';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../../src/db/database.ts';
import { backupDatabase, defaultBackupFile } from '../../src/ops/backup.ts';
import { BackupError } from '../../src/ops/errors.ts';

// `npm run backup` (src/ops/backup.ts) on a database another connection keeps writing, as the bot
// does: the copy is the database at one instant, whole transactions only, with what is still in
// the write-ahead log, and it is never half-written or written over a file. The bot taking a copy
// while it runs, and starting again on a restored one: test/bot/npm-start-backup.test.ts.

let dataDir: string;
let db: Db;
beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'backup-'));
  db = openDatabase(join(dataDir, 'bot.sqlite3'));
  // One import as the dictionary writes it: the whole set replaced in one transaction.
  db.exec('CREATE TABLE generations (generation INTEGER NOT NULL, item INTEGER NOT NULL)');
});
afterEach(() => {
  db.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const rowsOf = (file: string) => {
  const copy = new Database(file, { readonly: true });
  try {
    return copy.prepare('SELECT generation, COUNT(*) AS n FROM generations GROUP BY generation').all() as {
      generation: number;
      n: number;
    }[];
  } finally {
    copy.close();
  }
};

// Another connection (as the bot's process is) replacing all 500 rows with the next generation,
// one transaction each, as fast as it can; `committed[0]` is the last generation it committed.
const WRITER = `
const { workerData, parentPort } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma('busy_timeout = 5000');
const committed = new Int32Array(workerData.shared);
const insert = db.prepare('INSERT INTO generations (generation, item) VALUES (?, ?)');
const replace = db.transaction((g) => {
  db.prepare('DELETE FROM generations').run();
  for (let i = 0; i < 500; i += 1) insert.run(g, i);
});
let g = 0;
let stop = false;
parentPort.on('message', () => (stop = true));
(function write() {
  if (stop) { db.close(); parentPort.postMessage('stopped'); return; }
  g += 1;
  replace(g);
  Atomics.store(committed, 0, g);
  setImmediate(write);
})();
`;

describe('npm run backup', () => {
  it('GIVEN commits still in the write-ahead log (the bot checkpoints on its own) THEN the copy holds them, where a cp of bot.sqlite3 does not', () => {
    db.pragma('wal_autocheckpoint = 0');
    db.prepare('INSERT INTO generations (generation, item) VALUES (1, 1), (1, 2)').run();
    const naive = join(dataDir, 'cp.sqlite3');
    copyFileSync(join(dataDir, 'bot.sqlite3'), naive);
    expect(() => rowsOf(naive)).toThrow(/no such table/);

    const made = backupDatabase(dataDir, join(dataDir, 'copy.sqlite3'));
    expect(rowsOf(made.file)).toEqual([{ generation: 1, n: 2 }]);
    // Owner-only, as the database: it holds queued chat text and interaction tokens.
    expect((statSync(made.file).mode & 0o777).toString(8)).toBe('600');
    expect(made.schema).toBe(db.prepare('SELECT MAX(version) FROM schema_migrations').pluck().get());
  });

  it('GIVEN another connection replacing 500 rows in one transaction after another THEN each of 8 copies holds one whole transaction, none older than the last committed before it began', async () => {
    const shared = new SharedArrayBuffer(4);
    const committed = new Int32Array(shared);
    const driver = (await import('node:module')).createRequire(import.meta.url).resolve('better-sqlite3');
    const writer = new Worker(WRITER, { eval: true, workerData: { file: join(dataDir, 'bot.sqlite3'), driver, shared } });
    try {
      while (Atomics.load(committed, 0) < 3) await new Promise((resolve) => setTimeout(resolve, 5));
      const copies: { before: number; rows: { generation: number; n: number }[] }[] = [];
      for (let k = 0; k < 8; k += 1) {
        const before = Atomics.load(committed, 0);
        const made = backupDatabase(dataDir, join(dataDir, 'backups', `copy-${k}.sqlite3`));
        copies.push({ before, rows: rowsOf(made.file) });
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      for (const { before, rows } of copies) {
        expect(rows).toHaveLength(1);
        expect(rows[0]!.n).toBe(500);
        expect(rows[0]!.generation).toBeGreaterThanOrEqual(before);
      }
      // The writer went on while the copies were taken: they are not one idle moment eight times.
      expect(new Set(copies.map((c) => c.rows[0]!.generation)).size).toBeGreaterThan(1);
    } finally {
      const stopped = new Promise((resolve) => writer.once('message', resolve));
      writer.postMessage('stop');
      await stopped;
      await writer.terminate();
    }
  });

  it('GIVEN no database in DATA_DIR THEN it says so and writes nothing', () => {
    const empty = mkdtempSync(join(tmpdir(), 'backup-empty-'));
    try {
      const error = catchBackup(() => backupDatabase(empty, defaultBackupFile(empty, new Date('2026-11-28T17:00:00Z'))));
      expect(error).toMatchObject({
        code: 'no_database',
        message: `no database at ${join(empty, 'bot.sqlite3')}: check DATA_DIR; nothing was written`,
      });
      expect(readdirSync(empty)).toEqual([]);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('GIVEN a file already at the target THEN it is left as it was and the backup is refused', () => {
    const target = join(dataDir, 'keep.sqlite3');
    writeFileSync(target, 'an earlier backup');
    expect(catchBackup(() => backupDatabase(dataDir, target))).toMatchObject({ code: 'target_exists' });
    expect(readFileSync(target, 'utf8')).toBe('an earlier backup');
  });

  it('GIVEN a target that cannot be written THEN the backup fails naming it, and no partial file is left', () => {
    writeFileSync(join(dataDir, 'not-a-folder'), '');
    const target = join(dataDir, 'not-a-folder', 'copy.sqlite3');
    const error = catchBackup(() => backupDatabase(dataDir, target));
    expect(error).toMatchObject({ code: 'copy_failed' });
    expect(error.message).toContain(target);
    expect(readdirSync(dataDir).filter((name) => name.includes('partial'))).toEqual([]);
    expect(existsSync(target)).toBe(false);
  });

  it('GIVEN the default name THEN a backup made at 17:00:05 UTC goes to DATA_DIR/backups/bot-20261128T170005Z.sqlite3', () => {
    expect(defaultBackupFile('/var/lib/yomiage', new Date('2026-11-28T17:00:05.123Z'))).toBe(
      '/var/lib/yomiage/backups/bot-20261128T170005Z.sqlite3',
    );
  });

  it('has one distinct default message per code', () => {
    expect(Object.keys(BackupError.messages).sort()).toEqual(['copy_damaged', 'copy_failed', 'no_database', 'target_exists']);
    expect(new Set(Object.values(BackupError.messages)).size).toBe(4);
  });
});

function catchBackup(make: () => unknown): BackupError {
  try {
    make();
  } catch (error) {
    if (error instanceof BackupError) return error;
    throw error;
  }
  throw new Error('the backup was made');
}
