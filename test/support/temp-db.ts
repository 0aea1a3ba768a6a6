import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, type Db } from '../../src/db/database.ts';

/** A migrated SQLite file in a fresh temp dir. */
export function tempDb(): { db: Db; dir: string; file: string; close(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'temp-db-'));
  const file = join(dir, 'bot.sqlite');
  const db = openDatabase(file);
  return {
    db,
    dir,
    file,
    close: () => {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
