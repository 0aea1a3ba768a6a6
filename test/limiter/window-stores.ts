import { tempDb } from '../support/temp-db.ts';
import { MemoryWindowStore, SqliteWindowStore, type WindowStore } from '../../src/tts/limiter/window.ts';

export interface StoreFixture {
  store: WindowStore;
  close(): void;
}

/** Every WindowStore implementation, for contract suites (the same contract suite runs against each). */
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
