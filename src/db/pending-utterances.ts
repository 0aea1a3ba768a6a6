import type { Db } from './database.ts';
import { Repo } from './table.ts';
import { json, rowMapping, type RowOf } from './rows.ts';

/** An accepted utterance as stored (migrations/003, 005, 010); the scheduler's `Utterance` fits it. */
interface PendingUtterance {
  id: string;
  guildId: string;
  userId: string;
  channelId: string;
  kind: 'auto' | 'say' | 'narrate';
  /** Chat text, kept only until the utterance is finished. */
  text: string;
  lang?: string;
  voice: string;
  speed: number;
  pitch: number;
  /** The advanced (Beta) parameters, as JSON data. */
  advanced?: unknown;
  /** The bot's delivery data (ids, not live objects), as JSON data. */
  meta?: unknown;
  /** Who may hear or read it (`voice:<id>` or `text:<id>`): merged only within it after a restore too. */
  audience?: string;
  /** The gain it is played at in voice (migrations/020); absent = 1. */
  volume?: number;
  enqueuedAt: number;
}

/** One write of the journal, applied in order. */
export type PendingWrite = { kind: 'add'; utterance: PendingUtterance; savedAt: number } | { kind: 'remove'; ids: readonly string[] };

type Stored = PendingUtterance & { seq: number; savedAt: number; restores: number };
type Row = RowOf<Stored, { advanced: string | null; meta: string | null }>;
const rows = rowMapping<Stored, Row>({
  codecs: { advanced: json, meta: json },
  optional: ['lang', 'advanced', 'meta', 'audience', 'volume'],
});

const statements = (db: Db) => ({
  insert: db.prepare<[Omit<Row, 'seq' | 'restores'>]>(`
    INSERT OR REPLACE INTO pending_utterances
      (id, guild_id, user_id, channel_id, kind, text, lang, voice, speed, pitch, advanced, meta, audience, volume, enqueued_at, saved_at)
    VALUES (@id, @guild_id, @user_id, @channel_id, @kind, @text, @lang, @voice, @speed, @pitch, @advanced, @meta, @audience, @volume,
      @enqueued_at, @saved_at)`),
  delete: db.prepare<[string]>('DELETE FROM pending_utterances WHERE id = ?'),
  all: db.prepare<[], Row>('SELECT * FROM pending_utterances ORDER BY seq'),
  bump: db.prepare<[number]>('UPDATE pending_utterances SET restores = restores + 1 WHERE seq = ?'),
});

/**
 * The pending_utterances table: every accepted utterance from acceptance until it is finished.
 * The order of writes and when to retry them is the journal's
 * (src/speech/queue/journal.ts); this module writes them.
 */
export class PendingUtterancesTable extends Repo<ReturnType<typeof statements>> {
  constructor(db: Db) {
    super(db, undefined, statements);
  }

  /**
   * Applies `writes` in order now: one statement alone, or one IMMEDIATE transaction for more.
   * Never waits for a lock: throws SQLITE_BUSY at once while another process holds it.
   */
  applyNow(writes: readonly PendingWrite[]): void {
    const single = writes.length === 1 && (writes[0]!.kind === 'add' || writes[0]!.ids.length === 1);
    if (single) this.#apply(writes[0]!);
    else this.db.transaction(() => writes.forEach((w) => this.#apply(w))).immediate();
  }

  /** The same in one write transaction, waiting for the lock asynchronously (a shutdown). */
  apply(writes: readonly PendingWrite[]): Promise<void> {
    return this.write(() => writes.forEach((w) => this.#apply(w)));
  }

  /**
   * The utterances of the guilds `owns` accepts, in order, each counted as restored once more.
   * One IMMEDIATE transaction: what is read decides what is written, so two processes starting
   * together do not both act on a stale snapshot.
   */
  claim(owns: (guildId: string) => boolean): Promise<{ utterance: PendingUtterance; restores: number }[]> {
    return this.write(() => {
      const claimed = this.sql.all.all().filter((r) => owns(r.guild_id));
      for (const r of claimed) this.sql.bump.run(r.seq);
      return claimed.map((r) => {
        const { seq: _seq, savedAt: _savedAt, restores, ...utterance } = rows.fromRow(r);
        return { utterance, restores: restores + 1 };
      });
    });
  }

  #apply(w: PendingWrite): void {
    if (w.kind === 'remove') for (const id of w.ids) this.sql.delete.run(id);
    else {
      const { seq: _seq, restores: _restores, ...row } = rows.toRow({ ...w.utterance, savedAt: w.savedAt, seq: 0, restores: 0 });
      this.sql.insert.run(row);
    }
  }
}
