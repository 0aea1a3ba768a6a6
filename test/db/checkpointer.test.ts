// WAL checkpoints never run inside a commit: the bot's connection has the automatic checkpoint off
// and the checkpointer copies the WAL into the database file small and often instead, on a thread of
// its own (voice on the main thread) or on a timer on the main thread (voice in worker threads). An
// operator notices a checkpointer that does nothing as a WAL file that only grows and a database
// file that stays empty until the bot stops.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startCheckpointer } from '../../src/db/checkpointer.ts';
import { openDatabase, type Db } from '../../src/db/database.ts';

let dir: string;
let file: string;
let db: Db;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'checkpointer-'));
  file = join(dir, 'bot.sqlite3');
  db = openDatabase(file);
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.exec('CREATE TABLE filler (body BLOB)');
});

afterEach(() => {
  if (db.open) db.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Writes about 2 MB in 64 commits (well over 100 WAL pages, under the automatic checkpoint's 1,000). */
function write(): void {
  const insert = db.prepare('INSERT INTO filler (body) VALUES (?)');
  for (let i = 0; i < 64; i += 1) insert.run(Buffer.alloc(32_768, i));
}

const databaseBytes = () => statSync(file).size;

describe.each([
  ['a worker thread (voice on the main thread)', true],
  ['a timer on the main thread (voice in worker threads)', false],
])('the WAL checkpointer on %s', (_name, thread) => {
  it('GIVEN commits THEN no commit checkpoints, and the checkpointer copies the WAL into the database file within its interval', async () => {
    const checkpointer = startCheckpointer(db, file, { intervalMs: 20, thread });
    const before = databaseBytes();
    write();
    // The commits themselves copied nothing (automatic checkpoint off on this connection).
    expect(databaseBytes() - before).toBeLessThan(1_000_000);
    await vi.waitFor(() => expect(databaseBytes() - before).toBeGreaterThan(2_000_000), { timeout: 2_000, interval: 10 });
    await checkpointer.stop();
    // Stopped: the automatic checkpoint is back for the connection.
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
  });
});
