import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, type Db } from '../../src/db/database.ts';
import { MemoryWindowStore, SqliteWindowStore, type WindowStore } from '../../src/tts/limiter/window.ts';

export interface StoreFixture {
  store: WindowStore;
  close(): void;
}

/** Every WindowStore implementation, for contract suites (STYLE.md #12). */
export const storeFactories: { name: string; make: () => StoreFixture }[] = [
  { name: 'MemoryWindowStore', make: () => ({ store: new MemoryWindowStore(), close: () => {} }) },
  {
    name: 'SqliteWindowStore',
    make: () => {
      const { db, close } = tempDb();
      return { store: new SqliteWindowStore({ db }), close };
    },
  },
];

/** A migrated SQLite file in a fresh temp dir. */
export function tempDb(): { db: Db; dir: string; file: string; close(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'limiter-'));
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
