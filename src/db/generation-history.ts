import { createHash } from 'node:crypto';
import type { Db } from './database.ts';
import { Repo } from './table.ts';
import { rowMapping, type RowOf } from './rows.ts';
import { type Endpoint } from '../billing/ledger.ts';
import type { Clock } from '../util/clock.ts';

// The generation_history table (migrations/001): what was generated, for audit; never the text
// itself, only its sha256.

interface HistoryEntry {
  id: number;
  /** The service's generation history id (spec: `pk`); null when the service gave none. */
  pk: number | null;
  endpoint: Endpoint;
  url: string | null;
  voice: string;
  characters: number;
  /** sha256 hex of the text; the text itself is never stored. */
  textHash: string;
  guildId: string;
  userId: string;
  createdAt: number;
}

export interface NewHistoryEntry extends Omit<HistoryEntry, 'id' | 'textHash' | 'createdAt'> {
  /** Hashed here; never stored. */
  text: string;
}

type Row = RowOf<HistoryEntry>;
const rows = rowMapping<HistoryEntry, Row>();

/** sha256 hex of a text, as stored in the history (privacy: the text itself is not kept). */
export function hashText(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

const statements = (db: Db) => ({
  insert: db.prepare<[Omit<Row, 'id'>]>(`
    INSERT INTO generation_history (pk, endpoint, url, voice, characters, text_hash, guild_id, user_id, created_at)
    VALUES (@pk, @endpoint, @url, @voice, @characters, @text_hash, @guild_id, @user_id, @created_at)`),
});

export class HistoryRepo extends Repo<ReturnType<typeof statements>> {
  constructor(db: Db, clock?: Clock) {
    super(db, clock, statements);
  }

  /** Records one generated audio. */
  async record(entry: NewHistoryEntry): Promise<HistoryEntry> {
    const { text, ...fields } = entry;
    const { id: _id, ...row } = rows.toRow({ ...fields, id: 0, textHash: hashText(text), createdAt: this.clock.now() });
    const id = await this.write(() => Number(this.sql.insert.run(row).lastInsertRowid));
    return rows.fromRow({ ...row, id });
  }
}
